// jitwhere: in which call does the driver compile a PTX image? Run with the
// JIT cache off (CUDA_CACHE_DISABLE=1), it times each step of getting and
// launching a kernel from PTX: a compile takes milliseconds, any other step
// microseconds.
//   jitwhere k.ptx module   the primary context current, cuModuleLoadData,
//                           cuModuleGetFunction, the first launch (as
//                           CUDA_MODULE_LOADING says: LAZY or EAGER)
//   jitwhere k.ptx library  cuLibraryLoadData with no context current
//                           (context-independent loading), cuLibraryGetKernel,
//                           then with the primary context current the
//                           first launch of the kernel handle
//   jitwhere k.ptx library-fn  the same with cuKernelGetFunction before the
//                           launch
#include <cuda.h>
#include "image.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); printf("%s -> %s\n", #x, s); return 1; } } while (0)
static double t0;
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6; }
#define STEP(name, x) do { t0 = now(); CK(x); printf("  %-34s %8.3f ms\n", name, now() - t0); } while (0)
int main(int argc, char **argv) {
	if (argc != 3) return 2;
	long n;
	char *img = read_image(argv[1], &n);
	if (img == NULL) return 2;
	CUdevice d; CUcontext c; CUdeviceptr p;
	CK(cuInit(0)); CK(cuDeviceGet(&d, 0));
	void *a[] = {&p};
	if (strcmp(argv[2], "module") == 0) {
		CUmodule m; CUfunction f1;
		CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c)); CK(cuMemAlloc(&p, 128));
		STEP("cuModuleLoadData", cuModuleLoadData(&m, img));
		STEP("cuModuleGetFunction k1", cuModuleGetFunction(&f1, m, "k1"));
		STEP("first launch of k1 + sync", (cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, 0, a, 0) ?: cuCtxSynchronize()));
		STEP("second launch of k1 + sync", (cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, 0, a, 0) ?: cuCtxSynchronize()));
		return 0;
	}
	CUlibrary l; CUkernel k; CUfunction f1;
	STEP("cuLibraryLoadData (no context)", cuLibraryLoadData(&l, img, 0, 0, 0, 0, 0, 0));
	STEP("cuLibraryGetKernel k1", cuLibraryGetKernel(&k, l, "k1"));
	CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c)); CK(cuMemAlloc(&p, 128));
	if (strcmp(argv[2], "library-fn") == 0) {
		STEP("cuKernelGetFunction", cuKernelGetFunction(&f1, k));
	}
	STEP("first launch of the kernel + sync", (cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, 0, a, 0) ?: cuCtxSynchronize()));
	STEP("second launch + sync", (cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, 0, a, 0) ?: cuCtxSynchronize()));
	return 0;
}
