#!/usr/bin/env bash
# Runs every test that needs no GPU, for every pinned toolkit's build tag:
# build and vet under each tag, the generator's tests (facts per version,
# drift against the committed files, bad input, pinning toolkits into a copy
# of the module), 20 s of fuzzing the header parsing, the no-driver paths, the Go
# layer's own tests against a fake driver (also with -race), and the GPU
# tests, which skip without a GPU saying so. tools/gpu-suite.sh runs the
# GPU tests on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/ensure-deps.sh
export CGO_ENABLED=1
tags=$(go run ./gen -list tags)
go vet ./...
for tag in $tags; do
	echo "== build and vet with -tags $tag"
	go build -tags "$tag" ./...
	go vet -tags "$tag" ./...
done
echo "== without cgo: the module builds, and every call returns ErrNoDriver saying cgo is disabled"
CGO_ENABLED=0 go build ./...
for tag in $tags; do CGO_ENABLED=0 go build -tags "$tag" ./...; done
CGO_ENABLED=0 go vet ./...
CGO_ENABLED=0 go test -count=1 -run 'TestNoDriverEveryCall' ./cuda/driver
echo "== staticcheck (pinned; through the Go module proxy), with and without cgo"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
CGO_ENABLED=0 go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
echo "== tests (newest toolkit, no tag)"
go test -count=1 ./...
echo "== the generator's header parsing, fuzzed briefly (the seed corpus ran above; bash tools/fuzz.sh 30m for longer)"
bash tools/fuzz.sh 20s
echo "== GPU tests, verbose: without a GPU each says why it skips"
out=$(go test -count=1 -v ./cuda_test 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -E -- '^(--- |ok|FAIL|PASS)|skipping' | awk '/skipping/ && n++ >= 1 {next} {print}' || true
bash tools/perf-guard.sh # the cuda package's overhead over the generated layer, on the fake driver
echo "== the Go layer's own tests on the fake driver (cuda_test/testdata/fakecuda.c), built with -race"
go test -count=1 -race -run '^TestGoLayerOnFakeDriver$' ./cuda_test
for tag in $tags; do
	echo "== tests with -tags $tag"
	go test -count=1 -tags "$tag" ./cuda/... ./cuda_test/...
done
