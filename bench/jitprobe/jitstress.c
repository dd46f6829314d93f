// jitstress: the driver's PTX JIT compiler without Go. T threads each load
// ITERS distinct PTX modules (a comment makes each text new, so each is
// compiled), launching one kernel of each, the primary context retained
// and released around every load, optionally on a new thread per load
// (stack STACKKB KiB, 0: the default); S threads meanwhile create, record,
// sync and destroy events on 1 MiB stacks with every signal blocked.
//   jitstress k.ptx T ITERS NEWTHREAD STACKKB S
#include <cuda.h>
#include "image.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *ptx;
static long ptxn;
static int iters, newthread, stackkb;
static volatile int stop;
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); printf("%s -> %s\n", #x, s); exit(1); } } while (0)
static void one(int id, int i) {
	CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUdeviceptr p;
	CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
	char *img = malloc(ptxn + 64);
	int n = sprintf(img, "// %d %d\n", id, i);
	memcpy(img + n, ptx, ptxn + 1);
	CK(cuModuleLoadData(&m, img));
	free(img);
	CK(cuModuleGetFunction(&f, m, "k1")); CK(cuMemAlloc(&p, 128));
	void *a[] = {&p};
	CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, a, 0)); CK(cuCtxSynchronize());
	CK(cuMemFree(p)); CK(cuModuleUnload(m)); CK(cuCtxSetCurrent(NULL)); CK(cuDevicePrimaryCtxRelease(d));
}
struct arg { int id, i; };
static void *one_th(void *v) { struct arg *a = v; one(a->id, a->i); return NULL; }
static pthread_t start(void *(*fn)(void *), void *arg, int kb) {
	pthread_attr_t at;
	pthread_t th;
	pthread_attr_init(&at);
	if (kb) pthread_attr_setstacksize(&at, (size_t)kb << 10);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&th, &at, fn, arg)) { printf("pthread_create failed\n"); exit(1); }
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return th;
}
static void *worker(void *v) {
	int id = (int)(long)v;
	for (int i = 0; i < iters; i++) {
		if (newthread) {
			struct arg a = {id, i};
			pthread_join(start(one_th, &a, stackkb), NULL);
		} else {
			one(id, i);
		}
	}
	return NULL;
}
static void *syncer(void *v) {
	(void)v;
	CUdevice d; CUcontext c; CUstream s;
	CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
	CK(cuStreamCreate(&s, 1));
	while (!stop) {
		CUevent e;
		CK(cuEventCreate(&e, 0)); CK(cuEventRecord(e, s)); CK(cuEventSynchronize(e)); CK(cuEventDestroy(e));
	}
	CK(cuStreamDestroy(s)); CK(cuDevicePrimaryCtxRelease(d));
	return NULL;
}
int main(int argc, char **argv) {
	if (argc != 7) return 2;
	ptx = read_image(argv[1], &ptxn);
	if (ptx == NULL) return 2;
	int T = atoi(argv[2]), S = atoi(argv[6]);
	iters = atoi(argv[3]); newthread = atoi(argv[4]); stackkb = atoi(argv[5]);
	if (T < 1 || T > 16 || S < 0 || S > 8) return 2;
	CK(cuInit(0));
	pthread_t sy[8], w[16];
	for (int i = 0; i < S; i++) sy[i] = start(syncer, NULL, 1024);
	for (int i = 0; i < T; i++) w[i] = start(worker, (void *)(long)i, 0);
	for (int i = 0; i < T; i++) pthread_join(w[i], NULL);
	stop = 1;
	for (int i = 0; i < S; i++) pthread_join(sy[i], NULL);
	printf("PASS T=%d iters=%d newthread=%d stackkb=%d syncers=%d\n", T, iters, newthread, stackkb, S);
	return 0;
}
