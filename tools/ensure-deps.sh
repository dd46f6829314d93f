#!/usr/bin/env bash
# Installs what cudagen's scripts need beyond Go on a Debian machine: a C
# compiler (cgo, and the generator's C preprocessor configuration). apt and
# dpkg-deb, used to fetch the Debian headers, are part of Debian itself.
set -euo pipefail
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
command -v go >/dev/null 2>&1 || { echo "cudagen: Go is required (1.24 or newer): https://go.dev/dl/" >&2; exit 1; }
