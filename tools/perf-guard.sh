#!/usr/bin/env bash
# perf-guard: what the cuda package adds over the generated layer, per
# operation, measured on the fake driver (cuda_test/testdata/fakecuda.c: no
# GPU work, so the figure is the Go layer's own cost) with the in-process
# harness (cuda_test's BenchmarkInProcess: the cuda package and the generated
# layer's *Ctx calls in interleaved short blocks, the median of the paired
# differences). It prints the table and fails only where an overhead exceeds
# twice its goal, so that a noisy machine cannot turn CI red:
#   query, sync on a done event: 15 ns; record, elapsed, create + close: 25 ns.
# tools/test.sh runs it. ROUNDS (101) sizes it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"${CC:-gcc}" -O2 -shared -fPIC -o "$dir/libfakecuda.so" cuda_test/testdata/fakecuda.c
if ! out=$(CUDAGEN_LIBCUDA="$dir/libfakecuda.so" CUDAGEN_INPROC_ROUNDS=${ROUNDS:-101} \
	go test -count=1 -run '^$' -bench '^BenchmarkInProcess$' -benchtime 1x ./cuda_test 2>&1); then
	echo "$out"
	echo "perf-guard: the in-process harness failed on the fake driver"
	exit 1
fi
head -1 <<<"$out"
echo "| op | cuda package minus generated layer (median, p25..p75) | goal | fails above |"
echo "|---|---|---|---|"
fail=0
for spec in "query (done):15" "sync on a done event:15" "record:25" "elapsed:25" "create + close:25"; do
	op=${spec%:*} goal=${spec##*:}
	# From a here-string, which the shell writes whole first: awk leaves
	# after the first match, and a pipe from echo could then end in SIGPIPE
	# (with pipefail, a failure).
	line=$(awk -v p="$op: cuda minus driver: " 'index($0, p) == 1 { print; exit }' <<<"$out")
	if [ -z "$line" ]; then
		echo "perf-guard: no figure for $op in the harness's output"
		fail=1
		continue
	fi
	v=$(echo "$line" | sed -E 's/.*median ([-+0-9.]+) ns.*/\1/')
	spread=$(echo "$line" | sed -E 's/.*\(p25..p75 (.*)\).*/\1/')
	verdict=$(awk -v v="$v" -v g="$goal" 'BEGIN { if (v > 2 * g) print "FAIL"; else if (v > g) print "over the goal"; else print "ok" }')
	echo "| $op | $v ns ($spread) | $goal ns | $((2 * goal)) ns: $verdict |"
	[ "$verdict" = FAIL ] && fail=1
done
if [ $fail != 0 ]; then
	echo "perf-guard: FAIL: an overhead exceeds twice its goal (or is missing); see docs/performance.md"
	exit 1
fi
echo "perf-guard: ok"
