#!/usr/bin/env bash
# The GPU soak (TestLayerSoak), detached so that it can outlast the shell that
# starts it:
#   bash tools/gpu-soak.sh start [DURATION]   starts the -race soak (default 10m15s)
#                                             detached (setsid), waits up to
#                                             ENDBY seconds (585) for it, and
#                                             returns
#   bash tools/gpu-soak.sh collect            waits (up to WAITMAX s, 580) for the
#                                             soak to end, then copies its log
#                                             and summary under $OUT
#   bash tools/gpu-soak.sh plain [DURATION]   the soak without -race (asserts RSS),
#                                             the IPC exporter-death test and the
#                                             misuse table, in one command
# From the binaries of tools/gpu-build.sh (.gpu/). The soak runs alone:
# nothing else shares the GPU or the CPUs while it runs.
set -uo pipefail
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
state=/tmp/cudagen-soak
mode=${1:-}
case $mode in
start)
	dur=${2:-10m15s}
	mkdir -p "$state"
	{
		date -u +"start: %Y-%m-%dT%H:%M:%SZ"
		nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
		echo "duration: $dur (-race, 64 goroutines)"
	} > "$state/summary.txt"
	# setsid: the soak outlives this command; tools/gpu-soak.sh collect waits for it.
	setsid bash -c "CUDAGEN_SOAK=$dur ./.gpu/cuda_test.race.test -test.v -test.count=1 -test.run '^TestLayerSoak\$' -test.timeout 30m > $state/soak.log 2>&1; echo \$? > $state/rc" \
		< /dev/null > /dev/null 2>&1 &
	# Wait up to ENDBY seconds (default 585).
	end=$((SECONDS + ${ENDBY:-585}))
	while [ $SECONDS -lt $end ] && [ ! -f "$state/rc" ]; do sleep 5; done
	cp "$state/summary.txt" "$OUT/soak-start.txt"
	tail -5 "$state/soak.log" >> "$OUT/soak-start.txt"
	[ -f "$state/rc" ] && echo "soak already ended: rc $(cat "$state/rc")" | tee -a "$OUT/soak-start.txt"
	echo "soak running; bash tools/gpu-soak.sh collect waits for it"
	;;
collect)
	end=$((SECONDS + ${WAITMAX:-580}))
	while [ $SECONDS -lt $end ] && [ ! -f "$state/rc" ]; do sleep 2; done
	rc=$(cat "$state/rc" 2>/dev/null || echo "still running")
	{
		cat "$state/summary.txt"
		date -u +"end: %Y-%m-%dT%H:%M:%SZ"
		echo "rc: $rc"
		grep -E '^(--- |ok|FAIL|PASS)|soak|WARNING: DATA RACE|panic' "$state/soak.log"
	} > "$OUT/soak-summary.txt"
	cp "$state/soak.log" "$OUT/soak-race.log"
	cat "$OUT/soak-summary.txt"
	[ "$rc" = 0 ]
	;;
plain)
	dur=${2:-4m}
	status=0
	CUDAGEN_SOAK=$dur timeout 330 ./.gpu/cuda_test.$(cat .gpu/newest).test -test.v -test.count=1 -test.run '^TestLayerSoak$' > "$OUT/soak-plain.log" 2>&1 || status=1
	timeout 120 ./.gpu/cuda_test.$(cat .gpu/newest).test -test.v -test.count=1 -test.run '^(TestIPCExporterDeath|TestLayerMisuse|TestLayerSpinCancelThenClose|TestLayerCreateCloseMillion)$' > "$OUT/reliability.log" 2>&1
	rc=$?
	echo "reliability tests rc: $rc" >> "$OUT/reliability.log"
	[ $rc = 0 ] || status=1
	grep -E '^(--- |ok|FAIL|PASS)|soak|rc:' "$OUT/soak-plain.log" "$OUT/reliability.log"
	exit $status
	;;
*)
	echo "usage: tools/gpu-soak.sh start [DURATION] | collect | plain [DURATION]" >&2
	exit 2
	;;
esac
