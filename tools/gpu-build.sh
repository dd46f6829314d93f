#!/usr/bin/env bash
# Builds everything the GPU machine runs into .gpu/ (git-ignored; name it in
# the device tool's carry): the GPU test binaries of every pinned toolkit,
# a -race build, the cuda package's examples, the generator, the benchmark
# table maker, and the side-by-side peers (tools/peers/build.sh: gorgonia/cu,
# gocu, cudagen), which need the cached 12.4 header (fetched if missing).
# The C baseline is built there, from tools/cbench; the Python bindings there
# are run by tools/pybench.
# LAYOUTS=K builds the Go peers in K more code layouts each (about 6 MB a
# layout: K=5 leaves .gpu over the carry limit, so carry the perf run's
# paths only, as docs/perf.md lists them).
# The GPU machine has no Go: run tools/gpu-suite.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu
# Without symbol tables and DWARF (stack traces keep their names): what the
# device tool carries is limited to 64 MiB.
ld=(-ldflags='-s -w')
tags=$(go run ./gen -list tags)
for tag in $tags; do
	go test -c "${ld[@]}" -o ".gpu/cuda_test.$tag.test" -tags "$tag" ./cuda_test
	go test -c "${ld[@]}" -o ".gpu/driver.$tag.test" -tags "$tag" ./cuda/driver
done
newest=$(go run ./gen -list newest)
go test -c "${ld[@]}" -race -o .gpu/cuda_test.race.test ./cuda_test
go test -c "${ld[@]}" -o .gpu/examples.test ./cuda
go build "${ld[@]}" -o .gpu/gen ./gen
go build "${ld[@]}" -o .gpu/benchtable ./tools/benchtable
LAYOUTS=${LAYOUTS:-0} bash tools/peers/build.sh .gpu/peers || echo "gpu-build: the peers did not build; tools/gpu-suite.sh runs without them" >&2
echo "$tags" > .gpu/tags
echo "$newest" > .gpu/newest
ls -la .gpu
du -sh .gpu
