#!/usr/bin/env bash
# Runs the GPU tests on a machine with a GPU and its driver, in one command,
# from the binaries tools/gpu-build.sh made in .gpu/ (that machine needs no Go):
#   bash tools/gpu-suite.sh
# It runs the GPU tests of every pinned toolkit's build, the -race build, the
# examples, the generator against the machine's own toolkit
# (/usr/local/cuda), and bench/ctxprobe (the driver's handle calls under
# other contexts, which cuda/handlecall.go relies on). Logs go to $OUT
# (default /tmp/cudagen-out): summary.txt and logs.tgz. The benchmarks are
# bench/gpu-perf.sh. GPU_SKIP names more tests to skip, '|'-separated (e.g.
# TestGoLayerOnFakeDriver, which CI runs anyway). TestIPCExporterDeath runs
# in a process of its own, after the others: a wait on its dead exporter's
# event never ends, and while a thread sleeps in it the driver blocks later
# module loads of that context.
set -uo pipefail
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
status=0
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
# The logs go under $OUT/logs, packed into $OUT/logs.tgz at the end.
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
	echo "gpus: $(nvidia-smi -L | wc -l)"
	grep -m1 'define CUDA_VERSION' /usr/local/cuda/include/cuda.h | sed 's/^/toolkit: /'
	uname -r | sed 's/^/kernel: /'
} | tee "$OUT/summary.txt"

for tag in $(cat .gpu/tags); do
	log "GPU tests, build tag $tag"
	r=PASS
	./.gpu/cuda_test.$tag.test -test.v -test.count=1 -test.skip "^(TestIPCExporterDeath${GPU_SKIP:+|$GPU_SKIP})\$" > "$logs/test-$tag.log" 2>&1 || { r=FAIL; status=1; }
	./.gpu/cuda_test.$tag.test -test.v -test.count=1 -test.run '^TestIPCExporterDeath$' >> "$logs/test-$tag.log" 2>&1 || { r=FAIL; status=1; }
	grep -E '^(--- |=== RUN|ok|FAIL|PASS)|elapsed|bindings:|→|threads|child:|not supported|outside capture' "$logs/test-$tag.log" | grep -v '=== RUN' >> "$OUT/summary.txt"
	log "$tag: $r"
	# The generated layer's own tests (no-driver path) under the same tag.
	# In its package's directory, as go test runs it (its fake driver's source is testdata/).
	if (cd cuda/driver && ../../.gpu/driver.$tag.test -test.count=1) >> "$logs/test-$tag.log" 2>&1; then log "driver tests $tag: PASS"; else log "driver tests $tag: FAIL"; status=1; fi
done

log "GPU tests built with -race (newest)"
if ./.gpu/cuda_test.race.test -test.count=1 -test.v -test.skip "^(TestIPCExporterDeath${GPU_SKIP:+|$GPU_SKIP})\$" > "$logs/test-race.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
grep -E '^(--- FAIL|ok|FAIL|PASS)|WARNING: DATA RACE' "$logs/test-race.log" >> "$OUT/summary.txt"
log "race: $r"

log "examples"
if ./.gpu/examples.test -test.v -test.run '^Example' > "$logs/examples.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
grep -E '^(--- |ok|FAIL|PASS)' "$logs/examples.log" >> "$OUT/summary.txt"
log "examples: $r"

log "generator against this machine's toolkit (/usr/local/cuda)"
# With the other pins' headers (.gpu/headers, from gpu-build.sh) it
# regenerates every version and library; without them, the toolkit's own.
export CUDAGEN_CACHE=/tmp/cudagen-cache
rm -rf /tmp/gen-out "$CUDAGEN_CACHE" && mkdir -p /tmp/gen-out "$CUDAGEN_CACHE"
cp -r gen templates headers cuda docs go.mod go.sum /tmp/gen-out/ 2>/dev/null
only=(-only 13.0)
if [ -d .gpu/headers ] && [ -n "$(ls .gpu/headers)" ]; then cp -r .gpu/headers/. "$CUDAGEN_CACHE/"; only=(); fi
if (cd /tmp/gen-out && "$OLDPWD/.gpu/gen" -cuda /usr/local/cuda "${only[@]}" > "$logs/gen.log" 2>&1); then
	# Every generated file must equal the committed one, and none be new or gone.
	diffs=0
	pattern='z*.go'; [ ${#only[@]} -gt 0 ] && pattern='z*_cuda13_0*.go'
	docs=""; [ ${#only[@]} -eq 0 ] && docs="docs/zbindings.md docs/zlibraries.md"
	for f in $( (cd /tmp/gen-out && find cuda -type f -name "$pattern"; find cuda -type f -name "$pattern"; echo $docs) | sort -u); do
		if cmp -s "/tmp/gen-out/$f" "$f"; then echo "same: $f" >> "$logs/gen.log"; else echo "DIFFERS: $f" | tee -a "$logs/gen.log" >> "$OUT/summary.txt"; diffs=1; fi
	done
	n=$(cd /tmp/gen-out && find cuda -type f -name "$pattern" | wc -l)
	if [ "$diffs" = 0 ] && [ "$n" -gt 0 ]; then
		log "generator: the $n files ($pattern${docs:+, $docs}) made here, 13.0 from /usr/local/cuda, equal the committed ones"
	else
		log "generator: the bindings made here DIFFER from the committed ones ($n files)"; status=1
	fi
else
	log "generator: FAIL"; cat "$logs/gen.log" >> "$OUT/summary.txt"; status=1
fi

log "ctxprobe: handle calls under another, no, released or destroyed current context"
if gcc -O2 -I/usr/local/cuda/include -o /tmp/ctxprobe bench/ctxprobe/ctxprobe.c -lcuda -lpthread &&
	/tmp/ctxprobe > "$logs/ctxprobe.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
grep -E '^(state|PASS|FAIL)|UNEXPECTED' "$logs/ctxprobe.log" >> "$OUT/summary.txt"
log "ctxprobe: $r"

finish
