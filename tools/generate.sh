#!/usr/bin/env bash
# Regenerates the driver bindings: exactly `go run ./gen "$@"`, after making
# sure a C compiler is installed (tools/ensure-deps.sh).
#   bash tools/generate.sh               every pinned toolkit whose headers can be had here
#                                        (fetched into the cache as needed); the others keep
#                                        their committed files, and it says which and why
#   bash tools/generate.sh -cuda DIR     pin the toolkit in DIR and generate its bindings
#                                        (needs only DIR's headers)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/ensure-deps.sh
# go run compiles the generator first (modernc.org/cc/v4 is large): about
# 30 s of CPU from an empty Go build cache, nothing once cached.
echo "cudagen: building and running the generator (go run ./gen $*)" >&2
exec go run ./gen "$@"
