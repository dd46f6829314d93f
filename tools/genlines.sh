#!/usr/bin/env bash
# genlines.sh: generated lines per bound function, per pinned version.
# Counted: the non-test generated files of cuda/driver for the version,
# zdriver_cudaX_Y.go, zdriver_cudaX_Y_cgo.go and zdriver_cudaX_Y_nocgo.go:
# every line that is not a comment line (blank lines included). The doc
# comments, the header's own documentation rendered for go doc, are
# counted apart (comments/function). Not counted: the generated tests,
# the shared zloader.go and the layout check.
# Functions bound: the entries of the version's Functions table.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=cuda/driver
printf '%-8s %10s %8s %18s %20s\n' version functions lines lines/function comments/function
for f in "$dir"/zdriver_cuda*_cgo.go; do
	base=${f%_cgo.go}
	v=${base#"$dir"/zdriver_cuda}
	v=${v/_/.}
	n=$(awk '/^var Functions = \[\]FunctionInfo\{/{on=1; next} on && /^}/{on=0} on && /^\t\{/{c++} END{print c+0}' "$base.go")
	lines=$(cat "$base.go" "${base}_cgo.go" "${base}_nocgo.go" | grep -cv '^[[:space:]]*//')
	comments=$(cat "$base.go" "${base}_cgo.go" "${base}_nocgo.go" | grep -c '^[[:space:]]*//')
	awk -v v="$v" -v n="$n" -v l="$lines" -v c="$comments" 'BEGIN{printf "%-8s %10d %8d %18.2f %20.2f\n", v, n, l, (n ? l/n : 0), (n ? c/n : 0)}'
done
