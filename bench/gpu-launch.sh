#!/usr/bin/env bash
# The kernel launch comparison on a machine with a GPU, from the binaries in
# .gpu/ (tools/gpu-build.sh and bench/gpu-bench-build.sh, run where Go is):
#   bash bench/gpu-launch.sh
# An empty kernel of 4 and of 16 64-bit arguments (bench/peers/launch/
# empty.ptx), in interleaved blocks inside each process, so that the
# figures compared meet the same CPU clock:
# 1. bench/peers/launch: C through cuLaunchKernel's entry point, cudagen's
#    LaunchArgs and LaunchKernel, gorgonia.org/cu's and gocnn/gocu's
#    Function.Launch, and the cgo crossing (an empty C function); the
#    medians, the per-round differences to C, the Go allocations per launch.
# 2. cuda.bindings' cuLaunchKernel (bench/pybench launch), typed and raw,
#    with C in the same process (bench/cbench/libclock.c).
# 3. cuda_test's BenchmarkLaunchSideBySide, where the test binary is there.
# PROCS (3) processes of each, ROUNDS (201) rounds of B (400) launches per
# block. Writes $OUT/launch.md (default /tmp/cudagen-out); about a minute.
set -uo pipefail
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
PROCS=${PROCS:-3} ROUNDS=${ROUNDS:-201} B=${B:-400}
md="$OUT/launch.md"
status=0
{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
	git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit: /'
	echo
} > "$md"
[ -x .gpu/peers/launch ] || { echo "bench/gpu-launch.sh: no .gpu/peers/launch; run bash bench/gpu-bench-build.sh first" | tee -a "$md" >&2; exit 1; }
clock=.gpu/libclock.so
if [ ! -f "$clock" ]; then
	clock=/tmp/cudagen-libclock.so
	gcc -O2 -shared -fPIC -o "$clock" bench/cbench/libclock.c || status=1
fi
py=python3
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
for i in $(seq "$PROCS"); do
	echo "## Go bindings, process $i of $PROCS"
	echo
	timeout 180 ./.gpu/peers/launch "$ROUNDS" "$B" 2>&1 || { status=1; echo "(failed: $?)"; }
	echo
	echo "## cuda.bindings, process $i of $PROCS"
	echo
	CUDAGEN_CLOCK_LIB="$(realpath "$clock")" timeout 180 "$py" bench/pybench/pybench.py launch "$ROUNDS" "$B" 2>&1 || { status=1; echo "(failed: $?)"; }
	echo
done >> "$md"
newest=$(cat .gpu/newest 2>/dev/null)
if [ -n "$newest" ] && [ -x ".gpu/cuda_test.$newest.test" ]; then
	{
		echo "## cuda_test BenchmarkLaunchSideBySide"
		echo
		echo '```'
		timeout 180 "./.gpu/cuda_test.$newest.test" -test.run '^$' -test.bench '^BenchmarkLaunchSideBySide$' -test.benchtime 1x -test.v 2>&1 | grep -E 'Benchmark|args|FAIL|ok' || status=1
		echo '```'
	} >> "$md"
fi
echo "status: $status" >> "$md"
cat "$md"
exit $status
