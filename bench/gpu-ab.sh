#!/usr/bin/env bash
# A/B of two builds on the GPU machine, interleaved process by process:
#   bash bench/gpu-ab.sh DIR [K]
# DIR holds old.test and new.test (cuda_test binaries, go test -c) and,
# optionally, inproc-old and inproc-new (bench/peers/inproc built against
# each tree) and hot-old.test and hot-new.test (the cuda package's test
# binaries: BenchmarkHotParts). Each of K rounds (default 6) runs, in one alternating order,
# the in-process harness of each build (its paired "minus direct cgo" and
# "minus driver" lines) and each inproc peer (the cuda package against
# gorgonia/cu in one process). Figures move 2x between processes: compare
# the builds over the rounds, never one process. Output: $OUT/ab.txt, and
# $OUT/ab-summary.txt (bench/gpu-ab-summary.sh: medians per build and each
# process's figure).
set -uo pipefail
dir=$1 k=${2:-6}
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
pin="" # unpinned, as tools/gpu-suite.sh (CPU=N pins)
[ -n "${CPU:-}" ] && pin="taskset -c $CPU"
{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} > "$OUT/ab.txt"
for i in $(seq 1 "$k"); do
	order="old new"
	[ $((i % 2)) = 0 ] && order="new old"
	for b in $order; do
		[ -x "$dir/$b.test" ] || continue
		echo "== round $i $b harness" >> "$OUT/ab.txt"
		CUDAGEN_INPROC_ROUNDS=${INPROC_ROUNDS:-101} $pin timeout 120 "$dir/$b.test" -test.run '^$' -test.bench '^BenchmarkInProcess$' -test.benchtime 1x 2>&1 |
			grep -E 'minus (direct cgo|driver)|cuda minus C loop' >> "$OUT/ab.txt"
		if [ -x "$dir/hot-$b.test" ]; then
			echo "== round $i $b hotparts" >> "$OUT/ab.txt"
			timeout 120 "$dir/hot-$b.test" -test.run '^$' -test.bench '^BenchmarkHotParts$' -test.benchtime 1x 2>&1 | grep '^|' >> "$OUT/ab.txt"
		fi
		if [ -x "$dir/inproc-$b" ]; then
			echo "== round $i $b inproc" >> "$OUT/ab.txt"
			$pin timeout 120 "$dir/inproc-$b" 101 400 >> "$OUT/ab.txt" 2>&1
		fi
	done
done
echo "done" >> "$OUT/ab.txt"
bash "$(dirname "$0")/gpu-ab-summary.sh" "$OUT/ab.txt" > "$OUT/ab-summary.txt"
