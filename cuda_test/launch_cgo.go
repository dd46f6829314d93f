//go:build cgo

package gputest

// The C side of the launch comparison: n launches of a kernel through
// cuLaunchKernel's entry point with kernelParams, timed inside C.

/*
#include <stdint.h>
#include <time.h>
static long long cudagen_launch_loop(uintptr_t fn, uintptr_t f, uintptr_t stream, int nargs, long n) {
	unsigned long long vals[16];
	void *params[16];
	for (int i = 0; i < nargs && i < 16; i++) {
		vals[i] = (unsigned long long)i;
		params[i] = &vals[i];
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = 0;
	for (long i = 0; i < n; i++) {
		r |= ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))fn)(
			(void *)f, 1, 1, 1, 1, 1, 1, 0, (void *)stream, params, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (r) return -(long long)r;
	return (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
}
*/
import "C"

// launchLoopC launches f n times with nargs 8-byte arguments from C and
// returns the nanoseconds it took, or the negated CUresult of a failure.
func launchLoopC(fn, f, stream uintptr, nargs, n int) int64 {
	return int64(C.cudagen_launch_loop(C.uintptr_t(fn), C.uintptr_t(f), C.uintptr_t(stream), C.int(nargs), C.long(n)))
}
