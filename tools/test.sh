#!/usr/bin/env bash
# Runs every test that needs no GPU, for every pinned toolkit's build tag,
# and says what it does as it goes, with the time since it started:
#   1. the pinned headers into the cache (go run ./tools/fetchheaders: the
#      first time about 1.7 GB of Debian packages, of which two headers per
#      version are kept; then a check of their sums);
#   2. go vet, untagged and under each build tag, with and without cgo (vet
#      type-checks every package and its tests, cgo included, so there is no
#      separate build);
#   3. in parallel: staticcheck, with and without cgo (pinned; fetched as a
#      Go module); every test, untagged (the generator's facts per version,
#      drift against the committed files, bad input, pinning toolkits into a
#      copy of the module; the no-driver paths; the Go layer on a fake
#      driver; the GPU tests, which skip without a GPU saying so); the tests
#      of the packages a build tag changes, under each tag; the no-driver
#      paths without cgo; the Go layer on the fake driver (the tests named
#      TestLayer…, cuda_test/fakedriver_test.go) with -race;
#   4. 20 s of fuzzing the header parsing, and the overhead guard
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
# gotest LOG ARGS...: go test -v ARGS, its output in LOG; prints each
# package's result with its skipped tests grouped by reason (the message
# logged just before "--- SKIP"), or, on a failure, everything but the
# passing tests' chatter.
gotest() {
	local log=$logdir/$1
	shift
	# A package's tests may take longer than go test's default 10 minutes
	# on a busy 2-core machine (the generator's pin tests build and vet the
	# module under every tag of three synthetic pins).
	if go test -v -timeout 40m "$@" > "$log" 2>&1; then
		awk '
		/^=== / { next }
		/^ *--- SKIP: / {
			r = prev
			sub(/^ *[^ ]+\.go:[0-9]+: /, "", r)
			if (!(r in cnt)) order[++k] = r
			cnt[r]++
			if (cnt[r] <= 4) names[r] = names[r] (cnt[r] > 1 ? ", " : "") $3
			else if (cnt[r] == 5) names[r] = names[r] ", ..."
			next
		}
		/^(ok|FAIL|panic|\?)/ {
			print
			for (i = 1; i <= k; i++) printf "    %d skipped (%s): %s\n", cnt[order[i]], names[order[i]], order[i]
			delete cnt; delete names; delete order; k = 0
			next
		}
		{ prev = $0 }' "$log"
	else
		grep -vE '^ *(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' "$log"
		echo "== FAIL: go test $*"
		return 1
	fi
}
bash tools/ensure-deps.sh
export CGO_ENABLED=1
step "building the generator to list the build tags (go run ./gen -list tags; from an empty Go build cache, up to a minute)"
tags=$(go run ./gen -list tags)
step "pinned headers into the cache (go run ./tools/fetchheaders); those that cannot be had here are skipped, saying why"
go run ./tools/fetchheaders
step "go vet, untagged and with -tags $(echo $tags | tr ' ' ,), with and without cgo"
for tag in "" $tags; do
	go vet -tags "$tag" ./...
	CGO_ENABLED=0 go vet -tags "$tag" ./...
done
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
# Staticcheck and the test runs go in parallel: much of the tests' time is
# waiting (the fake driver's tests, the generator's tests' go commands).
runs=(staticcheck untagged $tags nocgo race)
step "in parallel: staticcheck (honnef.co/go/tools v0.8.2, with and without cgo); the tests of every package, untagged (the newest pinned toolkit); with -tags $(echo $tags | tr ' ' ,), the $(echo $tagged | wc -w) packages a tag changes; the no-driver paths without cgo; the Go layer on the fake driver with -race"
pids=()
(go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... &&
	CGO_ENABLED=0 go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... && echo "ok (with and without cgo)") > "$logdir/staticcheck.out" 2>&1 &
pids+=($!)
gotest untagged.log -count=1 ./... > "$logdir/untagged.out" 2>&1 &
pids+=($!)
for tag in $tags; do
	gotest "$tag.log" -count=1 -tags "$tag" $tagged > "$logdir/$tag.out" 2>&1 &
	pids+=($!)
done
(export CGO_ENABLED=0; gotest nocgo.log -count=1 -run '^TestNoDriverEveryCall$' ./cuda/driver) > "$logdir/nocgo.out" 2>&1 &
pids+=($!)
gotest race.log -count=1 -race -run '^TestGoLayerOnFakeDriver$' ./cuda_test > "$logdir/race.out" 2>&1 &
pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
for run in "${runs[@]}"; do
	echo "-- $run"
	cat "$logdir/$run.out"
done
[ $failed = 0 ] || { echo "== FAIL"; exit 1; }
step "the generator's header parsing, fuzzed for 20 s (bash tools/fuzz.sh 30m for longer)"
bash tools/fuzz.sh 20s
step "the cuda package's overhead over the generated layer, on the fake driver (tools/perf-guard.sh)"
bash tools/perf-guard.sh
step "all passed"
