//go:build cgo

package gputest

// The C side of the copy comparison: one asynchronous copy between
// page-locked host memory and the device through the driver's entry point
// (cuMemcpyHtoDAsync_v2 or cuMemcpyDtoHAsync_v2), then cuStreamSynchronize,
// timed inside C.

/*
#include <stdint.h>
#include <time.h>
static long long cudagen_copy(uintptr_t copy, uintptr_t sync, unsigned long long dptr, uintptr_t host, size_t n, uintptr_t stream, int toDevice) {
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = toDevice
		? ((int (*)(unsigned long long, const void *, size_t, void *))copy)(dptr, (const void *)host, n, (void *)stream)
		: ((int (*)(void *, unsigned long long, size_t, void *))copy)((void *)host, dptr, n, (void *)stream);
	if (r == 0) r = ((int (*)(void *))sync)((void *)stream);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (r) return -(long long)r;
	return (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
}
*/
import "C"

// copyC copies n bytes between page-locked host memory and the device
// address dptr on stream through the entry point copy, then synchronizes
// the stream through sync, and returns the nanoseconds it took, or the
// negated CUresult of a failure.
func copyC(copy, sync uintptr, dptr uint64, host uintptr, n int, stream uintptr, toDevice bool) int64 {
	td := 0
	if toDevice {
		td = 1
	}
	return int64(C.cudagen_copy(C.uintptr_t(copy), C.uintptr_t(sync), C.ulonglong(dptr), C.uintptr_t(host), C.size_t(n), C.uintptr_t(stream), C.int(td)))
}
