#!/usr/bin/env bash
# Builds everything the GPU machine runs into .gpu/ (git-ignored; name it in
# the device tool's carry): the GPU test binaries of every pinned toolkit,
# a -race build, the cuda package's examples, the generator, and the
# benchmark table maker (the C baseline is built there, from tools/cbench).
# The GPU machine has no Go: run tools/gpu-suite.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu
tags=$(go run ./gen -list tags)
for tag in $tags; do
	go test -c -o ".gpu/cuda_test.$tag.test" -tags "$tag" ./cuda_test
	go test -c -o ".gpu/driver.$tag.test" -tags "$tag" ./cuda/driver
done
newest=$(go run ./gen -list newest)
go test -c -race -o .gpu/cuda_test.race.test ./cuda_test
go test -c -o .gpu/examples.test ./cuda
go build -o .gpu/gen ./gen
go build -o .gpu/benchtable ./tools/benchtable
echo "$tags" > .gpu/tags
echo "$newest" > .gpu/newest
ls -la .gpu
