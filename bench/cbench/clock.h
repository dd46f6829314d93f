// The clock of cudagen's C benchmarks (cbench.c, libclock.c):
// now() in ns, and clock_ghz(), the CPU's effective clock. On the GPU
// machine that clock moves between about 1.4 and 2.9 GHz from one moment to
// the next, and every per-call figure moves with it (docs/performance.md),
// so the benchmarks measure it around each loop and also report
// cycles per call. bench/peers/peerbench runs the same instructions in Go.
#ifndef CUDAGEN_CLOCK_H
#define CUDAGEN_CLOCK_H
#include <time.h>

static inline double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

// clock_ghz times CLOCK_SPIN iterations of one macro-fused decrement and
// branch, one per cycle: GHz. 0 where the loop is not written (not x86-64).
#define CLOCK_SPIN 4000000L
static inline double clock_ghz(void) {
#if defined(__x86_64__)
	long n = CLOCK_SPIN;
	double t0 = now();
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n));
	return CLOCK_SPIN / (now() - t0);
#else
	return 0;
#endif
}
#endif
