#!/usr/bin/env bash
# The benchmarks on a machine with a GPU, from the binaries in .gpu/
# (tools/gpu-build.sh and bench/gpu-bench-build.sh, run where Go is):
#   bash bench/gpu-perf.sh
# In three parts (docs/performance.md explains them), logs to $OUT (default
# /tmp/cudagen-out): summary.txt, inproc.md, peers.md, peers-inproc.md and
# logs.tgz. ROUNDS (7), N (50000) and INPROC_ROUNDS (201) size it; CPU=N
# pins every process to CPU N.
set -uo pipefail
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
status=0
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
logs="$OUT/logs"
mkdir -p "$logs"
finish() {
	log "status: $status"
	tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
	exit $status
}
{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
	grep -m1 'define CUDA_VERSION' /usr/local/cuda/include/cuda.h | sed 's/^/toolkit: /'
	git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit: /'
} | tee "$OUT/summary.txt"
[ -x .gpu/benchtable ] || { echo "bench/gpu-perf.sh: no .gpu/benchtable; run bash tools/gpu-build.sh and bash bench/gpu-bench-build.sh first" >&2; exit 1; }

# Performance, in three parts:
# 1. The in-process harness (cuda_test's BenchmarkInProcess): short blocks of
#    each operation through a C loop, raw cgo, the generated layer and the
#    cuda package, interleaved in one process; paired differences to C.
# 2. The old per-operation benchmarks of the package and the generated layer
#    in one process (the order they run in is part of what they measure).
# 3. The side-by-side run: bench/cbench (C), cudagen (cuda package and
#    generated layer), gorgonia.org/cu, gocnn/gocu and the Python bindings,
#    each its own process, in ROUNDS rounds, the order rotated every round.
# Unpinned: pinning to one CPU distorts the driver's figures (its own threads
# then compete for that CPU). CPU=N pins anyway.
pin=""
[ -n "${CPU:-}" ] && pin="taskset -c $CPU"
newest=$(cat .gpu/newest)
log "in-process harness (BenchmarkInProcess, ${INPROC_ROUNDS:-201} rounds)"
CUDAGEN_INPROC_ROUNDS=${INPROC_ROUNDS:-201} CUDAGEN_INPROC_OUT="$OUT/inproc.md" $pin ./.gpu/cuda_test.$newest.test -test.run '^$' \
	-test.bench '^BenchmarkInProcess$' -test.benchtime 1x > "$logs/inproc.log" 2>&1 || { status=1; tail -20 "$logs/inproc.log" >> "$OUT/summary.txt"; }
grep -E 'goal|^in-process' "$OUT/inproc.md" >> "$OUT/summary.txt" 2>/dev/null

log "per-operation Go benchmarks in one process (order as in cuda_test/event_cost_test.go), allocations, long waits"
$pin ./.gpu/cuda_test.$newest.test -test.run '^$' \
	-test.bench '^Benchmark(Record|Query|SyncDone|RecordQuery|Elapsed|CreateDestroy|RecordSync|RecordWait|Driver.*|CgoFloor)$' \
	-test.benchtime 200000x -test.count 1 -test.benchmem > "$logs/bench-go.txt" 2>&1 || status=1
$pin ./.gpu/cuda_test.$newest.test -test.run '^$' -test.bench 'Long|WaitStrategy' -test.benchtime 60x -test.count 1 >> "$logs/bench-go.txt" 2>&1 || status=1
grep -E '^Benchmark' "$logs/bench-go.txt" | sed 's/^/  /' >> "$OUT/summary.txt"

ROUNDS=${ROUNDS:-7}
N=${N:-50000}
py=python3
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
peerdir="$logs/peers"
mkdir -p "$peerdir"
log "side by side: $ROUNDS rounds, each binding its own process, median of 3 loops of $N calls per figure (${pin:-unpinned}; python: $py)"
if gcc -O2 -o /tmp/cbench bench/cbench/cbench.c -I/usr/local/cuda/include -lcuda > "$peerdir/cbench-build.log" 2>&1; then :; else
	log "cbench build failed"; cat "$peerdir/cbench-build.log" >> "$OUT/summary.txt"; status=1
fi
# The CPU's clock for the Python peers' cycles per call (bench/cbench/clock.h).
if gcc -O2 -shared -fPIC -o /tmp/libclock.so bench/cbench/libclock.c >> "$peerdir/cbench-build.log" 2>&1; then
	export CUDAGEN_CLOCK_LIB=/tmp/libclock.so
fi
labels=(C cudagen cudagen/driver gorgonia gocu cuda.core cupy cuda.bindings torch)
# The Go bindings' code layouts (bench/peers/build.sh with LAYOUTS=K): in
# round r, binding b of labels runs its layout (r + b) mod (K+1), the
# default build or .L1 .. .LK, so its figures are over K+1 layouts.
nl=$(find .gpu/peers -maxdepth 1 -name 'cudagen.L*' 2>/dev/null | wc -l)
run_peer() {
	local suf=""
	[ "$2" -gt 0 ] && suf=".L$2"
	case $1 in
	C) $pin timeout 120 /tmp/cbench "$N" 3 ;;
	cudagen) $pin timeout 120 "./.gpu/peers/cudagen$suf" "$N" 3 ;;
	cudagen/driver) $pin timeout 120 "./.gpu/peers/cudagen$suf" -layer driver "$N" 3 ;;
	gorgonia) $pin timeout 120 "./.gpu/peers/gorgonia$suf" "$N" 3 ;;
	gocu) $pin timeout 120 "./.gpu/peers/gocu$suf" "$N" 3 ;;
	*) $pin timeout 120 "$py" bench/pybench/pybench.py "$1" "$N" 3 ;;
	esac
}
[ "$nl" -gt 0 ] && log "the Go bindings in $((nl + 1)) code layouts each (bench/peers/build.sh LAYOUTS), one per round in turn"
for r in $(seq "$ROUNDS"); do
	t0=$(date +%s)
	n=${#labels[@]}
	for k in $(seq 0 $((n - 1))); do
		b=$(((k + r) % n))
		l=${labels[$b]}
		f="$peerdir/$(echo "$l" | tr / _).txt"
		run_peer "$l" $(((r + b) % (nl + 1))) >> "$f" 2>> "$peerdir/errors.log" || echo "round $r: $l failed ($?)" >> "$peerdir/errors.log"
	done
	echo "  round $r: $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
done
args=()
for l in "${labels[@]}"; do args+=("$l=$peerdir/$(echo "$l" | tr / _).txt"); done
./.gpu/benchtable -peers "${args[@]}" > "$OUT/peers.md" 2>> "$peerdir/errors.log" || status=1
cat "$OUT/peers.md" >> "$OUT/summary.txt"
sort -u "$peerdir/errors.log" | head -20 | sed 's/^/  peers: /' >> "$OUT/summary.txt"

# The Go peers in the same process (bench/peers/inproc): paired blocks, so the
# moment's CPU clock cancels out. Three processes.
if [ -x .gpu/peers/inproc ]; then
	log "in one process: cudagen's cuda package, its generated layer, gorgonia.org/cu and gocnn/gocu (bench/peers/inproc, 3 processes of 201 rounds)"
	for i in 1 2 3; do $pin timeout 120 ./.gpu/peers/inproc 201 400 2>&1 || status=1; done > "$OUT/peers-inproc.md"
	cat "$OUT/peers-inproc.md" >> "$OUT/summary.txt"
fi
finish
