#!/usr/bin/env bash
# Fuzzes the generator's parse and model stage (gen's FuzzParseHeaders, or
# the target TARGET names: FuzzLibraryHeader, the libraries' path) for
# DURATION (a Go duration: 20s, 10m, 30m) and prints a summary: executions,
# new interesting inputs, crashes. PARALLEL sets the number of fuzzing
# workers (default: Go's, one per CPU); MINIMIZE the time spent minimizing
# each new input (default 5s: Go's 60 s default starves the search here,
# where one execution parses a header, ~20 ms). A crash's input is written under
# gen/testdata/fuzz/TARGET/ (commit it: it then runs in go test).
#   bash tools/fuzz.sh 30m
set -uo pipefail
cd "$(dirname "$0")/.."
dur=${1:?usage: tools/fuzz.sh DURATION (e.g. 10m)}
par=()
[ -n "${PARALLEL:-}" ] && par=(-parallel "$PARALLEL")
# FUZZLOG keeps the whole output (the workers' too) in that file.
log=${FUZZLOG:-$(mktemp)}
[ -z "${FUZZLOG:-}" ] && trap 'rm -f "$log"' EXIT
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
target=${TARGET:-FuzzParseHeaders}
go test ./gen -run '^$' -fuzz "^$target\$" -fuzztime "$dur" -fuzzminimizetime "${MINIMIZE:-5s}" "${par[@]}" 2>&1 | tee "$log" | grep -E '^fuzz: elapsed: [0-9]+m?[0-9]*s?, execs' | awk 'NR % 10 == 1'
rc=${PIPESTATUS[0]}
last=$(grep -E '^fuzz: elapsed:.*execs:' "$log" | tail -1)
execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
newi=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
total=$(sed -nE 's/.*\(total: ([0-9]+)\).*/\1/p' <<<"$last")
crashes=$(grep -cE 'Failing input written to' "$log" || true)
echo "== fuzz summary"
echo "started: $start"
echo "duration: $dur, workers: ${PARALLEL:-$(getconf _NPROCESSORS_ONLN)}, machine: $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -m), $(go version | cut -d' ' -f3)"
echo "execs: ${execs:-?}"
echo "new interesting inputs: ${newi:-?} (corpus total: ${total:-?})"
echo "crashes: $crashes"
if [ "$rc" -ne 0 ]; then
	grep -E -A12 -- '--- FAIL|Failing input written to|panic:|fatal error:' "$log" | head -60
	echo "status: FAIL"
	exit "$rc"
fi
echo "status: PASS (no panic, no input over 10 s, no bad error message)"
