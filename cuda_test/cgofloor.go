//go:build cgo

package gputest

// Diagnostics for the benchmarks: the cost of one cgo crossing to an empty C
// function (the floor under every driver call made from Go), and a loop of
// driver calls made inside C on a Go-created thread (the driver's own cost
// there, without any crossing).

/*
#include <stdint.h>
static void cudagen_noop(void) {}
static int cudagen_loop1(uintptr_t fn, uintptr_t a, long n) {
	int r = 0;
	for (long i = 0; i < n; i++) {
		r |= ((int (*)(void *))fn)((void *)a);
	}
	return r;
}
static int cudagen_loop2(uintptr_t fn, uintptr_t a, uintptr_t b, long n) {
	int r = 0;
	for (long i = 0; i < n; i++) {
		r |= ((int (*)(void *, void *))fn)((void *)a, (void *)b);
	}
	return r;
}
// No noescape or nocallback: none takes a Go pointer, and nocallback costs
// two runtime calls per crossing; the floor is the plainest crossing.
*/
import "C"

import "github.com/cudagen/cudagen/internal/cpuclock"

func cgoNoop() { C.cudagen_noop() }

// clockGHz is the CPU's effective clock now (0 where unknown): the same
// loop as bench/cbench/clock.h's and the side-by-side peers', which on the
// GPU machine moves between about 1 and 3 GHz, and every CPU figure with it.
func clockGHz() float64 { return cpuclock.GHz() }

// loopInC calls fn(a) n times inside one cgo call and returns the OR of the
// results.
func loopInC(fn, a uintptr, n int) int {
	return int(C.cudagen_loop1(C.uintptr_t(fn), C.uintptr_t(a), C.long(n)))
}

// loopInC2 calls fn(a, b) n times inside one cgo call.
func loopInC2(fn, a, b uintptr, n int) int {
	return int(C.cudagen_loop2(C.uintptr_t(fn), C.uintptr_t(a), C.uintptr_t(b), C.long(n)))
}
