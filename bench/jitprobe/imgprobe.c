// imgprobe: does the driver read a module image after cuModuleLoadData
// returns? It loads PTX from a malloc'ed buffer, then keeps (mode 0),
// overwrites (1) or frees (2) the buffer before it gets and launches the
// module's two kernels, and checks what they wrote.
//   imgprobe k.ptx MODE
#include <cuda.h>
#include "image.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); printf("%s -> %s\n", #x, s); return 1; } } while (0)
int main(int argc, char **argv) {
	if (argc != 3) return 2;
	long n;
	char *img = read_image(argv[1], &n);
	if (img == NULL) return 2;
	int mode = atoi(argv[2]);
	CUdevice d; CUcontext c; CUmodule m; CUfunction f1, f2; CUdeviceptr p;
	CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
	CK(cuModuleLoadData(&m, img));
	if (mode == 1) memset(img, 'x', n);
	if (mode == 2) { memset(img, 0, n); free(img); }
	CK(cuModuleGetFunction(&f1, m, "k1"));
	CK(cuModuleGetFunction(&f2, m, "k2"));
	CK(cuMemAlloc(&p, 128));
	void *a[] = {&p};
	int h[32];
	CK(cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, 0, a, 0)); CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h, p, 128));
	int ok1 = h[5] == 12;
	CK(cuLaunchKernel(f2, 1, 1, 1, 32, 1, 1, 0, 0, a, 0)); CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h, p, 128));
	int ok2 = h[5] == 15;
	printf("mode %d: k1 %s, k2 %s\n", mode, ok1 ? "ok" : "WRONG", ok2 ? "ok" : "WRONG");
	return ok1 && ok2 ? 0 : 1;
}
