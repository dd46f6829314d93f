#!/usr/bin/env bash
# Regenerates the driver bindings of every toolkit pinned in
# headers/manifest.json, fetching the headers into the cache as needed. A
# version whose headers cannot be had here (13.0 comes from the toolkit on the
# GPU machine) keeps its committed files, and the generator says so.
# Extra arguments go to the generator (e.g. -cuda /usr/local/cuda-12.6).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/ensure-deps.sh
go run ./gen -skip-unavailable "$@"
