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
#      paths and the cuda package's tests without cgo; the Go layer on the fake driver (the tests named
#      TestLayer…, cuda_test/fakedriver_test.go) with -race;
#   4. 20 s of fuzzing the header parsing, and the overhead guard
#      (tools/perf-guard.sh).
# The test output is kept in a log; what is printed is each package's result,
# each skipped test with its reason, and on a failure the failing output.
# Each step starts with a line; a step that prints nothing for a minute says
# so, and the parallel stage reports each run as it ends (its result and
# time) and, once a minute, the runs still going with their times.
# README.md ("Developing cudagen") gives its measured cost.
# tools/gpu-suite.sh runs the GPU tests on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/progress.sh
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
# gotest LOG ARGS...: go test -v ARGS, its output in LOG; prints each
# package's result with its skipped tests grouped by reason (the last
# message the test logged), or, on a failure, everything but the
# passing tests' chatter.
gotest() {
	local log=$logdir/$1
	shift
	# Past go test's default of 10 minutes: the generator's tests
	# (TestPinMultiVersion builds and vets the module under every tag of
	# three synthetic pins) take up to 25 minutes on 2 cores under a load
	# of 9 to 28.
	if go test -v -timeout 60m "$@" > "$log" 2>&1; then
		awk '
		/^=== (RUN|CONT|NAME) / { cur = $3; next }
		/^=== / { next }
		/^ *--- SKIP: / {
			r = ($3 in said) ? said[$3] : prev
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
			delete cnt; delete names; delete order; delete said; k = 0
			next
		}
		/^ *[^ ]+\.go:[0-9]+: / && cur != "" { said[cur] = $0 }
		{ prev = $0 }' "$log"
	else
		grep -vE '^ *(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' "$log"
		echo "== FAIL: go test $*"
		return 1
	fi
}
# spawn NAME CMD...: runs CMD in the background, its output in NAME.out;
# on its end NAME.rc holds its status and the time it ended.
spawn() {
	local name=$1
	shift
	(
		if "$@" > "$logdir/$name.out" 2>&1; then rc=0; else rc=$?; fi
		echo "$rc $SECONDS" > "$logdir/$name.rc.tmp"
		mv "$logdir/$name.rc.tmp" "$logdir/$name.rc"
	) &
	began[$name]=$SECONDS
	runs+=("$name")
}
declare -A began
runs=()
bash tools/ensure-deps.sh
export CGO_ENABLED=1
step "building the generator to list the build tags (go build ./gen; from an empty Go build cache about 40 s on 2 idle cores, up to 4 minutes on 2 busy ones)"
watch "building the generator" go build -o "$logdir/gen" ./gen
tags=$("$logdir/gen" -list tags)
step "pinned headers into the cache (go run ./tools/fetchheaders); those that cannot be had here are skipped, saying why"
watch "fetching the headers" go run ./tools/fetchheaders
for tag in "" $tags; do
	for cgo in 1 0; do
		what="go vet${tag:+ -tags $tag}, $([ $cgo = 1 ] && echo with || echo without) cgo"
		step "$what"
		CGO_ENABLED=$cgo watch "$what" go vet -tags "$tag" ./...
	done
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
step "in parallel: staticcheck (honnef.co/go/tools v0.8.2, with and without cgo); the tests of every package, untagged (the newest pinned toolkit; the longest run, about 15 minutes on 2 cores and longer under load: the generator's pin tests); with -tags $(echo $tags | tr ' ' ,), the $(echo $tagged | wc -w) packages a tag changes; the no-driver and no-library paths and the cuda package's tests without cgo; the Go layer on the fake driver with -race"
staticcheck() {
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... &&
		CGO_ENABLED=0 go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... &&
		echo "ok (with and without cgo)"
}
spawn staticcheck staticcheck
spawn untagged gotest untagged.log -count=1 ./...
for tag in $tags; do
	spawn "$tag" gotest "$tag.log" -count=1 -tags "$tag" $tagged
done
nocgo() {
	export CGO_ENABLED=0
	gotest nocgo.log -count=1 -run '^TestNoDriverEveryCall$' ./cuda/driver &&
		gotest nocgo-cuda.log -count=1 ./cuda &&
		for tag in "" $tags; do gotest "nocgo-libs$tag.log" -count=1 -tags "$tag" ./cuda/nvrtc ./cuda/nvjitlink ./cuda/nccl || return 1; done
}
spawn nocgo nocgo
spawn race gotest race.log -count=1 -race -run '^TestGoLayerOnFakeDriver$' ./cuda_test
# Each run's result as it ends; the runs still going, once a minute.
pending=("${runs[@]}")
failed=()
while [ ${#pending[@]} -gt 0 ]; do
	sleep 1
	left=()
	for run in "${pending[@]}"; do
		if [ -f "$logdir/$run.rc" ]; then
			read -r rc ended < "$logdir/$run.rc"
			if [ "$rc" = 0 ]; then
				step "-- $run: ok ($(dur $((ended - began[$run]))))"
			else
				step "-- $run: FAIL (exit status $rc, $(dur $((ended - began[$run]))))"
				failed+=("$run")
			fi
			sed 's/^/   /' "$logdir/$run.out"
		else
			left+=("$run")
		fi
	done
	pending=(${left[@]+"${left[@]}"})
	if [ ${#pending[@]} -gt 0 ] && quiet; then
		running=""
		for run in "${pending[@]}"; do running+="${running:+, }$run $(dur $((SECONDS - began[$run])))"; done
		step "running: $running"
	fi
done
[ ${#failed[@]} = 0 ] || { step "FAIL: ${failed[*]}"; exit 1; }
step "the generator's header parsing, fuzzed for 20 s (bash tools/fuzz.sh 30m for longer; first the fuzzing build of ./gen)"
watch "fuzzing" bash tools/fuzz.sh 20s
step "the cuda package's overhead over the generated layer, on the fake driver (tools/perf-guard.sh)"
watch "measuring the overhead" bash tools/perf-guard.sh
step "all passed"
