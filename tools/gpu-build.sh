#!/usr/bin/env bash
# Builds what tools/gpu-suite.sh runs on a GPU machine (which needs no Go)
# into .gpu/ (git-ignored; copy it there with the checkout): the GPU test
# binaries of every pinned toolkit's build, a -race build, the cuda
# package's examples and the generator. bash bench/gpu-bench-build.sh adds the
# benchmarks' binaries.
#   bash tools/gpu-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu
# Without symbol tables and DWARF (stack traces keep their names): smaller
# binaries to copy.
ld=(-ldflags='-s -w')
tags=$(go run ./gen -list tags)
for tag in $tags; do
	echo "gpu-build: GPU tests, -tags $tag"
	go test -c "${ld[@]}" -o ".gpu/cuda_test.$tag.test" -tags "$tag" ./cuda_test
	go test -c "${ld[@]}" -o ".gpu/driver.$tag.test" -tags "$tag" ./cuda/driver
done
newest=$(go run ./gen -list newest)
echo "gpu-build: GPU tests with -race, examples, generator"
go test -c "${ld[@]}" -race -o .gpu/cuda_test.race.test ./cuda_test
go test -c "${ld[@]}" -o .gpu/examples.test ./cuda
go build "${ld[@]}" -o .gpu/gen ./gen
# The cached headers of the pins fetched here (NVIDIA's files, never
# committed): with them the generator on the GPU machine regenerates every
# version, the toolkit's own (13.0) from /usr/local/cuda.
cache=${CUDAGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudagen/headers}
mkdir -p .gpu/headers
for d in "$cache"/*/; do
	[ -d "$d" ] && cp -r "$d" .gpu/headers/
done
echo "$tags" > .gpu/tags
echo "$newest" > .gpu/newest
du -sh .gpu
