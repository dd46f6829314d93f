#!/usr/bin/env bash
# Runs the whole GPU check on the GPU machine, in one command:
#   bash tools/gpu-suite.sh            (after tools/gpu-build.sh here, carrying .gpu)
#   bash tools/gpu-suite.sh bench      (the benchmarks only)
#   bash tools/gpu-suite.sh tests      (everything but the benchmarks)
# Logs go to $OUT (the device tool brings them back). It runs: the GPU tests of
# every pinned toolkit's build, the -race build, the examples, the generator
# against the machine's own toolkit, and the benchmarks side by side with the
# C baseline (tools/cbench), built and run here in the same command.
set -uo pipefail
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
status=0
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
	echo "gpus: $(nvidia-smi -L | wc -l)"
	grep -m1 'define CUDA_VERSION' /usr/local/cuda/include/cuda.h | sed 's/^/toolkit: /'
	uname -r | sed 's/^/kernel: /'
} | tee "$OUT/summary.txt"

if [ "${1:-}" != bench ]; then
for tag in $(cat .gpu/tags); do
	log "GPU tests, build tag $tag"
	if ./.gpu/cuda_test.$tag.test -test.v -test.count=1 > "$OUT/test-$tag.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
	grep -E '^(--- |=== RUN|ok|FAIL|PASS)|elapsed|bindings:|→|threads|child:|not supported|outside capture' "$OUT/test-$tag.log" | grep -v '=== RUN' >> "$OUT/summary.txt"
	log "$tag: $r"
	# The generated layer's own tests (no-driver path) under the same tag.
	if ./.gpu/driver.$tag.test -test.count=1 >> "$OUT/test-$tag.log" 2>&1; then log "driver tests $tag: PASS"; else log "driver tests $tag: FAIL"; status=1; fi
done

log "GPU tests built with -race (newest)"
if ./.gpu/cuda_test.race.test -test.count=1 -test.v > "$OUT/test-race.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
grep -E '^(--- FAIL|ok|FAIL|PASS)|WARNING: DATA RACE' "$OUT/test-race.log" >> "$OUT/summary.txt"
log "race: $r"

log "examples"
if ./.gpu/examples.test -test.v -test.run '^Example' > "$OUT/examples.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
grep -E '^(--- |ok|FAIL|PASS)' "$OUT/examples.log" >> "$OUT/summary.txt"
log "examples: $r"

log "generator against this machine's toolkit (/usr/local/cuda)"
export CUDAGEN_CACHE=/tmp/cudagen-cache
mkdir -p /tmp/gen-out && cp -r gen templates headers go.mod /tmp/gen-out/ 2>/dev/null
mkdir -p /tmp/gen-out/cuda/driver
if (cd /tmp/gen-out && "$OLDPWD/.gpu/gen" -cuda /usr/local/cuda -only 13.0 > "$OUT/gen.log" 2>&1); then
	ls /tmp/gen-out/cuda/driver >> "$OUT/gen.log"
	if cmp -s /tmp/gen-out/cuda/driver/zdriver_cuda13_0.go cuda/driver/zdriver_cuda13_0.go; then
		log "generator: the 13.0 bindings made here from /usr/local/cuda equal the committed ones"
	else
		log "generator: 13.0 bindings made here DIFFER from the committed ones"; status=1
	fi
else
	log "generator: FAIL"; cat "$OUT/gen.log" >> "$OUT/summary.txt"; status=1
fi

fi # tests

if [ "${1:-}" = tests ]; then log "status: $status"; exit $status; fi

# Unpinned: pinning both to one CPU was tried and distorts the C figures
# (the driver's own threads compete for that CPU). CPU=N pins anyway.
# The driver's own cost jumps by up to 2x from one process to the next on
# these machines, so C and Go run in alternating rounds; tools/benchtable
# gives the best figure of the rounds, Go/C of the best figures, and the
# median and range of the rounds' own ratios.
pin=""
[ -n "${CPU:-}" ] && pin="taskset -c $CPU"
ROUNDS=${ROUNDS:-9}
log "benchmarks: C baseline and Go in $ROUNDS alternating rounds (${pin:-unpinned}; 200000 calls per figure)"
if gcc -O2 -o /tmp/cbench tools/cbench/cbench.c -I/usr/local/cuda/include -lcuda > "$OUT/cbench-build.log" 2>&1; then
	newest=$(cat .gpu/newest)
	: > "$OUT/cbench.txt"; : > "$OUT/bench.txt"
	for i in $(seq "$ROUNDS"); do
		$pin /tmp/cbench 200000 3 >> "$OUT/cbench.txt" 2>&1 || status=1
		$pin ./.gpu/cuda_test.$newest.test -test.run '^$' \
			-test.bench '^Benchmark(Record|Query|RecordQuery|Elapsed|SyncDone|CreateDestroy|PoolGetPut|RecordSync|RecordWait|Driver.*|CgoFloor|Diag.*)$' \
			-test.benchtime 200000x -test.count 1 -test.benchmem >> "$OUT/bench.txt" 2>&1 || status=1
	done
	./.gpu/benchtable "$OUT/cbench.txt" "$OUT/bench.txt" > "$OUT/bench-table.md" 2>&1 || status=1
else
	log "cbench build failed"; cat "$OUT/cbench-build.log" >> "$OUT/summary.txt"; status=1
fi
./.gpu/cuda_test.$(cat .gpu/newest).test -test.run '^$' -test.bench 'Long' -test.benchtime 100x -test.count 3 > "$OUT/bench-long.txt" 2>&1 || status=1
{
	cat "$OUT/bench-table.md"
	echo "(Go/C: median of the rounds' own ratios, with their range. RecordWait is compared with C's record+sync round trip, PoolGetPut with C's create+destroy.)"
	grep -E '^Benchmark' "$OUT/bench-long.txt"
} >> "$OUT/summary.txt"
log "status: $status"
exit $status
