#!/usr/bin/env bash
# Regenerates the driver bindings: builds the generator (go build ./gen) and
# runs it with the arguments given, after making sure a C compiler is
# installed (tools/ensure-deps.sh).
#   bash tools/generate.sh               every pinned toolkit whose headers can be had here
#                                        (fetched into the cache as needed); the others keep
#                                        their committed files, and it says which and why
#   bash tools/generate.sh -cuda DIR     pin the toolkit in DIR and generate its bindings
#                                        (needs only DIR's headers)
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/progress.sh
bash tools/ensure-deps.sh
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# The generator's build is mostly modernc.org/cc/v4's: about 50 s of CPU
# from an empty Go build cache, nothing once cached.
step "building the generator (go build ./gen; from an empty Go build cache about 40 s on 2 idle cores, up to 4 minutes on 2 busy ones; a second once cached)"
watch "building the generator" go build -o "$bin/gen" ./gen
step "running the generator${*:+ with $*}"
watch "generating" "$bin/gen" "$@"
step "done"
