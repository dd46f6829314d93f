#!/usr/bin/env bash
# Installs what cudagen's scripts need beyond Go on a Debian machine: a C
# compiler (cgo, and the generator's C preprocessor configuration). apt and
# dpkg-deb, used to fetch the Debian headers, are part of Debian itself.
# The Go version it asks for is go.mod's (its toolchain line where it has
# one, else its go line).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v dpkg-deb >/dev/null 2>&1 || missing+=(dpkg)
if [ ${#missing[@]} -gt 0 ]; then
	echo "cudagen: installing ${missing[*]}" >&2
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
want=$(awk '$1 == "toolchain" { sub(/^go/, "", $2); t = $2 } $1 == "go" { g = $2 } END { print t ? t : g }' go.mod)
command -v go >/dev/null 2>&1 || { echo "cudagen: Go $want or newer is required (go.mod): https://go.dev/dl/" >&2; exit 1; }
# The go command found on PATH, before it switches to go.mod's toolchain.
have=$(cd / && GOTOOLCHAIN=local go env GOVERSION)
have=${have#go}
if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
	echo "cudagen: go.mod asks for Go $want; Go $have is installed: the go command fetches go$want (GOTOOLCHAIN=auto, the default) or stops (GOTOOLCHAIN=local; https://go.dev/dl/)" >&2
fi
