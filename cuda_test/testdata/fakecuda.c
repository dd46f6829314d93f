// fakecuda: a stand-in for libcuda.so.1 with no GPU behind it. CI runs the
// tests of the Go layer's own behaviour against it (fakedriver_test.go:
// allocations, Close and its races, contexts on many threads, the version
// checks), and it measures what the Go layer adds to a driver call that costs
// nothing (the benchmarks, run with CUDAGEN_LIBCUDA pointing at it).
//
// Every entry point the bindings resolve is here, doing the least that keeps
// the bookkeeping consistent: one device, a per-thread current context,
// events complete the moment they are recorded, streams are always idle,
// kernels cannot be loaded. It is no model of the driver's semantics: the GPU
// tests are the proof of those, and most of them fail against it.
//
//   gcc -O2 -shared -fPIC -o libfakecuda.so cuda_test/testdata/fakecuda.c
//   CUDAGEN_LIBCUDA=$PWD/libfakecuda.so go test -bench . ./cuda_test
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
enum {
	OK = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, INVALID_CONTEXT = 201,
	INVALID_HANDLE = 400, NOT_FOUND = 500, NOT_SUPPORTED = 801,
};
#define DISABLE_TIMING 0x2u
#define INTERPROCESS 0x4u

// Handles are never freed, so that a call with a destroyed handle is caught
// (CUDA_ERROR_INVALID_HANDLE) rather than undefined.
enum { LIVE = 0x6576656e, DEAD = 0x64656164 };
typedef struct { int magic; unsigned flags; int recorded; } event;
typedef struct { int magic; } stream;
static int ctx_tag[4];  // a context is the address of its device's tag
static __thread void *current;

// FAKECUDA_HOLD_NS makes each call on an event or stream hold the handle
// that long, checking it before and after: a handle destroyed while a call is
// inside the driver is then caught too.
static long long hold_ns;

static long long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int dead(const int *magic) {
	if (*magic != LIVE) return 1;
	if (hold_ns > 0) {
		long long t0 = now_ns();
		while (now_ns() - t0 < hold_ns) {
		}
		return *(volatile const int *)magic != LIVE;
	}
	return 0;
}

static int bad_event(void *e) { return e == NULL || dead(&((event *)e)->magic); }
static int bad_stream(void *s) { return s != NULL && dead(&((stream *)s)->magic); }

static CUresult cuInit(unsigned flags) {
	(void)flags;
	const char *s = getenv("FAKECUDA_HOLD_NS");
	hold_ns = s ? atoll(s) : 0;
	return OK;
}
CUresult cuDriverGetVersion(int *v) {
	const char *s = getenv("FAKECUDA_VERSION");
	*v = s ? atoi(s) : 13000;
	return OK;
}
static CUresult cuGetErrorName(CUresult r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return OK; }
static CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake driver error"; return OK; }
static CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
static CUresult cuDeviceGet(int *d, int ordinal) {
	if (ordinal != 0) return 101; // CUDA_ERROR_INVALID_DEVICE
	*d = ordinal;
	return OK;
}
static CUresult cuDeviceGetName(char *buf, int len, int dev) {
	(void)dev;
	strncpy(buf, "fakecuda", len);
	return OK;
}
static CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = &ctx_tag[dev]; return OK; }
static CUresult cuDevicePrimaryCtxRelease(int dev) { (void)dev; return OK; }
static CUresult cuCtxSetCurrent(void *ctx) { current = ctx; return OK; }
static CUresult cuCtxGetCurrent(void **ctx) { *ctx = current; return OK; }
static CUresult cuCtxGetDevice(int *d) {
	if (!current) return INVALID_CONTEXT;
	*d = (int)((int *)current - ctx_tag);
	return OK;
}
static CUresult cuCtxSynchronize(void) { return current ? OK : INVALID_CONTEXT; }
static CUresult cuStreamCreate(void **s, unsigned flags) {
	(void)flags;
	if (!current) return INVALID_CONTEXT;
	stream *st = malloc(sizeof *st);
	st->magic = LIVE;
	*s = st;
	return OK;
}
static CUresult cuStreamDestroy(void *s) {
	if (s == NULL || bad_stream(s)) return INVALID_HANDLE;
	((stream *)s)->magic = DEAD;
	return OK;
}
static CUresult cuStreamSynchronize(void *s) { return bad_stream(s) ? INVALID_HANDLE : OK; }
static CUresult cuStreamQuery(void *s) { return bad_stream(s) ? INVALID_HANDLE : OK; }
static CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
	if (bad_stream(s) || bad_event(e)) return INVALID_HANDLE;
	return flags ? 401 : OK; // CUDA_ERROR_ILLEGAL_STATE: outside capture
}
static CUresult cuEventCreate(void **e, unsigned flags) {
	if (!current) return INVALID_CONTEXT;
	event *ev = calloc(1, sizeof *ev);
	ev->magic = LIVE;
	ev->flags = flags;
	*e = ev;
	return OK;
}
static CUresult cuEventRecord(void *e, void *s) {
	if (bad_event(e) || bad_stream(s)) return INVALID_HANDLE;
	((event *)e)->recorded = 1;
	return OK;
}
static CUresult cuEventRecordWithFlags(void *e, void *s, unsigned flags) {
	if (flags) return 401; // CUDA_ERROR_ILLEGAL_STATE: outside capture
	return cuEventRecord(e, s);
}
static CUresult cuEventQuery(void *e) { return bad_event(e) ? INVALID_HANDLE : OK; }
static CUresult cuEventSynchronize(void *e) { return bad_event(e) ? INVALID_HANDLE : OK; }
static CUresult cuEventDestroy(void *e) {
	if (bad_event(e)) return INVALID_HANDLE;
	((event *)e)->magic = DEAD;
	return OK;
}
// Like the driver: it needs a current context, and both events recorded with
// timing.
static CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
	event *x = a, *y = b;
	if (!current || bad_event(a) || bad_event(b)) return INVALID_HANDLE;
	if ((x->flags | y->flags) & DISABLE_TIMING || !x->recorded || !y->recorded) return INVALID_HANDLE;
	*ms = 0;
	return OK;
}
static CUresult cuIpcGetEventHandle(void *h, void *e) {
	if (bad_event(e)) return INVALID_HANDLE;
	if (!(((event *)e)->flags & INTERPROCESS)) return INVALID_VALUE;
	memset(h, 0, 64);
	memcpy(h, &e, sizeof e);
	return OK;
}
typedef struct { char b[64]; } ipc_handle;
// The driver refuses a handle exported by the same process; so does this.
static CUresult cuIpcOpenEventHandle(void **e, ipc_handle h) { (void)e; (void)h; return INVALID_CONTEXT; }
static CUresult cuLaunchHostFunc(void *s, void (*fn)(void *), void *data) {
	if (bad_stream(s)) return INVALID_HANDLE;
	fn(data);
	return OK;
}
static CUresult cuModuleLoadData(void **m, const void *img) { (void)m; (void)img; return NOT_SUPPORTED; }
static CUresult cuModuleUnload(void *m) { (void)m; return OK; }
static CUresult cuModuleGetFunction(void **f, void *m, const char *name) { (void)f; (void)m; (void)name; return NOT_FOUND; }
static CUresult cuLaunchKernel(void) { return NOT_SUPPORTED; }

static const struct { const char *name; void *fn; } procs[] = {
#define P(f) {#f, (void *)f}
	P(cuInit), P(cuDriverGetVersion), P(cuGetErrorName), P(cuGetErrorString),
	P(cuDeviceGetCount), P(cuDeviceGet), P(cuDeviceGetName),
	P(cuDevicePrimaryCtxRetain), P(cuDevicePrimaryCtxRelease),
	P(cuCtxSetCurrent), P(cuCtxGetCurrent), P(cuCtxGetDevice), P(cuCtxSynchronize),
	P(cuStreamCreate), P(cuStreamDestroy), P(cuStreamSynchronize), P(cuStreamQuery), P(cuStreamWaitEvent),
	P(cuEventCreate), P(cuEventRecord), P(cuEventRecordWithFlags), P(cuEventQuery),
	P(cuEventSynchronize), P(cuEventDestroy), P(cuEventElapsedTime),
	P(cuIpcGetEventHandle), P(cuIpcOpenEventHandle), P(cuLaunchHostFunc),
	P(cuModuleLoadData), P(cuModuleUnload), P(cuModuleGetFunction), P(cuLaunchKernel),
#undef P
};

static void *find(const char *name) {
	for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
		if (strcmp(procs[i].name, name) == 0) return procs[i].fn;
	return NULL;
}

// The 11.x form and the 12.0 form (with the symbol status).
CUresult cuGetProcAddress(const char *name, void **fn, int version, unsigned long long flags) {
	(void)version; (void)flags;
	*fn = find(name);
	return *fn ? OK : NOT_FOUND;
}
CUresult cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags, int *status) {
	(void)version; (void)flags;
	*fn = find(name);
	if (status) *status = *fn ? 0 : 1;
	return OK;
}
