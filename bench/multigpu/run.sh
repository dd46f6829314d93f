#!/usr/bin/env bash
# Multi-GPU measurements side by side, on a machine with two or more GPUs
# (no Go needed): NCCL all-reduce through the Go bindings and through
# torch.distributed, and a device 0 to device 1 copy through the Go bindings
# and through C (peercopy.cu). From the repository root:
#   bash bench/multigpu/run.sh
# The Go side is .gpu/cuda_test.multigpu.test, built where Go is:
#   go test -c -o .gpu/cuda_test.multigpu.test ./cuda_test
# ROUNDS (3) rounds of Go (all ranks in one process, and a process per GPU:
# TestNCCLRankPerProcess), C and torch, each its own run, the order
# rotated every round. Output in OUT (/tmp/multigpu-out): raw-<what>-<round>.log,
# lines.txt (the result lines of every run) and summary.txt (the medians
# over all rounds and the ratios of Go to torch and to C). PY is the Python
# with torch (/opt/torch/.venv/bin/python); STEP_TIMEOUT (180) bounds each
# process in seconds.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/multigpu-out}
ROUNDS=${ROUNDS:-3}
PY=${PY:-/opt/torch/.venv/bin/python}
STEP_TIMEOUT=${STEP_TIMEOUT:-180}
gobin=.gpu/cuda_test.multigpu.test
# NVLink multicast (NVLS) stays off on these machines.
export NCCL_NVLS_ENABLE=0

mkdir -p "$OUT"
rm -f "$OUT"/raw-*.log
: > "$OUT/lines.txt"
: > "$OUT/failures.txt"
fail() { echo "FAILED: $*" | tee -a "$OUT/failures.txt"; }

{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit: /'
	echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
	nvidia-smi -L || echo "nvidia-smi -L failed"
	nvidia-smi topo -m || echo "nvidia-smi topo -m failed"
	echo "NCCL (/usr/include/nccl.h): $(sed -nE 's/^#define NCCL_(MAJOR|MINOR|PATCH) +([0-9]+).*/\2/p' /usr/include/nccl.h 2>/dev/null | paste -sd.)"
	echo "NCCL (torch): $("$PY" -c 'import torch;print(torch.cuda.nccl.version())' 2>&1 | tail -1)"
} | tee "$OUT/summary.txt"

# keep: the result lines of a log, without the test log's indentation and
# file:line prefix.
keep() {
	sed -E 's/^[[:space:]]+//; s/^[A-Za-z0-9_.-]+\.go:[0-9]+: //' "$1" | grep -E '^(allreduce|peercopy) ' >> "$OUT/lines.txt"
}

# step WHAT ROUND CMD...: runs CMD into raw-WHAT-ROUND.log and keeps its
# lines; a non-zero exit or no result lines is a failure.
step() {
	local what=$1 r=$2 log rc
	shift 2
	log=$OUT/raw-$what-$r.log
	echo "== round $r: $what"
	timeout "$STEP_TIMEOUT" "$@" > "$log" 2>&1
	rc=$?
	local before after
	before=$(wc -l < "$OUT/lines.txt")
	keep "$log"
	after=$(wc -l < "$OUT/lines.txt")
	if [ "$rc" -ne 0 ]; then
		fail "$what round $r: exit $rc ($log): $(tail -3 "$log" | tr '\n' ' ')"
	elif [ "$after" -eq "$before" ]; then
		fail "$what round $r: no result lines ($log)"
	fi
}

havec=1
echo "== build peercopy"
if ! nvcc -O2 -o /tmp/peercopy bench/multigpu/peercopy.cu > "$OUT/raw-build-peercopy.log" 2>&1; then
	havec=0
	fail "peercopy build: $(tail -3 "$OUT/raw-build-peercopy.log" | tr '\n' ' ')"
fi
havego=1
if [ ! -x "$gobin" ]; then
	havego=0
	fail "go: no $gobin (go test -c -o $gobin ./cuda_test, where Go is)"
fi
havepy=1
if [ ! -x "$PY" ]; then
	havepy=0
	fail "torch: no $PY"
fi

run_one() {
	case $1 in
	go) [ $havego = 1 ] && step go "$2" "$gobin" -test.run '^$' \
		-test.bench '^(BenchmarkNCCLAllReduce|BenchmarkPeerCopy)$' -test.benchtime 1x -test.v ;;
	goproc) [ $havego = 1 ] && step goproc "$2" "$gobin" -test.run '^TestNCCLRankPerProcess$' -test.v ;;
	c) [ $havec = 1 ] && step c "$2" /tmp/peercopy ;;
	torch) [ $havepy = 1 ] && step torch "$2" "$PY" bench/multigpu/torch_allreduce.py ;;
	esac
	return 0
}

impls=(go goproc c torch)
for r in $(seq 1 "$ROUNDS"); do
	for j in 0 1 2 3; do
		run_one "${impls[$(((r - 1 + j) % 4))]}" "$r"
	done
done

# Medians per (kind, impl, bytes) over every line of every round: busbw for
# allreduce, GBps for peercopy; then go/torch and go/c.
{
	echo
	echo "== medians over $ROUNDS rounds (GB = 1e9 bytes)"
	awk "$(cat bench/median.awk)"'
		function val(name,   i) {
			for (i = 3; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2)
			return ""
		}
		function has(k) { return (k in vals) }
		function med(k) { return has(k) ? sprintf("%.1f", median(vals[k])) : "-" }
		function ratio(a, b) { return has(a) && has(b) && median(vals[b]) > 0 ? sprintf("%.3f", median(vals[a]) / median(vals[b])) : "-" }
		{
			kind = $1; impl = $2; b = val("bytes")
			v = kind == "allreduce" ? val("busbw") : kind == "peercopy" ? val("GBps") : ""
			if (b == "" || v == "") next
			k = kind SUBSEP impl SUBSEP b
			vals[k] = vals[k] " " v
			cnt[k]++
			if (!((kind, b) in seen)) { seen[kind, b] = 1; nb[kind]++; sizes[kind, nb[kind]] = b }
			if (kind == "allreduce") {
				rk = val("ranks")
				if (!((b, impl) in ranks)) ranks[b, impl] = rk
			}
		}
		function sortsizes(kind,   i, j, t) {
			for (i = 1; i <= nb[kind]; i++) for (j = i + 1; j <= nb[kind]; j++)
				if (sizes[kind, j] + 0 < sizes[kind, i] + 0) { t = sizes[kind, i]; sizes[kind, i] = sizes[kind, j]; sizes[kind, j] = t }
		}
		END {
			sortsizes("allreduce")
			for (i = 1; i <= nb["allreduce"]; i++) {
				b = sizes["allreduce", i]
				g = "allreduce" SUBSEP "go" SUBSEP b; t = "allreduce" SUBSEP "torch" SUBSEP b
				rk = ((b, "go") in ranks) ? ranks[b, "go"] : ranks[b, "torch"]
				if (((b, "go") in ranks) && ((b, "torch") in ranks) && ranks[b, "go"] != ranks[b, "torch"])
					rk = "go " ranks[b, "go"] ", torch " ranks[b, "torch"]
				gp = "allreduce" SUBSEP "goproc" SUBSEP b
				printf "allreduce bytes=%s ranks=%s: go busbw %s GB/s (one process), %s (a process per GPU), torch %s GB/s, go/torch %s and %s (lines: go %d and %d, torch %d)\n",
					b, rk, med(g), med(gp), med(t), ratio(g, t), ratio(gp, t), cnt[g], cnt[gp], cnt[t]
			}
			sortsizes("peercopy")
			for (i = 1; i <= nb["peercopy"]; i++) {
				b = sizes["peercopy", i]
				g = "peercopy" SUBSEP "go" SUBSEP b; c = "peercopy" SUBSEP "c" SUBSEP b
				printf "peercopy bytes=%s: go %s GB/s, c %s GB/s, go/c %s (lines: go %d, c %d)\n",
					b, med(g), med(c), ratio(g, c), cnt[g], cnt[c]
			}
			if (!nb["allreduce"] && !nb["peercopy"]) print "no result lines"
		}' "$OUT/lines.txt"
	if [ -s "$OUT/failures.txt" ]; then
		echo "== failures"
		cat "$OUT/failures.txt"
	else
		echo "== failures: none"
	fi
} | tee -a "$OUT/summary.txt"
[ -s "$OUT/failures.txt" ] && exit 1
exit 0
