#!/usr/bin/env bash
# Builds the benchmarks' binaries into .gpu/ (after tools/gpu-build.sh,
# which makes the test binaries bench/gpu-perf.sh also runs): the table
# maker and the side-by-side peers (bench/peers/build.sh: gorgonia/cu, gocu,
# cudagen, inproc, launch), which need the cached 12.4 header (go run
# ./tools/fetchheaders 12.4), and libclock.so (bench/cbench/libclock.c: the
# clock and the C launch loop for bench/pybench), and golink
# (bench/jitprobe: a JIT link from Go). The C baseline is built on
# the GPU machine, from bench/cbench; the Python bindings there are run by
# bench/pybench.
# LAYOUTS=K builds the Go peers in K more code layouts each (about 6 MB a
# layout).
#   [LAYOUTS=K] bash bench/gpu-bench-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .gpu/tags ] || { echo "bench/gpu-bench-build.sh: run bash tools/gpu-build.sh first" >&2; exit 1; }
go build -ldflags='-s -w' -o .gpu/benchtable ./bench/benchtable
go build -o .gpu/golink ./bench/jitprobe/golink
"${CC:-gcc}" -O2 -shared -fPIC -o .gpu/libclock.so bench/cbench/libclock.c
LAYOUTS=${LAYOUTS:-0} bash bench/peers/build.sh .gpu/peers
du -sh .gpu
