#!/usr/bin/env bash
# One-off evidence runs on the GPU machine (no Go needed there), in one
# command: bash tools/gpu-probe.sh. Logs go to $OUT.
#  - ctxprobe: what the driver does with handle calls under another, no,
#    destroyed or released current context (tools/ctxprobe/ctxprobe.c);
#  - where the ~2x process-to-process spread comes from: tools/cbench in
#    fresh processes pinned to one CPU (taskset), per CPU, and unpinned.
set -uo pipefail
OUT=${OUT:-/tmp/cudagen-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
inc=/usr/local/cuda/include
{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	lscpu | grep -E 'Model name|^CPU\(s\)|NUMA|Thread|Socket|MHz'
	nvidia-smi topo -m 2>/dev/null | head -5
} > "$OUT/machine.txt" 2>&1
gcc -O2 -I"$inc" -o /tmp/ctxprobe tools/ctxprobe/ctxprobe.c -lcuda -lpthread &&
	/tmp/ctxprobe > "$OUT/ctxprobe.txt" 2>&1
echo "ctxprobe rc $?" >> "$OUT/ctxprobe.txt"
gcc -O2 -I"$inc" -o /tmp/cbench tools/cbench/cbench.c -lcuda || exit 1
n=$(nproc)
{
	for round in 1 2 3; do
		for cpu in $(seq 0 2 $((n - 1))); do
			printf 'cpu %-3s ' "$cpu"
			taskset -c "$cpu" /tmp/cbench 20000 3 | awk '/^(Record|Query|SyncDone) /{printf "%s %s  ", $1, $2}'
			echo
		done
		for i in 1 2 3 4; do
			printf 'free    '
			/tmp/cbench 20000 3 | awk '/^(Record|Query|SyncDone) /{printf "%s %s  ", $1, $2}'
			echo
		done
	done
} > "$OUT/pinning.txt" 2>&1
echo done
