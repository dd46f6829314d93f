#!/usr/bin/env bash
# Summarises the output of bench/gpu-ab.sh (ab.txt): for each figure, the
# median over the processes of each build, then each process's value in
# run order, so that a shift of the driver's per-process state shows:
#   bash bench/gpu-ab-summary.sh ab.txt
# Figures: the in-process harness's paired "cuda minus direct cgo" (ns),
# BenchmarkHotParts's "minus the plain call" (ns) and bench/peers/inproc's
# "cudagen − gorgonia" and "cudagen − gocu" (ns).
set -euo pipefail
awk "$(cat "$(dirname "$0")/median.awk")"'
function add(key, b, v) {
	if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
	vals[key, b] = vals[key, b] (vals[key, b] == "" ? "" : " ") v
}
/^== round [0-9]+ [a-z]+ [a-z]+$/ { build = $4; kind = $5; next }
kind == "harness" && / cuda minus direct cgo: median / {
	split($0, p, ": cuda minus direct cgo: median ")
	split(p[2], q, " ")
	add("harness " p[1], build, q[1] + 0)
}
kind == "hotparts" && /^\| (Event|hazard)\./ {
	n = split($0, c, "|")
	name = c[2]; gsub(/^ +| +$/, "", name)
	split(c[4], q, " ")
	add("hotparts " name, build, q[1] + 0)
}
# inproc'"'"'s columns: "cudagen − gorgonia" is the 4th figure, or the 5th
# where the header has gocu (then "cudagen − gocu" follows it).
kind == "inproc" && /^\| op / { gcol = /gocu ns\/op/ ? 6 : 5; ocol = gcol == 6 ? 7 : 0; next }
kind == "inproc" && /^\| [a-z]/ {
	n = split($0, c, "|")
	name = c[2]; gsub(/^ +| +$/, "", name)
	split(c[gcol], q, " ")
	if (q[1] != "") add("vs gorgonia " name, build, q[1] + 0)
	if (ocol) {
		split(c[ocol], q, " ")
		if (q[1] != "") add("vs gocu " name, build, q[1] + 0)
	}
}
END {
	printf "%-44s %-8s %-8s %s\n", "figure (ns)", "old", "new", "per process: old | new"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		o = vals[k, "old"]; w = vals[k, "new"]
		printf "%-44s %-8s %-8s %s | %s\n", k, (o == "" ? "-" : sprintf("%+.1f", median(o))), (w == "" ? "-" : sprintf("%+.1f", median(w))), o, w
	}
}' "$1"
