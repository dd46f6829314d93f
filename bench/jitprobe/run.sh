#!/usr/bin/env bash
# The driver's PTX JIT compiler without Go, on a GPU machine with the
# toolkit (docs/runs/gpu-runs.md, 2026-11-28): whether the driver reads a
# module image after the load (imgprobe), whether cold-JIT loads crash
# from C alone (jitstress), and in which call the driver compiles PTX
# (jitwhere: each step timed, module and context-independent library
# loading), and whether loads and unloads of modules survive GLOBAL or
# RELAXED captures on another thread (unloadcapture: the runs that crashed are
# counted, not failed: the crash is the driver's), and whether a JIT link
# whose calls are spread over threads, as a goroutine's are, and cold loads
# after it survive (linkthreads, the driver's link or nvJitLink's: counted
# likewise; golink, the driver's link from Go, with its goroutine on one
# thread or free to move, where bench/gpu-bench-build.sh built it). About
# five minutes.
#   bash bench/jitprobe/run.sh
set -uo pipefail
cd "$(dirname "$0")"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
nvcc -ptx -arch=compute_75 k.cu -o "$d/k.ptx" || exit 1
gcc -O1 -Wall -I/usr/local/cuda/include -o "$d/imgprobe" imgprobe.c -lcuda || exit 1
gcc -O1 -Wall -I/usr/local/cuda/include -o "$d/jitstress" jitstress.c -lcuda -lpthread || exit 1
gcc -O1 -Wall -I/usr/local/cuda/include -o "$d/jitwhere" jitwhere.c -lcuda || exit 1
gcc -O1 -Wall -I/usr/local/cuda/include -o "$d/unloadcapture" unloadcapture.c -lcuda -lpthread || exit 1
gcc -O1 -Wall -I/usr/local/cuda/include -o "$d/linkthreads" linkthreads.c -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lnvJitLink -lcuda -lpthread || exit 1
status=0
for lm in LAZY EAGER; do for cd in 0 1; do for mode in 0 1 2; do
	echo -n "imgprobe CUDA_MODULE_LOADING=$lm CUDA_CACHE_DISABLE=$cd: "
	CUDA_MODULE_LOADING=$lm CUDA_CACHE_DISABLE=$cd "$d/imgprobe" "$d/k.ptx" $mode || status=1
done; done; done
export CUDA_CACHE_DISABLE=1
for lm in LAZY EAGER; do for mode in module library library-fn; do
	echo "jitwhere $mode, CUDA_MODULE_LOADING=$lm:"
	CUDA_MODULE_LOADING=$lm timeout 60 "$d/jitwhere" "$d/k.ptx" $mode || status=1
done; done
for v in "1 150 0 0 0" "1 150 1 0 0" "1 100 0 0 4" "4 60 0 0 0" "4 60 1 0 4" "8 40 1 1024 4"; do
	echo -n "jitstress $v: "
	# shellcheck disable=SC2086
	timeout 60 "$d/jitstress" "$d/k.ptx" $v || { echo "FAIL (exit $?)"; status=1; }
done
unset CUDA_CACHE_DISABLE
for v in "0 0" "1 0" "0 1" "1 1" "0 2" "1 2"; do
	crashed=0
	for _ in $(seq 10); do
		# shellcheck disable=SC2086
		timeout 60 "$d/unloadcapture" "$d/k.ptx" 3000 $v > /dev/null 2>&1 || crashed=$((crashed + 1))
	done
	echo "unloadcapture 3000 $v (signals; capture: 0 none, 1 GLOBAL, 2 RELAXED): $crashed of 10 runs crashed"
done
export CUDA_CACHE_DISABLE=1
for linker in cu nvjitlink; do for v in 0 1; do
	crashed=0 failed=0
	for _ in $(seq 10); do
		timeout 60 "$d/linkthreads" "$d/k.ptx" 20 5 $v $linker > "$d/out" 2>&1
		rc=$?
		if [ $rc -gt 128 ] && [ $rc -ne 137 ]; then
			crashed=$((crashed + 1))
		elif [ $rc -ne 0 ]; then
			failed=$((failed + 1))
			tail -n 2 "$d/out"
		fi
	done
	echo "linkthreads 20 5 $v $linker (the link's calls: 0 on one thread, 1 spread over four): $crashed of 10 runs crashed, $failed failed otherwise (a refused call, or cut at 60 s)"
	[ $failed -eq 0 ] || status=1
done; done
# The same link from Go (bench/gpu-bench-build.sh builds it), its goroutine
# on one OS thread or free to move.
if [ -x ../../.gpu/golink ]; then
	for lock in -lock ""; do
		crashed=0 failed=0 threads=""
		for _ in $(seq 10); do
			# shellcheck disable=SC2086
			timeout 60 ../../.gpu/golink $lock -rounds 20 -loads 5 "$d/k.ptx" > "$d/out" 2>&1
			rc=$?
			if [ $rc -gt 128 ] && [ $rc -ne 137 ] || grep -q '^SIGSEGV' "$d/out"; then
				crashed=$((crashed + 1))
				# the first crash: where (Go's PC line and the libraries' mappings)
				[ $crashed -gt 1 ] || grep -E '^(PC=|mapped:)|^SIG' "$d/out"
			elif [ $rc -ne 0 ]; then
				failed=$((failed + 1))
				tail -n 2 "$d/out"
			else
				threads="$threads $(grep -o 'on [0-9]* OS threads' "$d/out" | cut -d' ' -f2)"
			fi
		done
		echo "golink ${lock:-(goroutine free to move)}: $crashed of 10 runs crashed, $failed failed otherwise; OS threads of the link's calls in the runs that ended:$threads"
		[ $failed -eq 0 ] || status=1
	done
else
	echo "golink: not built (bash bench/gpu-bench-build.sh)"
fi
exit $status
