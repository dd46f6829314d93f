#!/usr/bin/env bash
# Runs every test that needs no GPU, for every pinned toolkit's build tag,
# and says what it does as it goes, with the time since it started:
#   1. the pinned headers into the cache (go run ./tools/fetchheaders: the
#      first time about 1.7 GB of Debian packages, of which two headers per
#      version are kept; then a check of their sums);
#   2. go vet, untagged and under each build tag, with and without cgo (vet
#      compiles every package and its tests, so there is no separate build);
#   3. staticcheck, with and without cgo (pinned; fetched as a Go module);
#   4. every test, untagged (the generator's facts per version, drift against
#      the committed files, bad input, pinning toolkits into a copy of the
#      module; the no-driver paths; the Go layer on a fake driver; the GPU
#      tests, which skip without a GPU saying so), and the tests of the
#      packages the build tags select, under each tag;
#   5. the no-driver paths without cgo, the Go layer on the fake driver with
#      -race, 20 s of fuzzing the header parsing, and the overhead guard
#      (tools/perf-guard.sh).
# The test output is kept in a log; what is printed is each package's result,
# each skipped test with its reason, and on a failure the failing output.
# tools/gpu-suite.sh runs the GPU tests on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { printf '== [%dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
# gotest LOG ARGS...: go test -v ARGS, its output in LOG; prints the
# packages' results and the skips (with their reasons), or, on a failure,
# everything but the passing tests' chatter.
gotest() {
	local log=$logdir/$1
	shift
	if go test -v "$@" > "$log" 2>&1; then
		awk '/^(ok|FAIL|---|panic)/ && !/^--- PASS/ { print; next } /^ +--- SKIP/ { print } /^ +[^ ]+_test\.go:[0-9]+: skipping/ { print }' "$log"
	else
		grep -vE '^ *(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' "$log"
		echo "== FAIL: go test $*"
		return 1
	fi
}
bash tools/ensure-deps.sh
export CGO_ENABLED=1
tags=$(go run ./gen -list tags)
step "pinned headers into the cache (go run ./tools/fetchheaders); those that cannot be had here are skipped, saying why"
go run ./tools/fetchheaders
step "go vet, untagged and with -tags $(echo $tags | tr ' ' ,), with and without cgo"
for tag in "" $tags; do
	go vet -tags "$tag" ./...
	CGO_ENABLED=0 go vet -tags "$tag" ./...
done
step "staticcheck (honnef.co/go/tools v0.8.2), with and without cgo"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
CGO_ENABLED=0 go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
step "tests, untagged (the newest pinned toolkit)"
gotest untagged.log -count=1 ./...
# The packages the build tag changes: those whose files differ between
# tags, and those that build on the generated layer.
tagged=$(
	for tag in "" $tags; do
		go list -tags "$tag" -f '{{.ImportPath}} {{.GoFiles}}{{.CgoFiles}}{{.TestGoFiles}}{{.XTestGoFiles}}' ./...
	done | sort -u | awk '{ print $1 }' | uniq -d
	go list -f '{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
		awk '$1 == "github.com/cudagen/cudagen/cuda/driver" || / github.com\/cudagen\/cudagen\/cuda\/driver( |$)/ { print $1 }'
)
tagged=$(echo "$tagged" | sort -u | grep -v '/bench/' || true)
for tag in $tags; do
	step "tests with -tags $tag: the $(echo $tagged | wc -w) packages the tag changes"
	gotest "$tag.log" -count=1 -tags "$tag" $tagged
done
step "without cgo: every call returns ErrNoDriver saying cgo is disabled"
CGO_ENABLED=0 go test -count=1 -run '^TestNoDriverEveryCall$' ./cuda/driver
step "the Go layer's own tests on the fake driver (cuda_test/testdata/fakecuda.c), built with -race"
go test -count=1 -race -run '^TestGoLayerOnFakeDriver$' ./cuda_test
step "the generator's header parsing, fuzzed for 20 s (bash tools/fuzz.sh 30m for longer)"
bash tools/fuzz.sh 20s
step "the cuda package's overhead over the generated layer, on the fake driver (tools/perf-guard.sh)"
bash tools/perf-guard.sh
step "all passed"
