// linkthreads: whether a JIT link survives its calls being made on
// different threads, as a goroutine's are when Go moves it between OS
// threads, and whether cold loads survive it afterwards. Four threads live
// for the whole run, as a Go program's do. Each round makes one link as
// cuda_test's TestMemRulesLinkLogs does: info and error logs in page-locked
// memory allocated for it, verbose logging; cuLinkCreate, cuLinkAddData of
// the PTX, cuLinkComplete (the image copied), a cuLinkAddData of text that
// is not PTX (it fills the error log), then cuLinkDestroy, the logs freed
// and the copied image loaded and unloaded. With SPREAD 0 thread 0 makes
// all five steps; with 1 they go to threads 0, 1, 2, 3 and 1. Then each
// thread in turn loads and unloads LOADS modules of distinct PTX text, so
// that each is compiled (run with CUDA_CACHE_DISABLE=1). With LINKER
// nvjitlink the link is nvJitLink's instead (nvJitLinkCreate for the
// device's architecture, AddData, Complete and the linked cubin copied, a
// bad AddData, Destroy), with no logs given. A crash ends the process by
// its signal; a refused call exits 1.
//   linkthreads K.PTX ROUNDS LOADS SPREAD [cu|nvjitlink]
#include <cuda.h>
#include <nvJitLink.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "image.h"
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); printf("%s -> %s\n", #x, s); exit(1); } } while (0)

enum { THREADS = 4, LOG = 4096 };
static CUcontext ctx;
static char *ptx;
static long ptxn;
static int rounds, loads, spread, nvj;
static char *info, *elog, *image;
static nvJitLinkHandle jl;
static char arch[32];
#define NK(x) do { nvJitLinkResult r_ = (x); if (r_) { printf("%s -> nvJitLink %d\n", #x, (int)r_); exit(1); } } while (0)

// nvjcall makes nvJitLink's link call k (as call's).
static void nvjcall(int k) {
	size_t size;
	switch (k) {
	case 0: {
		const char *opts[1] = {arch};
		NK(nvJitLinkCreate(&jl, 1, opts));
		break;
	}
	case 1: NK(nvJitLinkAddData(jl, NVJITLINK_INPUT_PTX, ptx, ptxn + 1, "store.ptx")); break;
	case 2:
		NK(nvJitLinkComplete(jl));
		NK(nvJitLinkGetLinkedCubinSize(jl, &size));
		if ((image = malloc(size)) == NULL) exit(1);
		NK(nvJitLinkGetLinkedCubin(jl, image));
		break;
	case 3: nvJitLinkAddData(jl, NVJITLINK_INPUT_PTX, "not ptx", 8, "bad.ptx"); break; // refused
	case 4: {
		CUmodule m;
		NK(nvJitLinkDestroy(&jl));
		CK(cuModuleLoadData(&m, image));
		CK(cuModuleUnload(m));
		free(image);
		break;
	}
	}
}
static pthread_barrier_t step;
static CUlinkState lstate;
static CUjit_option opts[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
static void *vals[5];

// call makes link call k (0 create, 1 add, 2 complete, 3 bad add, 4 destroy).
static void call(int k) {
	if (nvj) {
		nvjcall(k);
		return;
	}
	void *cubin;
	size_t size;
	switch (k) {
	case 0:
		CK(cuMemAllocHost((void **)&info, LOG));
		CK(cuMemAllocHost((void **)&elog, LOG));
		vals[0] = info, vals[1] = (void *)(uintptr_t)LOG, vals[2] = elog, vals[3] = (void *)(uintptr_t)LOG, vals[4] = (void *)1;
		CK(cuLinkCreate(5, opts, vals, &lstate));
		break;
	case 1: CK(cuLinkAddData(lstate, CU_JIT_INPUT_PTX, ptx, ptxn + 1, "store.ptx", 0, NULL, NULL)); break;
	case 2:
		CK(cuLinkComplete(lstate, &cubin, &size));
		if ((image = malloc(size)) == NULL) exit(1);
		memcpy(image, cubin, size);
		break;
	case 3: cuLinkAddData(lstate, CU_JIT_INPUT_PTX, "not ptx", 8, "bad.ptx", 0, NULL, NULL); break; // refused: it fills the error log
	case 4: {
		CUmodule m;
		CK(cuLinkDestroy(lstate));
		CK(cuMemFreeHost(info));
		CK(cuMemFreeHost(elog));
		CK(cuModuleLoadData(&m, image));
		CK(cuModuleUnload(m));
		free(image);
		break;
	}
	}
}

// loadSome loads and unloads loads modules, each of new text.
static void loadSome(int t, int round) {
	char *img = malloc(ptxn + 64);
	if (img == NULL) exit(1);
	for (int i = 0; i < loads; i++) {
		int n = sprintf(img, "// %d %d %d\n", t, round, i);
		memcpy(img + n, ptx, ptxn + 1);
		CUmodule m;
		CK(cuModuleLoadData(&m, img));
		CK(cuModuleUnload(m));
	}
	free(img);
}

static void *worker(void *arg) {
	int t = (int)(intptr_t)arg;
	CK(cuCtxSetCurrent(ctx));
	static const int spreadTo[5] = {0, 1, 2, 3, 1};
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 5; k++) {
			if (t == (spread ? spreadTo[k] : 0)) call(k);
			pthread_barrier_wait(&step);
		}
		for (int w = 0; w < THREADS; w++) {
			if (t == w) loadSome(t, r);
			pthread_barrier_wait(&step);
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc < 5 || argc > 6 || (ptx = read_image(argv[1], &ptxn)) == NULL) {
		fprintf(stderr, "usage: linkthreads K.PTX ROUNDS LOADS SPREAD [cu|nvjitlink]\n");
		return 2;
	}
	rounds = atoi(argv[2]), loads = atoi(argv[3]), spread = atoi(argv[4]);
	nvj = argc == 6 && strcmp(argv[5], "nvjitlink") == 0;
	CUdevice d;
	int major, minor;
	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
	CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d));
	snprintf(arch, sizeof arch, "-arch=sm_%d%d", major, minor);
	CK(cuDevicePrimaryCtxRetain(&ctx, d));
	CK(cuCtxSetCurrent(ctx));
	pthread_barrier_init(&step, NULL, THREADS);
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++) {
		if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0) {
			printf("pthread_create failed\n");
			return 1;
		}
	}
	for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
	printf("%d rounds of a %s link (calls %s) and %d cold loads a thread a round: no crash\n", rounds, nvj ? "nvJitLink" : "driver", spread ? "spread over 4 threads" : "on one thread", loads);
	return 0;
}
