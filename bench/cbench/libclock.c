// libclock: clock.h's clock for bench/pybench, through ctypes, and the C
// launch loop its launch run compares with
// (tools/gpu-suite.sh builds it: gcc -O2 -shared -fPIC).
#include "clock.h"

double cudagen_clock_ghz(void) { return clock_ghz(); }

#include <stdint.h>

// cudagen_launch_loop launches the kernel f n times on stream through fn,
// cuLaunchKernel's entry point, with nargs (at most 16) 8-byte arguments,
// kernelParams built once, as a C program would: bench/pybench's launch
// run, in the Python process, against which the binding's launch is
// compared. It returns the ns the n launches took, or the failing
// CUresult negated.
long long cudagen_launch_loop(uintptr_t fn, uintptr_t f, uintptr_t stream, int nargs, long n) {
	unsigned long long vals[16];
	void *params[16];
	if (nargs < 0 || nargs > 16) return -1;
	for (int i = 0; i < 16; i++) {
		vals[i] = (unsigned long long)i;
		params[i] = &vals[i];
	}
	double t0 = now();
	int r = 0;
	for (long i = 0; i < n; i++) {
		r |= ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))fn)(
			(void *)f, 1, 1, 1, 1, 1, 1, 0, (void *)stream, params, 0);
	}
	double t1 = now();
	if (r) return -(long long)r;
	return (long long)(t1 - t0);
}
