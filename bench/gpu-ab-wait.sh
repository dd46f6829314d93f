#!/usr/bin/env bash
# A/B of long waits (Wait(ctx) on 10 ms of GPU work: the process's CPU as a
# share of one core) between two builds, interleaved process by process on
# the GPU machine. Figures move with the CPU's clock (the benchmarks report
# it): compare the builds over the rounds, never one process.
#   bash bench/gpu-ab-wait.sh build OLDREV   # here: .gpu/ab/{old,new}.test
#   bash bench/gpu-ab-wait.sh run [K]        # on the GPU machine, with .gpu: K rounds (default 8)
# Output: $OUT/ab-wait.txt (every line), $OUT/ab-wait-summary.txt (per
# benchmark and build: the median share, its range, and the clock's range).
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	old=${2:?usage: bench/gpu-ab-wait.sh build OLDREV}
	root=$PWD
	mkdir -p .gpu/ab
	tmp=$(mktemp -d)
	trap 'git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	git worktree add --detach "$tmp/old" "$old" >/dev/null
	(cd "$tmp/old" && go test -c -ldflags='-s -w' -o "$root/.gpu/ab/old.test" ./cuda_test)
	go test -c -ldflags='-s -w' -o .gpu/ab/new.test ./cuda_test
	git -C "$root" rev-parse --short "$old" > .gpu/ab/old.rev
	git -C "$root" rev-parse --short HEAD > .gpu/ab/new.rev
	;;
run)
	k=${2:-8}
	OUT=${OUT:-/tmp/cudagen-out}
	mkdir -p "$OUT"
	log=$OUT/ab-wait.txt
	{
		date -u +"date: %Y-%m-%dT%H:%M:%SZ"
		nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
		echo "old $(cat .gpu/ab/old.rev), new $(cat .gpu/ab/new.rev)"
	} > "$log"
	for i in $(seq 1 "$k"); do
		order="old new"
		[ $((i % 2)) = 0 ] && order="new old"
		for b in $order; do
			echo "== round $i $b" >> "$log"
			timeout 120 ".gpu/ab/$b.test" -test.run '^$' -test.bench 'WaitLong10ms' -test.benchtime 40x 2>&1 |
				grep -E '^Benchmark' >> "$log" || true
		done
	done
	# Per benchmark and build: median %cpu over the rounds, its range, the clock's range.
	awk "$(cat bench/median.awk)"'
		/^== round/ { b = $4; next }
		/^Benchmark/ {
			name = $1; sub(/-[0-9]+$/, "", name)
			cpu = ""; ghz = ""
			for (i = 2; i < NF; i++) { if ($(i+1) == "%cpu") cpu = $i; if ($(i+1) == "GHz") ghz = $i }
			if (cpu == "") next
			key = name " " b; n[key]++; v[key] = v[key] " " cpu; if (ghz != "") g[key] = g[key] " " ghz
			if (!(key in lo) || cpu + 0 < lo[key]) lo[key] = cpu + 0
			if (!(key in hi) || cpu + 0 > hi[key]) hi[key] = cpu + 0
		}
		END {
			for (key in n)
				printf "%-40s %s: median %.2f %%cpu over %d processes (%.2f..%.2f); clock (GHz):%s\n", key, "", median(v[key]), n[key], lo[key], hi[key], g[key]
		}' "$log" | sort > "$OUT/ab-wait-summary.txt"
	cat "$OUT/ab-wait-summary.txt"
	;;
*)
	echo "usage: bench/gpu-ab-wait.sh build OLDREV | run [K]" >&2
	exit 2
	;;
esac
