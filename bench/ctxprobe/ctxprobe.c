// ctxprobe: what the CUDA driver does with the calls on event and stream
// handles when the calling thread's current context is not the handles'
// context. It is the evidence behind the cuda package's context-free path
// (docs/performance.md): built and run on the GPU machine by tools/gpu-suite.sh
// (gcc against the toolkit's cuda.h, -lcuda -lpthread).
//
// The objects live in a context U (cuCtxCreate). For each state of the
// calling thread's current context it records an event on U's stream
// behind pending work (a chain of large memsets), queries it (want not
// ready), synchronizes, queries again (want success), times two events,
// makes another stream wait on the event, and prints each CUresult and
// what is current afterwards; then it launches a kernel of U's module on U's
// stream (cuLaunchKernel), which writes a value of its own to U's memory,
// and checks that the value landed, after asking for the kernel's first
// parameter (cuFuncGetParamInfo). States: U itself; none; another live context
// B; a context D destroyed by another thread while current here (the driver
// documents CUDA_ERROR_CONTEXT_IS_DESTROYED for it); the device's primary
// context P retained, made current and released to zero (inactive).
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static CUcontext U, D;
static CUstream s, s2, ds;
static CUevent e, ta, tb;
static CUdeviceptr buf, mark;
static CUfunction markFn;
static int launchFailures; // states where the launch did not run as with U current

// markPTX: mark(p, v) stores v at p.
static const char markPTX[] =
	".version 6.0\n.target sm_50\n.address_size 64\n"
	".visible .entry mark(.param .u64 p, .param .u32 v)\n{\n"
	"\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n"
	"\tld.param.u64 %rd1, [p];\n\tld.param.u32 %r1, [v];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";
static int failures; // handle calls that did not answer as with the handles' context current
static const size_t bufWords = (size_t)1 << 28; // 1 GiB of 32-bit words

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static const char *name(CUresult r) {
	const char *n = 0;
	if (cuGetErrorName(r, &n) != CUDA_SUCCESS || !n) return "?";
	return n;
}

// pending queues ~10ms of work on s (from U, made current for it).
static void pending(void) {
	CUcontext prev;
	CHECK(cuCtxPushCurrent(U));
	for (int i = 0; i < 8; i++) CHECK(cuMemsetD32Async(buf, (unsigned)i, bufWords, s));
	CHECK(cuCtxPopCurrent(&prev));
}

// emptyStack pops every context off this thread's stack: none is current.
static void emptyStack(void) {
	CUcontext c = 0, popped;
	for (int i = 0; i < 16 && cuCtxGetCurrent(&c) == CUDA_SUCCESS && c; i++)
		if (cuCtxPopCurrent(&popped) != CUDA_SUCCESS) break;
}

static void *destroyD(void *arg) {
	(void)arg;
	CUresult r = cuCtxDestroy(D);
	printf("  (another thread) cuCtxDestroy(D) = %s\n", name(r));
	return 0;
}

static const char *curName(CUcontext c, CUcontext B, CUcontext P) {
	if (c == 0) return "none";
	if (c == U) return "U";
	if (c == B) return "B";
	if (c == D) return "D (destroyed)";
	if (c == P) return "P (primary, released)";
	return "other";
}

static void probe(const char *state, CUcontext B, CUcontext P) {
	CUcontext cur = 0;
	cuCtxGetCurrent(&cur);
	printf("state %s: current before = %s (cuCtxGetCurrent)\n", state, curName(cur, B, P));
	pending();
	CUresult rec = cuEventRecord(e, s);
	CUresult q1 = cuEventQuery(e);
	CUresult rq = cuStreamQuery(s);
	CUresult wt = cuStreamWaitEvent(s2, e, 0);
	double t0 = now();
	CUresult sy = cuEventSynchronize(e);
	double waited = now() - t0;
	CUresult q2 = cuEventQuery(e);
	CUresult r1 = cuEventRecord(ta, s);
	CUresult r2 = cuEventRecord(tb, s);
	CUresult s1 = cuEventSynchronize(tb);
	float ms = -1;
	CUresult el = cuEventElapsedTime(&ms, ta, tb);
	CUresult ss = cuStreamSynchronize(s2);
	CUresult rf = cuEventRecordWithFlags(e, s, 0);
	CUresult sy2 = cuEventSynchronize(e);
	// Costs: 20000 queries of the done event in this state.
	t0 = now();
	CUresult qq = CUDA_SUCCESS;
	for (int i = 0; i < 20000; i++) qq = cuEventQuery(e);
	double qns = (now() - t0) / 20000;
	t0 = now();
	CUresult rr = CUDA_SUCCESS;
	for (int i = 0; i < 20000; i++) rr = cuEventRecord(e, s);
	double rns = (now() - t0) / 20000;
	cuEventSynchronize(e);
	// A default-stream record names the stream through the current context.
	CUresult rd = cuEventRecord(e, 0);
	CUresult sd = cuEventSynchronize(e);
	cuCtxGetCurrent(&cur);
	printf("  record %s, query right after %s (want CUDA_ERROR_NOT_READY), stream query %s, stream wait %s\n",
		name(rec), name(q1), name(rq), name(wt));
	printf("  sync %s (waited %.2f ms), query after %s, record ta %s tb %s sync tb %s, elapsed %s (%.3f ms), other stream sync %s\n",
		name(sy), waited / 1e6, name(q2), name(r1), name(r2), name(s1), name(el), ms, name(ss));
	printf("  record with flags %s, sync %s; 20000 queries %s %.1f ns each; 20000 records %s %.1f ns each\n",
		name(rf), name(sy2), name(qq), qns, name(rr), rns);
	if (rec || q1 != CUDA_ERROR_NOT_READY || rq != CUDA_ERROR_NOT_READY || wt || sy || q2 || r1 || r2 || s1 || el || ss || rf || sy2 || qq || rr) {
		printf("  UNEXPECTED: a handle call did not answer as with the handles' context current\n");
		failures++;
	}
	printf("  default-stream record %s, sync %s; current afterwards = %s\n", name(rd), name(sd), curName(cur, B, P));
	CUevent ne;
	CUresult cr = cuEventCreate(&ne, CU_EVENT_DISABLE_TIMING);
	printf("  cuEventCreate %s", name(cr));
	if (cr == CUDA_SUCCESS) {
		CUcontext owner = 0;
		// Which context got the new event: record it on U's stream (same
		// context, else CUDA_ERROR_INVALID_HANDLE).
		CUresult on = cuEventRecord(ne, s);
		printf(" (record on U's stream: %s)", name(on));
		(void)owner;
		cuEventSynchronize(ne);
		cuEventDestroy(ne);
	}
	printf("\n");
	// A launch of U's kernel on U's stream, in this state: the value it
	// stores must land, and what is current must not change.
	static unsigned value = 100;
	unsigned v = ++value;
	void *params[] = {&mark, &v};
	CUcontext curBefore = 0, curAfter = 0;
	cuCtxGetCurrent(&curBefore);
	// The kernel's parameters as the driver tells them (cuFuncGetParamInfo,
	// which the bindings' launch asks once per function): p at 0, 8 bytes.
	size_t poff = 99, psize = 99;
	CUresult pi = cuFuncGetParamInfo(markFn, 0, &poff, &psize);
	printf("  parameter info %s (offset %zu, size %zu; want 0, 8)\n", name(pi), poff, psize);
	if (pi != CUDA_SUCCESS || poff != 0 || psize != 8) launchFailures++;
	CUresult lr = cuLaunchKernel(markFn, 1, 1, 1, 1, 1, 1, 0, s, params, 0);
	cuCtxGetCurrent(&curAfter);
	CUcontext prev;
	CHECK(cuCtxPushCurrent(U));
	CHECK(cuCtxSynchronize());
	unsigned got = 0;
	CHECK(cuMemcpyDtoH(&got, mark, 4));
	CHECK(cuCtxPopCurrent(&prev));
	printf("  launch on U's stream %s, value %s (%u, want %u), current afterwards %s\n", name(lr),
		got == v ? "landed" : "MISSING", got, v, curAfter == curBefore ? "unchanged" : "CHANGED");
	if (lr != CUDA_SUCCESS || got != v || curAfter != curBefore) {
		printf("  UNEXPECTED: the launch did not run as with the handles' context current\n");
		launchFailures++;
	}
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	CUdevice dev;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	int drv = 0;
	cuDriverGetVersion(&drv);
	printf("driver version %d\n", drv);
	CHECK(cuCtxCreate(&U, NULL, 0, dev));
	CHECK(cuMemAlloc(&buf, bufWords * 4));
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&ta, CU_EVENT_DEFAULT));
	CHECK(cuEventCreate(&tb, CU_EVENT_DEFAULT));
	CUmodule markMod;
	CHECK(cuModuleLoadData(&markMod, markPTX));
	CHECK(cuModuleGetFunction(&markFn, markMod, "mark"));
	CHECK(cuMemAlloc(&mark, 4));
	CUcontext B, P;
	CHECK(cuCtxCreate(&B, NULL, 0, dev));
	emptyStack();
	int drvOK = 1;

	CHECK(cuCtxSetCurrent(U));
	probe("U (the objects' context)", B, 0);

	emptyStack();
	probe("none", B, 0);

	emptyStack();
	CHECK(cuCtxSetCurrent(B));
	probe("B (another live context of the device)", B, 0);

	emptyStack();
	CHECK(cuDevicePrimaryCtxRetain(&P, dev));
	CHECK(cuCtxSetCurrent(P));
	CHECK(cuDevicePrimaryCtxRelease(dev));
	unsigned flags = 0;
	int active = -1;
	cuDevicePrimaryCtxGetState(dev, &flags, &active);
	printf("primary context released: active %d\n", active);
	probe("P (the primary, released to zero while current here)", B, P);
	cuDevicePrimaryCtxGetState(dev, &flags, &active);
	printf("primary context after the probe: active %d\n", active);

	emptyStack();
	CHECK(cuCtxCreate(&D, NULL, 0, dev)); // current here now
	pthread_t t;
	pthread_create(&t, 0, destroyD, 0);
	pthread_join(t, 0);
	probe("D (destroyed by another thread while current here)", B, P);
	(void)drvOK;

	// What does a thread-local cache of the current context save? The check.
	emptyStack();
	CHECK(cuCtxSetCurrent(U));
	CUcontext cur;
	double t0 = now();
	for (int i = 0; i < 200000; i++) cuCtxGetCurrent(&cur);
	printf("cuCtxGetCurrent: %.1f ns each\n", (now() - t0) / 200000);
	// Launches are not on the package's context-free path: this line
	// reports what the driver does, without failing the probe.
	printf("launches: %d state(s) where a launch on U's stream, or its parameter info, did not answer as with U current\n", launchFailures);
	printf("%s: %d state(s) where a handle call answered otherwise\n", failures ? "FAIL" : "PASS", failures);
	return failures != 0;
}
