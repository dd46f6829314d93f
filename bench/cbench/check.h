// What the C benchmarks that call the driver share (cbench.c):
// CHECK, which ends the program on a driver error other than not-ready,
// cmp, which orders doubles for qsort, and primary.
#ifndef CUDAGEN_CHECK_H
#define CUDAGEN_CHECK_H
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS && r_ != CUDA_ERROR_NOT_READY) { \
	fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static inline int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// primary makes device 0's primary context current on this thread.
static inline void primary(void) {
	CUdevice dev;
	CUcontext ctx;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
}
#endif
