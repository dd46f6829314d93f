#!/usr/bin/env bash
# The three Go bindings side by side, more rounds than bench/gpu-perf.sh
# gives them: the cuda package (bench/peers/cudagen), gorgonia.org/cu and
# gocnn/gocu, each its own process, the order rotated every round. Per op
# and binding: the median over the rounds in ns and in cycles per call, and
# the median of the per-round differences of cudagen to each peer in cycles
# (rounds are consecutive processes, so a clock that drifts slowly affects
# both sides of a difference alike).
#   bash bench/gpu-peers-go.sh [K] [N]   # on the GPU machine, with .gpu/peers; K rounds (20), N calls per loop (50000)
# PEERS names the processes of a round (default "cudagen gorgonia gocu").
# LAYOUTS=K (the binaries of bench/peers/build.sh with LAYOUTS=K) runs, in
# round i, binding b of PEERS its layout (i + b) mod (K+1): the default
# build and the -randlayout=1..K builds in turn, so each binding's figures
# are over K+1 code layouts, not one. The summary then also lists each
# binding's median per layout.
# Output: $OUT/peers-go.txt (every line) and $OUT/peers-go-summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
k=${1:-20} n=${2:-50000}
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
log=$OUT/peers-go.txt
: > "$log"
read -r -a peers <<< "${PEERS:-cudagen gorgonia gocu}"
np=${#peers[@]}
for i in $(seq 1 "$k"); do
	for j in $(seq 0 $((np - 1))); do
		b=$(((i + j) % np))
		p=${peers[$b]}
		l=$(((i + b) % (${LAYOUTS:-0} + 1)))
		suf=""
		[ "$l" -gt 0 ] && suf=".L$l"
		timeout 120 ".gpu/peers/$p$suf" "$n" 3 2>&1 | sed "s/^/$i $p L$l /" >> "$log"
	done
done
# Lines: ROUND PEER LAYOUT OP NS ns/op ... CYC cyc/op at GHZ GHz
awk "$(cat bench/median.awk)"'
	$6 == "ns/op" && $(NF-3) == "cyc/op" {
		op = $4; key = op SUBSEP $2
		ns[key] = ns[key] " " $5; cyc[key] = cyc[key] " " $(NF-4)
		lk = op SUBSEP $2 SUBSEP $3; lay[lk] = lay[lk] " " $(NF-4); layouts[$3] = 1
		c[$1, op, $2] = $(NF-4); ops[op] = 1; rounds[$1] = 1
	}
	END {
		if (length(layouts) > 1) for (lk in lay) {
			split(lk, f, SUBSEP)
			printf "%-14s %-13s layout %-4s median %8.1f cycles over %d rounds\n", f[1], f[2], f[3], median(lay[lk]), split(lay[lk], t, " ")
		}
		np = split(peers, peer, " ")
		printf "%-14s %-13s %10s %10s %8s\n", "op", "binding", "ns/op", "cyc/op", "rounds"
		for (op in ops) {
			for (b = 1; b <= np; b++) {
				p = peer[b]
				key = op SUBSEP p
				if (key in ns) printf "%-14s %-13s %10.1f %10.1f %8d\n", op, p, median(ns[key]), median(cyc[key]), split(cyc[key], t, " ")
			}
			for (b = 2; b <= np; b++) {
				p = peer[b]; d = ""; neg = 0; m = 0
				for (r in rounds) if ((r, op, "cudagen") in c && (r, op, p) in c) {
					x = c[r, op, "cudagen"] - c[r, op, p]; d = d " " x; m++; if (x < 0) neg++
				}
				if (m > 0) printf "%-14s cudagen - %-13s median %+.1f cycles per round (%d of %d rounds below 0)\n", op, p, median(d), neg, m
			}
		}
	}' peers="${peers[*]}" "$log" | sort > "$OUT/peers-go-summary.txt"
cat "$OUT/peers-go-summary.txt"
