// fakecuda: a stand-in for libcuda.so.1 with no GPU behind it. CI runs the
// tests of the Go layer's own behaviour against it (fakedriver_test.go:
// allocations, Close and its races, contexts on many threads, the version
// checks, misuse), and it measures what the Go layer adds to a driver call
// that costs nothing (the benchmarks, run with CUDAGEN_LIBCUDA pointing at it).
//
// Every entry point the bindings resolve is here, doing the least that keeps
// the bookkeeping consistent. It is no model of the driver's semantics: the
// GPU tests are the proof of those, and most of them fail against it. What
// it models:
//
//   - FAKECUDA_DEVICES devices (default 1), each with a primary context that
//     is retained and released with a count. Releasing the last retain
//     waits for the context's pending work, then destroys its events and
//     streams, as the driver does.
//   - Events and streams live in a table of slots. Destroying one frees its
//     slot for reuse, and bumps the slot's generation, which is part of the
//     handle: a call with a destroyed handle is caught (INVALID_HANDLE)
//     rather than undefined.
//   - Work takes time: a record completes FAKECUDA_PENDING_NS after it is
//     made (default 0: at once), and after the work queued before it on its
//     stream. The spin kernel (Stream.Spin) loads and queues that many
//     nanoseconds. Query reports NOT_READY until then; the synchronising
//     calls sleep until then (they never spin, so a test can measure the
//     CPU the Go layer itself uses).
//   - Calls on events and non-default streams take their context from the
//     handles, not from the current context, as the driver's do
//     (bench/ctxprobe); cuEventElapsedTime alone wants some context current.
//     FAKECUDA_WANT_CURRENT=1 makes them all want their own context current
//     (CUDA_ERROR_INVALID_CONTEXT otherwise), as an older driver might.
//   - Counters, exported for the tests (dlsym): calls made on a released
//     context (fakecuda_released_calls: a handle's, or for calls that use
//     the current context, that one), calls with a destroyed handle
//     (fakecuda_stale_calls, including a handle destroyed while a call holds
//     it), events and streams alive (fakecuda_live_handles), and primary
//     context retains not yet released (fakecuda_retains), stream
//     synchronizations waiting for work now (fakecuda_stream_syncs_waiting),
//     events created (fakecuda_event_creates), and whether a watched
//     handle was destroyed (fakecuda_watch_handle, fakecuda_watched_destroyed).
//   - Driver versions: cuDriverGetVersion reports FAKECUDA_VERSION (default
//     13000), and cuGetProcAddress hands out, for a name and an ABI
//     version, the newest entry point of that name whose ABI version is at
//     most the one asked for and the driver's, as the driver does: so a
//     12.4-level fake has cuEventElapsedTime (ABI 2000) and not
//     cuEventElapsedTime_v2 (12080), two distinct functions that count
//     their calls. Built with -DFAKECUDA_DRIVER11 it lacks the 12.0 form
//     cuGetProcAddress_v2, as drivers before 12.0 do.
//   - Stream priorities 0 (least) to -5 (greatest), clamped as the driver
//     does; cuStreamGetCtx; an IPC handle opened in the exporting process
//     when FAKECUDA_IPC_OPEN=1 (the driver refuses it, and so does the fake
//     otherwise), an event the fake then refuses to export again, as the
//     driver does.
//   - FAKECUDA_HOLD_NS makes each call on an event or stream hold the handle
//     that long, spinning, checking it before and after: a handle destroyed
//     while a call is inside the driver is then caught too. The tests and
//     benchmarks may change it while running (fakecuda_hold_ns), so that
//     one process measures calls of several lengths.
//   - Stream capture and graphs, device memory copies and memsets on
//     streams, stream-ordered allocation and page-locked host memory: see
//     their sections below.
//   - The destroy gate: while fakecuda_gate_destroy is set (by a test,
//     through dlsym), cuEventDestroy and cuStreamDestroy wait at the gate
//     before doing anything, counted in fakecuda_gated, so that a test holds
//     a destroy inside the Go layer's flush for as long as it needs to look
//     at what the other goroutines can do meanwhile.
//
//   gcc -O2 -shared -fPIC -o libfakecuda.so cuda_test/testdata/fakecuda.c
//   CUDAGEN_LIBCUDA=$PWD/libfakecuda.so go test -bench . ./cuda_test
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
enum {
	OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_DEVICE = 101, INVALID_CONTEXT = 201,
	INVALID_HANDLE = 400, ILLEGAL_STATE = 401, NOT_FOUND = 500, NOT_READY = 600,
	CONTEXT_IS_DESTROYED = 709, NOT_SUPPORTED = 801, INVALID_IMAGE = 200, INVALID_PTX = 218,
	ILLEGAL_ADDRESS = 700, HOST_MEMORY_ALREADY_REGISTERED = 712, HOST_MEMORY_NOT_REGISTERED = 713,
};
#define DISABLE_TIMING 0x2u
#define INTERPROCESS 0x4u

// The counters the tests read.
long long fakecuda_released_calls;
long long fakecuda_stale_calls;
long long fakecuda_live_handles;
// A handle a test watches (fakecuda_watch_handle, set through dlsym), and
// whether it was destroyed since (fakecuda_watched_destroyed: 1).
long long fakecuda_watch_handle;
long long fakecuda_watched_destroyed;
long long fakecuda_retains; // primary-context retains not yet released, all devices
long long fakecuda_stream_syncs_waiting; // cuStreamSynchronize calls waiting for work now
long long fakecuda_event_syncs; // cuEventSynchronize calls
long long fakecuda_null_stream_syncs; // cuStreamSynchronize calls on the NULL stream
long long fakecuda_event_creates; // cuEventCreate calls
long long fakecuda_hold_ns;      // FAKECUDA_HOLD_NS; the tests may change it
long long fakecuda_gate_destroy; // set: destroys wait at the gate (the tests set it)
long long fakecuda_gated;        // destroys waiting at the gate now

#define MAXDEV 8
static int ndev = 1;
static unsigned char peer_on[64][64]; // peer access on, [from][to] device, under mu (cuCtxEnablePeerAccess)
static int ctx_tag[MAXDEV];  // a context is the address of its device's tag
static int retained[MAXDEV]; // the primary context's retain count
static long long dev_busy[MAXDEV]; // when the work queued on the device's context completes
static __thread void *current;
static long long pending_ns;
// FAKECUDA_TOUCH_KB: each handle lookup writes a line of every 64 bytes of
// a buffer that size, evicting the caller's lines as a real driver does.
static volatile unsigned char *touch_buf;
static size_t touch_len;
static int want_current; // FAKECUDA_WANT_CURRENT: handle calls want their context current
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

enum { FREE = 0, EVENT = 1, STREAM = 2 };
enum { CAP_NONE = 0, CAP_ACTIVE = 1, CAP_INVALIDATED = 2 }; // a stream's capture (graphs, below)
typedef struct {
	unsigned gen;
	int kind, dev;
	unsigned flags;
	int recorded;
	int prio;     // a stream's priority
	int imported; // an event opened from an IPC handle
	long long done_at; // an event: when its record completes; a stream: when its work does
	// A stream's capture (graphs, below): CAP_NONE, CAP_ACTIVE or
	// CAP_INVALIDATED; the mode it began in, the thread that began it and
	// the graph it records into.
	int cap, cap_mode;
	pthread_t cap_thread;
	void *cap_graph;
} slot;
#define MAXSLOT (1 << 18)
static slot slots[MAXSLOT];
// Slots 0 to 2 are never used: no handle is NULL, CU_STREAM_LEGACY (0x1) or
// CU_STREAM_PER_THREAD (0x2).
static int freelist[MAXSLOT], nfree, nused = 3;

static long long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long max(long long a, long long b) { return a > b ? a : b; }

static void count(long long *c) { __atomic_add_fetch(c, 1, __ATOMIC_RELAXED); }

// queued notes work on dev's context that completes at t, destroyed objects'
// work included: the context's destruction waits for it.
static void queued(int dev, long long t) {
	long long b = __atomic_load_n(&dev_busy[dev], __ATOMIC_RELAXED);
	while (b < t && !__atomic_compare_exchange_n(&dev_busy[dev], &b, t, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

static int ctx_dev(void *ctx) {
	int d = (int)((int *)ctx - ctx_tag);
	return d >= 0 && d < ndev ? d : -1;
}

// released reports (and counts) a call whose current context, or whose
// object's context, is released.
static int released(int dev) {
	if (dev < 0 || __atomic_load_n(&retained[dev], __ATOMIC_ACQUIRE) > 0) return 0;
	count(&fakecuda_released_calls);
	return 1;
}
static int current_released(void) { return current != NULL && released(ctx_dev(current)); }

static void *alloc(int kind, int dev, unsigned flags) {
	pthread_mutex_lock(&mu);
	int i = nfree > 0 ? freelist[--nfree] : (nused < MAXSLOT ? nused++ : -1);
	if (i < 0) {
		pthread_mutex_unlock(&mu);
		return NULL;
	}
	slot *s = &slots[i];
	s->kind = kind;
	s->dev = dev;
	s->flags = flags;
	s->recorded = 0;
	s->prio = 0;
	s->imported = 0;
	s->done_at = 0;
	s->cap = 0;
	s->cap_graph = NULL;
	void *h = (void *)(((uintptr_t)s->gen << 32) | (uintptr_t)i);
	fakecuda_live_handles++;
	pthread_mutex_unlock(&mu);
	return h;
}

static void release_slot(int i) { // under mu
	uintptr_t h = ((uintptr_t)slots[i].gen << 32) | (uintptr_t)i;
	if (__atomic_load_n(&fakecuda_watch_handle, __ATOMIC_SEQ_CST) == (long long)h) {
		__atomic_store_n(&fakecuda_watched_destroyed, 1, __ATOMIC_SEQ_CST);
	}
	slots[i].kind = FREE;
	slots[i].gen++;
	freelist[nfree++] = i;
	fakecuda_live_handles--;
}

static slot *peek(void *h, int kind) {
	uintptr_t v = (uintptr_t)h;
	unsigned i = (unsigned)(v & 0xffffffffu), gen = (unsigned)(v >> 32);
	if (i < 3 || i >= MAXSLOT) return NULL;
	slot *s = &slots[i];
	if (__atomic_load_n(&s->kind, __ATOMIC_ACQUIRE) != kind || __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != gen) return NULL;
	return s;
}

// lookup finds a live handle, holding it hold_ns; NULL (counted) if it was
// destroyed before or during the call.
static slot *lookup(void *h, int kind) {
	if (h == NULL) return NULL;
	if (touch_buf != NULL) { // a real driver's cache footprint
		for (size_t i = 0; i < touch_len; i += 64) touch_buf[i]++;
	}
	slot *s = peek(h, kind);
	long long hold_ns = __atomic_load_n(&fakecuda_hold_ns, __ATOMIC_RELAXED);
	if (s != NULL && hold_ns > 0) {
		long long t0 = now_ns();
		while (now_ns() - t0 < hold_ns) {
		}
		s = peek(h, kind);
	}
	if (s == NULL) count(&fakecuda_stale_calls);
	return s;
}

static void sleep_until(long long t) {
	for (long long n = now_ns(); n < t; n = now_ns()) {
		long long d = t - n;
		if (d > 1000000) d = 1000000;
		struct timespec ts = {0, d};
		nanosleep(&ts, NULL);
	}
}

static CUresult cuInit(unsigned flags) {
	(void)flags;
	const char *s = getenv("FAKECUDA_HOLD_NS");
	__atomic_store_n(&fakecuda_hold_ns, s ? atoll(s) : 0, __ATOMIC_RELAXED);
	s = getenv("FAKECUDA_PENDING_NS");
	pending_ns = s ? atoll(s) : 0;
	s = getenv("FAKECUDA_WANT_CURRENT");
	want_current = s && *s && *s != '0';
	s = getenv("FAKECUDA_TOUCH_KB");
	if (s && atoi(s) > 0 && touch_buf == NULL) {
		touch_len = (size_t)atoi(s) * 1024;
		touch_buf = calloc(touch_len, 1);
	}
	s = getenv("FAKECUDA_DEVICES");
	ndev = s ? atoi(s) : 1;
	if (ndev < 1) ndev = 1;
	if (ndev > MAXDEV) ndev = MAXDEV;
	return OK;
}
static int driver_version(void);
CUresult cuDriverGetVersion(int *v) {
	*v = driver_version();
	return OK;
}
static CUresult cuGetErrorName(CUresult r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return OK; }
static CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake driver error"; return OK; }
static CUresult cuDeviceGetCount(int *n) { *n = ndev; return OK; }
static CUresult cuDeviceGet(int *d, int ordinal) {
	if (ordinal < 0 || ordinal >= ndev) return INVALID_DEVICE;
	*d = ordinal;
	return OK;
}
static CUresult cuDeviceGetName(char *buf, int len, int dev) {
	(void)dev;
	strncpy(buf, "fakecuda", len);
	return OK;
}
// cuDeviceGetAttribute knows the compute capability (9.0, an H100's, what
// Device.Compile compiles for); any other attribute is INVALID_VALUE.
static CUresult cuDeviceGetAttribute(int *v, int attrib, int dev) {
	if (dev < 0 || dev >= ndev) return INVALID_DEVICE;
	switch (attrib) {
	case 75: *v = 9; return OK; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	case 76: *v = 0; return OK; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	}
	return INVALID_VALUE;
}
static CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
	if (dev < 0 || dev >= ndev) return INVALID_DEVICE;
	__atomic_add_fetch(&retained[dev], 1, __ATOMIC_ACQ_REL);
	count(&fakecuda_retains);
	*ctx = &ctx_tag[dev];
	return OK;
}
static void unload_context(int dev);
// Releasing the last retain destroys the context's events and streams, and
// unloads its modules and frees its memory.
static CUresult cuDevicePrimaryCtxRelease(int dev) {
	if (dev < 0 || dev >= ndev) return INVALID_DEVICE;
	pthread_mutex_lock(&mu);
	if (retained[dev] == 0) {
		pthread_mutex_unlock(&mu);
		return INVALID_CONTEXT;
	}
	__atomic_sub_fetch(&fakecuda_retains, 1, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&retained[dev], 1, __ATOMIC_ACQ_REL) == 0) {
		// Like the driver, destroying the context first waits for its work.
		pthread_mutex_unlock(&mu);
		sleep_until(__atomic_load_n(&dev_busy[dev], __ATOMIC_RELAXED));
		pthread_mutex_lock(&mu);
		if (__atomic_load_n(&retained[dev], __ATOMIC_ACQUIRE) == 0) { // not retained again meanwhile
			for (int i = 1; i < nused; i++)
				if (slots[i].kind != FREE && slots[i].dev == dev) release_slot(i);
			for (int i = 0; i < 64; i++) // its peer access, both ways, goes with it
				peer_on[dev][i] = peer_on[i][dev] = 0;
		}
		if (__atomic_load_n(&retained[dev], __ATOMIC_ACQUIRE) == 0) unload_context(dev);
	}
	pthread_mutex_unlock(&mu);
	return OK;
}
static CUresult cuCtxSetCurrent(void *ctx) {
	if (ctx != NULL && released(ctx_dev(ctx))) return CONTEXT_IS_DESTROYED;
	current = ctx;
	return OK;
}
static CUresult cuCtxGetCurrent(void **ctx) { *ctx = current; return OK; }
static CUresult cuCtxGetDevice(int *d) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	*d = ctx_dev(current);
	return OK;
}
static CUresult cuCtxSynchronize(void) {
	if (!current) return INVALID_CONTEXT;
	return current_released() ? CONTEXT_IS_DESTROYED : OK;
}
static CUresult cuStreamCreate(void **s, unsigned flags) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	*s = alloc(STREAM, ctx_dev(current), flags);
	return *s ? OK : OUT_OF_MEMORY;
}
// Stream priorities: 0 (the default, the least) to -5 (the greatest), as
// on an H100; a priority outside the range is clamped, as the driver does.
enum { PRIO_LEAST = 0, PRIO_GREATEST = -5 };
static CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	if (least) *least = PRIO_LEAST;
	if (greatest) *greatest = PRIO_GREATEST;
	return OK;
}
static CUresult cuStreamCreateWithPriority(void **s, unsigned flags, int prio) {
	CUresult r = cuStreamCreate(s, flags);
	if (r != OK) return r;
	if (prio > PRIO_LEAST) prio = PRIO_LEAST;
	if (prio < PRIO_GREATEST) prio = PRIO_GREATEST;
	slots[(uintptr_t)*s & 0xffffffffu].prio = prio;
	return OK;
}
// Calls on handles: like the driver (bench/ctxprobe), they take their
// context from the handles, whatever is current on the thread; only the
// default streams (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) name the
// current context's. A call is on a released context if a handle's context
// is released, or, for a default stream, the current one.
//
// stream_of finds a stream: NULL for a default stream (always idle here),
// *bad set (INVALID_CONTEXT, CONTEXT_IS_DESTROYED or INVALID_HANDLE) for a
// default stream without a usable current context or a destroyed handle.
static slot *stream_of(void *s, CUresult *bad) {
	*bad = OK;
	if ((uintptr_t)s <= 2) {
		if (!current) *bad = INVALID_CONTEXT;
		else if (current_released()) *bad = CONTEXT_IS_DESTROYED;
		return NULL;
	}
	slot *st = lookup(s, STREAM);
	if (st == NULL) *bad = INVALID_HANDLE;
	else if (released(st->dev)) *bad = CONTEXT_IS_DESTROYED;
	else if (want_current && (current == NULL || ctx_dev(current) != st->dev)) *bad = INVALID_CONTEXT;
	return st;
}
// event_in finds an event; *bad as stream_of's, but for the current
// context, which only own (the call is the event's) checks.
static slot *event_in(void *e, CUresult *bad, int own) {
	*bad = OK;
	slot *ev = lookup(e, EVENT);
	if (ev == NULL) *bad = INVALID_HANDLE;
	else if (released(ev->dev)) *bad = CONTEXT_IS_DESTROYED;
	else if (own && want_current && (current == NULL || ctx_dev(current) != ev->dev)) *bad = INVALID_CONTEXT;
	return ev;
}
// event_of finds an event for a call on it; *bad as stream_of's.
static slot *event_of(void *e, CUresult *bad) { return event_in(e, bad, 1); }
static CUresult cuStreamGetPriority(void *s, int *prio) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	*prio = st ? st->prio : 0;
	return OK;
}
static CUresult capture_sync(void *s, slot *st);
static CUresult cuStreamGetFlags(void *s, unsigned *flags) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (st != NULL) { // the driver refuses it on a capturing stream, invalidating the capture
		CUresult cr = capture_sync(s, st);
		if (cr != OK) return cr;
	}
	*flags = st ? st->flags : 0;
	return OK;
}
// The stream's context: a default stream's is the current one. It asks
// for no context current, even with FAKECUDA_WANT_CURRENT: finding a
// stream's context is what it is for.
static CUresult cuStreamGetCtx(void *s, void **ctx) {
	if ((uintptr_t)s <= 2) {
		if (!current) return INVALID_CONTEXT;
		*ctx = current;
		return OK;
	}
	slot *st = lookup(s, STREAM);
	if (st == NULL) return INVALID_HANDLE;
	if (released(st->dev)) return CONTEXT_IS_DESTROYED;
	*ctx = (void *)&ctx_tag[st->dev];
	return OK;
}
// gate holds a destroy while the tests keep fakecuda_gate_destroy set.
static void gate(void) {
	if (!__atomic_load_n(&fakecuda_gate_destroy, __ATOMIC_SEQ_CST)) return;
	__atomic_add_fetch(&fakecuda_gated, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&fakecuda_gate_destroy, __ATOMIC_SEQ_CST)) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	__atomic_sub_fetch(&fakecuda_gated, 1, __ATOMIC_SEQ_CST);
}
static void drop_capture(slot *st);
static CUresult capture_sync(void *s, slot *st);
static CUresult cuStreamDestroy(void *s) {
	gate();
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (st == NULL) return bad ? bad : INVALID_HANDLE;
	if (bad) return bad;
	pthread_mutex_lock(&mu);
	if (peek(s, STREAM) == st) {
		drop_capture(st);
		release_slot((int)(st - slots));
	}
	pthread_mutex_unlock(&mu);
	return OK;
}
static CUresult cuStreamSynchronize(void *s) {
	CUresult bad;
	if (s == NULL) __atomic_add_fetch(&fakecuda_null_stream_syncs, 1, __ATOMIC_SEQ_CST);
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if ((bad = capture_sync(s, st)) != OK) return bad;
	if (st && st->done_at > now_ns()) {
		__atomic_add_fetch(&fakecuda_stream_syncs_waiting, 1, __ATOMIC_SEQ_CST);
		sleep_until(st->done_at);
		__atomic_sub_fetch(&fakecuda_stream_syncs_waiting, 1, __ATOMIC_SEQ_CST);
	}
	return OK;
}
static CUresult cuStreamQuery(void *s) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if ((bad = capture_sync(s, st)) != OK) return bad;
	return st && st->done_at > now_ns() ? NOT_READY : OK;
}
static CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
	CUresult bad, bad2;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	// The event may be of another context (another device's): the call is
	// the stream's, and wants only the stream's context current.
	slot *ev = event_in(e, &bad2, 0);
	if (bad2) return bad2;
	if (flags && !(st && st->cap != CAP_NONE)) return ILLEGAL_STATE; // outside capture
	if (st && st->cap != CAP_NONE) return OK; // a dependency of the capture: nothing runs now
	if (st) {
		st->done_at = max(st->done_at, ev->done_at);
		queued(st->dev, st->done_at);
	}
	return OK;
}
static CUresult cuEventCreate(void **e, unsigned flags) {
	count(&fakecuda_event_creates);
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	*e = alloc(EVENT, ctx_dev(current), flags);
	return *e ? OK : OUT_OF_MEMORY;
}
static CUresult cuEventRecord(void *e, void *s) {
	CUresult bad;
	slot *ev = event_of(e, &bad);
	if (bad) return bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	// The event and the stream must be of one context; a default stream is
	// the current context's.
	if ((st ? st->dev : ctx_dev(current)) != ev->dev) return INVALID_HANDLE;
	long long t = now_ns() + pending_ns;
	if (st) {
		t = max(t, st->done_at);
		st->done_at = t;
	}
	ev->done_at = t;
	ev->recorded = 1;
	queued(ev->dev, t);
	return OK;
}
static CUresult cuEventRecordWithFlags(void *e, void *s, unsigned flags) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (flags && !(st && st->cap != CAP_NONE)) return ILLEGAL_STATE; // outside capture
	return cuEventRecord(e, s);
}
static CUresult cuEventQuery(void *e) {
	CUresult bad;
	slot *ev = event_of(e, &bad);
	if (bad) return bad;
	return ev->done_at > now_ns() ? NOT_READY : OK;
}
static CUresult cuEventSynchronize(void *e) {
	CUresult bad;
	__atomic_add_fetch(&fakecuda_event_syncs, 1, __ATOMIC_SEQ_CST);
	slot *ev = event_of(e, &bad);
	if (bad) return bad;
	sleep_until(ev->done_at);
	return OK;
}
static CUresult cuEventDestroy(void *e) {
	gate();
	CUresult bad;
	slot *ev = event_of(e, &bad);
	if (bad) return bad;
	pthread_mutex_lock(&mu);
	if (peek(e, EVENT) == ev) release_slot((int)(ev - slots));
	pthread_mutex_unlock(&mu);
	return OK;
}
// Both events recorded with timing and complete. Two entry points, as the
// driver has them: the original (ABI 2000), which wants some context current
// (what a driver that does looks like), so that the Go layer's retry with its
// context made current is exercised; and cuEventElapsedTime_v2 (ABI 12080),
// which, like the driver 580's, does not. Each counts its calls
// (fakecuda_elapsed_calls, fakecuda_elapsed_v2_calls), so that a test can tell which one the
// Go layer called.
long long fakecuda_elapsed_calls, fakecuda_elapsed_v2_calls;
static CUresult elapsed(float *ms, void *a, void *b) {
	CUresult bad;
	slot *x = event_of(a, &bad);
	if (bad) return bad;
	slot *y = event_of(b, &bad);
	if (bad) return bad;
	if ((x->flags | y->flags) & DISABLE_TIMING || !x->recorded || !y->recorded) return INVALID_HANDLE;
	long long n = now_ns();
	if (x->done_at > n || y->done_at > n) return NOT_READY;
	*ms = (float)(y->done_at - x->done_at) / 1e6f;
	return OK;
}
static CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
	count(&fakecuda_elapsed_calls);
	if (!current) return INVALID_HANDLE;
	return elapsed(ms, a, b);
}
static CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) {
	count(&fakecuda_elapsed_v2_calls);
	return elapsed(ms, a, b);
}
// The handle holds the event's handle. The driver refuses to export an
// event it opened from a handle (CUDA_ERROR_INVALID_HANDLE); so does this.
static CUresult cuIpcGetEventHandle(void *h, void *e) {
	CUresult bad;
	slot *ev = event_of(e, &bad);
	if (bad) return bad;
	if (!(ev->flags & INTERPROCESS)) return INVALID_VALUE;
	if (ev->imported) return INVALID_HANDLE;
	memset(h, 0, 64);
	memcpy(h, &e, sizeof e);
	return OK;
}
typedef struct { char b[64]; } ipc_handle;
// The driver refuses a handle exported by the same process; so does this,
// unless FAKECUDA_IPC_OPEN=1, which stands for a second process (the fake
// has one process's state): it then opens a new event of the current
// context (INTERPROCESS, no timing) standing for the exported one, which it
// must name.
static CUresult cuIpcOpenEventHandle(void **e, ipc_handle h) {
	const char *s = getenv("FAKECUDA_IPC_OPEN");
	if (!(s && *s && *s != '0')) return INVALID_CONTEXT;
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	void *src;
	memcpy(&src, h.b, sizeof src);
	slot *ev = peek(src, EVENT);
	if (ev == NULL || !(ev->flags & INTERPROCESS)) return INVALID_VALUE;
	*e = alloc(EVENT, ctx_dev(current), INTERPROCESS | DISABLE_TIMING);
	if (*e == NULL) return OUT_OF_MEMORY;
	slots[(uintptr_t)*e & 0xffffffffu].imported = 1;
	return OK;
}
static CUresult cuLaunchHostFunc(void *s, void (*fn)(void *), void *data) {
	CUresult bad;
	stream_of(s, &bad);
	if (bad) return bad;
	fn(data);
	return OK;
}
// Modules: cuModuleLoadData takes PTX text (the GPU tests' kernels load on
// the fake unchanged) and finds its entry points and their parameters:
// each ".entry NAME(.param .TYPE name, .param .align A .b8 name[N], ...)",
// sized and aligned by TYPE (.u64, .f32, .b8 ...), and its ".maxntid X, Y,
// Z" (the most threads per block; default 1024). A module or a function is
// a pointer to the fake's own record, checked against the live modules on
// every call: a handle of an unloaded module is INVALID_HANDLE, not
// undefined. Releasing the last retain of a primary context unloads its
// modules and frees its memory, as the driver does. Two kernels do work:
// cudagen_spin keeps its stream busy its one parameter's nanoseconds, and
// add_one(float *p, unsigned n) adds 1 to p[i] for each thread
// i = blockIdx.x*blockDim.x + threadIdx.x below n, run on the host at the
// launch; a launch of any other kernel does nothing but count. Every launch
// is recorded (fakecuda_launches, fakecuda_last_grid_x/y/z,
// fakecuda_last_block_x/y/z, fakecuda_last_shmem) and checks what the
// driver checks: no dimension 0,
// at most maxntid threads per block, one parameter pointer per parameter.
// cuFuncGetAttribute reports maxntid, 16 registers, PTX_VERSION from
// ".target", 0 bytes of static shared, constant and local memory, and
// 48 KiB of dynamic shared memory; cuFuncGetParamInfo (ABI 12040) each
// parameter's offset and size.
long long fakecuda_launches;
long long fakecuda_last_grid_x, fakecuda_last_grid_y, fakecuda_last_grid_z;
long long fakecuda_last_block_x, fakecuda_last_block_y, fakecuda_last_block_z, fakecuda_last_shmem;
long long fakecuda_live_modules;   // modules loaded and not unloaded
long long fakecuda_module_unloads; // successful cuModuleUnload calls
enum { MAXPARAM = 64, MAXFN = 32, FN_OTHER = 0, FN_SPIN = 1, FN_ADD_ONE = 2 };
typedef struct fmodule fmodule;
typedef struct {
	char name[128];
	int what; // FN_*
	int nparam;
	size_t off[MAXPARAM], size[MAXPARAM];
	int maxntid;
	fmodule *mod;
} ffunc;
struct fmodule {
	int dev, ptx_version, nfn;
	ffunc fn[MAXFN];
	fmodule *next;
};
static fmodule *modules; // the live ones, under mu

static int live_module(fmodule *m) { // under mu
	for (fmodule *x = modules; x != NULL; x = x->next)
		if (x == m) return 1;
	return 0;
}
static ffunc *live_function(void *f) { // under mu
	for (fmodule *x = modules; x != NULL; x = x->next)
		if ((ffunc *)f >= x->fn && (ffunc *)f < x->fn + x->nfn) return (ffunc *)f;
	return NULL;
}

static const char *skip_space(const char *p) {
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
	return p;
}
static int ident_char(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '%';
}
// type_size is the size of a PTX type (.u64, .f32, .b8, .pred ...), 0 if none.
static size_t type_size(const char *t, size_t n) {
	if (n >= 3 && (t[1] == 'u' || t[1] == 's' || t[1] == 'b' || t[1] == 'f')) {
		int bits = atoi(t + 2);
		if (bits == 8 || bits == 16 || bits == 32 || bits == 64) return (size_t)bits / 8;
	}
	return 0;
}

// parse_entry reads one entry point at p (just past ".entry") into fn;
// 0 if it is not one the fake understands.
static int parse_entry(const char *p, ffunc *fn) {
	p = skip_space(p);
	size_t n = 0;
	while (ident_char(p[n])) n++;
	if (n == 0 || n >= sizeof fn->name) return 0;
	memcpy(fn->name, p, n);
	fn->name[n] = 0;
	fn->what = strcmp(fn->name, "cudagen_spin") == 0 ? FN_SPIN : strcmp(fn->name, "add_one") == 0 ? FN_ADD_ONE : FN_OTHER;
	fn->nparam = 0;
	fn->maxntid = 1024;
	p = skip_space(p + n);
	size_t off = 0;
	if (*p == '(') {
		const char *end = strchr(p, ')');
		if (end == NULL) return 0;
		for (const char *q = p + 1; q < end;) {
			const char *comma = memchr(q, ',', (size_t)(end - q));
			const char *stop = comma ? comma : end;
			const char *param = strstr(q, ".param");
			if (param != NULL && param < stop) {
				size_t align = 0, size = 0, count = 1;
				for (const char *t = param + 6; t < stop;) {
					t = skip_space(t);
					size_t k = 0;
					while (t + k < stop && t[k] != ' ' && t[k] != '\t' && t[k] != '\n' && t[k] != '\r') k++;
					if (k == 0) break;
					if (k == 6 && strncmp(t, ".align", 6) == 0) {
						t = skip_space(t + k);
						align = (size_t)atoi(t);
						while (t < stop && *t >= '0' && *t <= '9') t++;
						continue;
					}
					if (t[0] == '.' && size == 0) size = type_size(t, k);
					else if (memchr(t, '[', k) != NULL) count = (size_t)atoi((const char *)memchr(t, '[', k) + 1);
					t += k;
				}
				if (size == 0 || fn->nparam == MAXPARAM) return 0;
				if (align == 0) align = size;
				off = (off + align - 1) / align * align;
				fn->off[fn->nparam] = off;
				fn->size[fn->nparam] = size * count;
				fn->nparam++;
				off += size * count;
			}
			q = stop + 1;
		}
		p = end + 1;
	}
	// Directives between the parameters and the body.
	const char *body = strchr(p, '{');
	const char *m = strstr(p, ".maxntid");
	if (m != NULL && (body == NULL || m < body)) {
		m = skip_space(m + 8);
		int t = atoi(m);
		for (int d = 0; d < 2; d++) {
			const char *c = strchr(m, ',');
			if (c == NULL || (body != NULL && c > body)) break;
			m = skip_space(c + 1);
			t *= atoi(m);
		}
		if (t > 0) fn->maxntid = t;
	}
	return 1;
}

static CUresult prohibited(void);
static CUresult implicit(int dev);
// fakecuda_loads counts the module loads; fakecuda_loads_signals_open
// those made with Go's preemption or profiling signal (SIGURG, SIGPROF)
// unblocked on the calling thread (the driver's JIT compiler crashed in Go
// processes with preemption on).
long long fakecuda_loads, fakecuda_loads_signals_open;
static CUresult cuModuleLoadData(void **m, const void *img) {
	sigset_t mask;
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	if (!sigismember(&mask, SIGURG) || !sigismember(&mask, SIGPROF)) count(&fakecuda_loads_signals_open);
	count(&fakecuda_loads);
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	if (img == NULL) return INVALID_VALUE;
	const char *text = img;
	fmodule *mod = calloc(1, sizeof *mod);
	if (mod == NULL) return OUT_OF_MEMORY;
	// PTX_VERSION is the virtual architecture the PTX targets, as the
	// driver reports it: 50 for ".target sm_50" (not the ISA's .version).
	const char *v = strstr(text, ".target");
	if (v != NULL) {
		v = skip_space(v + 7);
		if (strncmp(v, "sm_", 3) == 0 || strncmp(v, "compute_", 8) == 0) mod->ptx_version = atoi(strchr(v, '_') + 1);
	}
	for (const char *p = strstr(text, ".entry"); p != NULL; p = strstr(p + 6, ".entry")) {
		if (mod->nfn == MAXFN || !parse_entry(p + 6, &mod->fn[mod->nfn])) {
			free(mod);
			return INVALID_PTX;
		}
		mod->fn[mod->nfn++].mod = mod;
	}
	if (mod->nfn == 0) { // no PTX: a cubin or a fatbin, which the fake cannot run
		free(mod);
		return INVALID_IMAGE;
	}
	mod->dev = ctx_dev(current);
	pthread_mutex_lock(&mu);
	mod->next = modules;
	modules = mod;
	fakecuda_live_modules++;
	pthread_mutex_unlock(&mu);
	*m = mod;
	return OK;
}
static void unload(fmodule *m) { // under mu
	for (fmodule **x = &modules; *x != NULL; x = &(*x)->next)
		if (*x == m) {
			*x = m->next;
			fakecuda_live_modules--;
			free(m);
			return;
		}
}
static CUresult cuModuleUnload(void *m) {
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	pthread_mutex_lock(&mu);
	if (!live_module(m)) {
		pthread_mutex_unlock(&mu);
		return INVALID_HANDLE;
	}
	CUresult r = released(((fmodule *)m)->dev) ? CONTEXT_IS_DESTROYED : OK;
	if (r == OK) {
		unload(m);
		fakecuda_module_unloads++;
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	pthread_mutex_lock(&mu);
	CUresult r = live_module(m) ? NOT_FOUND : INVALID_HANDLE;
	if (r == NOT_FOUND)
		for (int i = 0; i < ((fmodule *)m)->nfn; i++)
			if (strcmp(((fmodule *)m)->fn[i].name, name) == 0) {
				*f = &((fmodule *)m)->fn[i];
				r = OK;
				break;
			}
	pthread_mutex_unlock(&mu);
	return r;
}
enum {
	ATTR_MAX_THREADS = 0, ATTR_SHARED = 1, ATTR_CONST = 2, ATTR_LOCAL = 3, ATTR_REGS = 4, ATTR_PTX = 5,
	ATTR_BINARY = 6, ATTR_MAX_DYNAMIC_SHARED = 8,
};
static CUresult cuFuncGetAttribute(int *pi, int attrib, void *f) {
	pthread_mutex_lock(&mu);
	ffunc *fn = live_function(f);
	CUresult r = OK;
	if (fn == NULL) r = INVALID_HANDLE;
	else switch (attrib) {
	case ATTR_MAX_THREADS: *pi = fn->maxntid; break;
	case ATTR_SHARED: case ATTR_CONST: case ATTR_LOCAL: *pi = 0; break;
	case ATTR_REGS: *pi = 16; break;
	case ATTR_PTX: *pi = fn->mod->ptx_version; break;
	case ATTR_BINARY: *pi = 90; break;
	case ATTR_MAX_DYNAMIC_SHARED: *pi = 48 << 10; break;
	default: r = INVALID_VALUE;
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *off, size_t *size) {
	pthread_mutex_lock(&mu);
	ffunc *fn = live_function(f);
	CUresult r = fn == NULL ? INVALID_HANDLE : i >= (size_t)fn->nparam ? INVALID_VALUE : OK;
	if (r == OK) {
		if (off) *off = fn->off[i];
		if (size) *size = fn->size[i];
	}
	pthread_mutex_unlock(&mu);
	return r;
}

// Device memory: host memory from malloc, whose address is the device
// pointer, in a list of live allocations, so that a free or a copy outside
// them is refused (INVALID_VALUE), as the driver does.
typedef struct falloc {
	uintptr_t base;
	size_t size;
	int dev;
	int pool;   // from cuMemAllocAsync: no IPC handle (the driver exports pools' memory otherwise)
	int opened; // cuIpcOpenMemHandle (or cuMemPoolImportPointer) mappings of it not closed
	void *mpool; // the explicit pool it came from (cuMemAllocFromPoolAsync), or NULL
	struct falloc *next;
} falloc;
static falloc *allocs; // under mu
long long fakecuda_live_allocs;  // allocations not freed
long long fakecuda_alloc_bytes;  // their bytes
long long fakecuda_mem_frees;    // successful cuMemFree calls
// within reports whether [p, p+n) lies in one live allocation. Under mu.
static int within(uintptr_t p, size_t n) {
	for (falloc *a = allocs; a != NULL; a = a->next)
		if (p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base)) return 1;
	return 0;
}
static CUresult cuMemAlloc(unsigned long long *dptr, size_t n) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	if (n == 0) return INVALID_VALUE;
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	falloc *a = malloc(sizeof *a);
	void *p = malloc(n);
	if (a == NULL || p == NULL) {
		free(a);
		free(p);
		return OUT_OF_MEMORY;
	}
	memset(p, 0xa5, n); // not zeroed, as the driver's is not
	a->base = (uintptr_t)p;
	a->size = n;
	a->dev = ctx_dev(current);
	a->pool = 0;
	a->opened = 0;
	a->mpool = NULL;
	pthread_mutex_lock(&mu);
	a->next = allocs;
	allocs = a;
	fakecuda_live_allocs++;
	fakecuda_alloc_bytes += (long long)n;
	pthread_mutex_unlock(&mu);
	*dptr = (unsigned long long)a->base;
	return OK;
}
static void free_alloc(falloc **x) { // under mu
	falloc *a = *x;
	*x = a->next;
	fakecuda_live_allocs--;
	fakecuda_alloc_bytes -= (long long)a->size;
	free((void *)a->base);
	free(a);
}
// IPC memory handles: cuIpcGetMemHandle exports the base of a cuMemAlloc
// allocation (another address, or pool memory, is INVALID_VALUE); the
// handle holds the address. cuIpcOpenMemHandle refuses a handle of the same
// process (INVALID_CONTEXT) unless FAKECUDA_IPC_OPEN=1, which stands for
// a second process: the mapping is then the exported memory itself (one
// address space), counted until cuIpcCloseMemHandle, which refuses an
// address not opened so (INVALID_VALUE).
long long fakecuda_ipc_mem_open; // mappings opened and not closed
static CUresult cuIpcGetMemHandle(void *h, unsigned long long dptr) {
	if (!current) return INVALID_CONTEXT;
	pthread_mutex_lock(&mu);
	falloc *a = allocs;
	while (a != NULL && a->base != (uintptr_t)dptr) a = a->next;
	int ok = a != NULL && !a->pool;
	pthread_mutex_unlock(&mu);
	if (!ok) return INVALID_VALUE;
	memset(h, 0, 64);
	memcpy(h, &dptr, sizeof dptr);
	return OK;
}
typedef struct { char b[64]; } ipc_mem_handle;
static CUresult cuIpcOpenMemHandle_v2(unsigned long long *dptr, ipc_mem_handle h, unsigned flags) {
	const char *e = getenv("FAKECUDA_IPC_OPEN");
	if (!(e && *e && *e != '0')) return INVALID_CONTEXT;
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	if (flags & ~1u) return INVALID_VALUE;
	unsigned long long p;
	memcpy(&p, h.b, sizeof p);
	pthread_mutex_lock(&mu);
	falloc *a = allocs;
	while (a != NULL && a->base != (uintptr_t)p) a = a->next;
	if (a != NULL && !a->pool) {
		a->opened++;
		fakecuda_ipc_mem_open++;
	}
	pthread_mutex_unlock(&mu);
	if (a == NULL || a->pool) return INVALID_VALUE;
	*dptr = p;
	return OK;
}
static CUresult cuIpcCloseMemHandle(unsigned long long dptr) {
	if (!current) return INVALID_CONTEXT;
	pthread_mutex_lock(&mu);
	falloc *a = allocs;
	while (a != NULL && a->base != (uintptr_t)dptr) a = a->next;
	int ok = a != NULL && a->opened > 0;
	if (ok) {
		a->opened--;
		fakecuda_ipc_mem_open--;
	}
	pthread_mutex_unlock(&mu);
	return ok ? OK : INVALID_VALUE;
}
long long fakecuda_frees_waiting; // cuMemFree calls waiting now (for the device's work, or the gate)
long long fakecuda_gate_free;     // set: frees wait at it, as for work that never ends (the tests set it)
// cuMemFree waits for the work queued on the context, as the driver's does,
// and while the tests keep fakecuda_gate_free set.
static CUresult cuMemFree(unsigned long long dptr) {
	if (current_released()) return CONTEXT_IS_DESTROYED;
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	int dev = ctx_dev(current);
	long long t = dev >= 0 ? __atomic_load_n(&dev_busy[dev], __ATOMIC_RELAXED) : 0;
	if (t > now_ns() || __atomic_load_n(&fakecuda_gate_free, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&fakecuda_frees_waiting, 1, __ATOMIC_SEQ_CST);
		sleep_until(t);
		while (__atomic_load_n(&fakecuda_gate_free, __ATOMIC_SEQ_CST)) {
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
		__atomic_sub_fetch(&fakecuda_frees_waiting, 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_lock(&mu);
	for (falloc **x = &allocs; *x != NULL; x = &(*x)->next)
		if ((*x)->base == (uintptr_t)dptr) {
			CUresult r = released((*x)->dev) ? CONTEXT_IS_DESTROYED : OK;
			if (r == OK) {
				free_alloc(x);
				fakecuda_mem_frees++;
			}
			pthread_mutex_unlock(&mu);
			return r;
		}
	pthread_mutex_unlock(&mu);
	return INVALID_VALUE;
}
// held_mem holds device memory [p, p+n) hold_ns, as lookup holds a handle:
// false (counted as a stale call) if it was freed before or during the
// call. Not under mu.
static int held_mem(uintptr_t p, size_t n) {
	pthread_mutex_lock(&mu);
	int ok = within(p, n);
	pthread_mutex_unlock(&mu);
	long long hold_ns = __atomic_load_n(&fakecuda_hold_ns, __ATOMIC_RELAXED);
	if (ok && hold_ns > 0) {
		long long t0 = now_ns();
		while (now_ns() - t0 < hold_ns) {
		}
		pthread_mutex_lock(&mu);
		ok = within(p, n);
		pthread_mutex_unlock(&mu);
		if (!ok) count(&fakecuda_stale_calls);
	}
	return ok;
}
// Registered host memory (cuMemHostRegister, cuMemHostUnregister): ranges
// in a list, counted in fakecuda_live_host_registers. As the driver does,
// a range overlapping a registered one is refused
// (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), and an unregister must name
// a registered range's start (else CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED).
// The synchronous copies whose host side lies in a registered range are
// counted in fakecuda_registered_copies.
typedef struct freg {
	uintptr_t p;
	size_t n;
	struct freg *next;
} freg;
static freg *regs; // under mu
long long fakecuda_live_host_registers;
long long fakecuda_registered_copies;
static CUresult cuMemHostRegister(void *p, size_t n, unsigned flags) {
	(void)flags;
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	if (p == NULL || n == 0) return INVALID_VALUE;
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	freg *r = malloc(sizeof *r);
	if (r == NULL) return OUT_OF_MEMORY;
	r->p = (uintptr_t)p;
	r->n = n;
	pthread_mutex_lock(&mu);
	for (freg *x = regs; x != NULL; x = x->next)
		if (r->p < x->p + x->n && x->p < r->p + n) {
			pthread_mutex_unlock(&mu);
			free(r);
			return HOST_MEMORY_ALREADY_REGISTERED;
		}
	r->next = regs;
	regs = r;
	fakecuda_live_host_registers++;
	pthread_mutex_unlock(&mu);
	return OK;
}
static CUresult cuMemHostUnregister(void *p) {
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	pthread_mutex_lock(&mu);
	for (freg **x = &regs; *x != NULL; x = &(*x)->next)
		if ((*x)->p == (uintptr_t)p) {
			freg *r = *x;
			*x = r->next;
			fakecuda_live_host_registers--;
			pthread_mutex_unlock(&mu);
			free(r);
			return OK;
		}
	pthread_mutex_unlock(&mu);
	return HOST_MEMORY_NOT_REGISTERED;
}
// registered reports whether [p, p+n) lies in registered memory. Under mu.
static int registered(const void *p, size_t n) {
	for (freg *x = regs; x != NULL; x = x->next)
		if ((uintptr_t)p >= x->p && (uintptr_t)p + n <= x->p + x->n) return 1;
	return 0;
}

// cuMemGetAddressRange: the live allocation holding p (its base and size),
// else CUDA_ERROR_NOT_FOUND.
static CUresult cuMemGetAddressRange(unsigned long long *base, size_t *size, unsigned long long p) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	pthread_mutex_lock(&mu);
	for (falloc *a = allocs; a != NULL; a = a->next)
		if ((uintptr_t)p >= a->base && (uintptr_t)p - a->base < a->size) {
			if (base) *base = a->base;
			if (size) *size = a->size;
			pthread_mutex_unlock(&mu);
			return OK;
		}
	pthread_mutex_unlock(&mu);
	return NOT_FOUND;
}
// The synchronous copies run on the legacy default stream: idle here.
static CUresult cuMemcpyHtoD(unsigned long long dst, const void *src, size_t n) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	CUresult pr = prohibited();
	if (pr == OK) pr = implicit(ctx_dev(current));
	if (pr != OK) return pr;
	if (!held_mem((uintptr_t)dst, n)) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	int ok = within((uintptr_t)dst, n);
	if (ok) memcpy((void *)(uintptr_t)dst, src, n);
	if (ok && registered(src, n)) fakecuda_registered_copies++;
	pthread_mutex_unlock(&mu);
	return ok ? OK : INVALID_VALUE;
}
static CUresult cuMemcpyDtoH(void *dst, unsigned long long src, size_t n) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	CUresult pr = prohibited();
	if (pr == OK) pr = implicit(ctx_dev(current));
	if (pr != OK) return pr;
	if (!held_mem((uintptr_t)src, n)) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	int ok = within((uintptr_t)src, n);
	if (ok) memcpy(dst, (void *)(uintptr_t)src, n);
	if (ok && registered(dst, n)) fakecuda_registered_copies++;
	pthread_mutex_unlock(&mu);
	return ok ? OK : INVALID_VALUE;
}
// unload_context unloads the modules and frees the memory of dev's context,
// destroyed. Under mu.
static void free_graphs(int dev);
static void unload_context(int dev) {
	for (fmodule **x = &modules; *x != NULL;) {
		if ((*x)->dev == dev) unload(*x);
		else x = &(*x)->next;
	}
	for (falloc **x = &allocs; *x != NULL;) {
		if ((*x)->dev == dev) free_alloc(x);
		else x = &(*x)->next;
	}
	free_graphs(dev);
}

// Stream capture and graphs, as the driver documents them
// (cuStreamBeginCapture, cuThreadExchangeStreamCaptureMode, cuGraph*):
//
//   - cuStreamBeginCapture on a stream other than the default ones starts
//     recording its work into a new graph instead of running it: kernel
//     launches, the asynchronous copies and memsets (nodes of the graph,
//     with the arguments' bytes copied at the call). cuStreamEndCapture
//     hands the graph over; where the capture began in a mode other than
//     RELAXED it must be called on the thread that began it
//     (STREAM_CAPTURE_WRONG_THREAD otherwise). cuStreamIsCapturing
//     reports the state.
//   - Potentially unsafe calls (cuMemAlloc, cuMemFree, the synchronous
//     copies and memsets, module loads and unloads, page-locked host
//     memory's allocation and free) are prohibited, as the driver
//     documents for the thread's capture interaction mode: in GLOBAL (the
//     default) when the calling thread has a capture not begun in RELAXED
//     mode or another thread has one begun in GLOBAL mode; in
//     THREAD_LOCAL when the calling thread has one not begun in RELAXED
//     mode; never in RELAXED. A prohibited call returns
//     STREAM_CAPTURE_UNSUPPORTED and invalidates the captures that
//     prohibited it: their cuStreamEndCapture returns
//     STREAM_CAPTURE_INVALIDATED and no graph.
//   - Work on the legacy default stream (a launch, a synchronous copy or
//     memset, its synchronisation) while a blocking stream of its context
//     is capturing would synchronise with the capture: it returns
//     STREAM_CAPTURE_IMPLICIT and invalidates that capture. So do a
//     synchronisation or query of a capturing stream itself
//     (STREAM_CAPTURE_UNSUPPORTED).
//   - cuGraphInstantiateWithFlags copies a graph into an executable graph;
//     cuGraphLaunch runs its nodes in order on a stream, at the launch,
//     as a launch or copy would (a kernel's arguments are those captured,
//     a copy's host memory is read or written at the launch);
//     cuGraphExecUpdate (both forms) takes a graph of the same topology,
//     the same node types and kernels, and replaces the executable
//     graph's parameters with its, else reports why not
//     (GRAPH_EXEC_UPDATE_FAILURE). cuGraphGetNodes counts and lists nodes.
//   - Graphs and executable graphs are pointers to the fake's records,
//     checked against the live ones (INVALID_HANDLE once destroyed; a call
//     holds them FAKECUDA_HOLD_NS, as it holds events and streams, and one
//     destroyed meanwhile counts in fakecuda_stale_calls), and counted: fakecuda_live_graphs, fakecuda_live_graph_execs,
//     fakecuda_graph_launches, and fakecuda_graph_kernels (kernel nodes
//     run).
enum {
	STREAM_CAPTURE_UNSUPPORTED = 900, STREAM_CAPTURE_INVALIDATED = 901, STREAM_CAPTURE_IMPLICIT = 906,
	STREAM_CAPTURE_WRONG_THREAD = 908, GRAPH_EXEC_UPDATE_FAILURE = 910,
};
enum { MODE_GLOBAL = 0, MODE_THREAD_LOCAL = 1, MODE_RELAXED = 2 };
enum { NODE_KERNEL = 0, NODE_MEMCPY = 1, NODE_MEMSET = 2 };
enum { COPY_HTOD = 0, COPY_DTOH = 1, COPY_DTOD = 2 };
#define NON_BLOCKING 0x1u
#define MAXPARAMBYTES 1024
long long fakecuda_live_graphs, fakecuda_live_graph_execs, fakecuda_graph_launches, fakecuda_graph_kernels;
long long fakecuda_captures_invalidated; // captures invalidated by a prohibited or implicitly synchronising call
typedef struct {
	int type;
	ffunc *fn;
	unsigned g[3], b[3], shmem;
	int nparam;
	unsigned char params[MAXPARAMBYTES];
	int kind; // a copy's
	uintptr_t dst, src;
	size_t n;
	unsigned value; // a memset's, of esize bytes, n times
	int esize;
} fnode;
typedef struct fgraph {
	int dev, exec, nnode, cap;
	int users; // calls on it under way (held_graph), under mu
	fnode *nodes;
	struct fgraph *next;
} fgraph;
static fgraph *graphs; // the live graphs and executable graphs, under mu
static int global_captures; // captures begun in GLOBAL mode, under mu
static __thread int thread_mode;        // the thread's capture interaction mode (MODE_GLOBAL by default)
static __thread int thread_nonrelaxed;  // captures this thread began in a mode other than RELAXED
static __thread int thread_global;      // of which in GLOBAL mode

static fgraph *new_graph(int dev, int exec) { // under mu
	fgraph *g = calloc(1, sizeof *g);
	if (g == NULL) return NULL;
	g->dev = dev;
	g->exec = exec;
	g->next = graphs;
	graphs = g;
	if (exec) fakecuda_live_graph_execs++;
	else fakecuda_live_graphs++;
	return g;
}
static fgraph *live_graph(void *h, int exec) { // under mu
	for (fgraph *g = graphs; g != NULL; g = g->next)
		if (g == h && g->exec == exec) return g;
	return NULL;
}
// held_graph holds a live graph (or executable graph) hold_ns, as lookup
// holds a handle: 0 (counted as a stale call) if it was destroyed before or
// during the hold. Not under mu.
// A call on a graph while another is under way on it counts in
// fakecuda_graph_shared: the driver requires the calls on one graph (or
// executable graph) serialized, instantiation and launches included.
long long fakecuda_graph_shared;
static int held_graph(void *h, int exec) {
	pthread_mutex_lock(&mu);
	fgraph *g = live_graph(h, exec);
	int ok = g != NULL;
	if (ok && g->users++ > 0) fakecuda_graph_shared++;
	pthread_mutex_unlock(&mu);
	long long hold_ns = __atomic_load_n(&fakecuda_hold_ns, __ATOMIC_RELAXED);
	if (ok && hold_ns > 0) {
		long long t0 = now_ns();
		while (now_ns() - t0 < hold_ns) {
		}
	}
	if (ok) {
		pthread_mutex_lock(&mu);
		g = live_graph(h, exec);
		ok = g != NULL;
		if (ok) g->users--;
		pthread_mutex_unlock(&mu);
	}
	if (!ok) count(&fakecuda_stale_calls);
	return ok;
}
static void free_graph(fgraph *g) { // under mu
	for (fgraph **x = &graphs; *x != NULL; x = &(*x)->next)
		if (*x == g) {
			*x = g->next;
			if (g->exec) fakecuda_live_graph_execs--;
			else fakecuda_live_graphs--;
			free(g->nodes);
			free(g);
			return;
		}
}
static fnode *add_node(fgraph *g) { // under mu
	if (g->nnode == g->cap) {
		int c = g->cap ? 2 * g->cap : 8;
		fnode *n = realloc(g->nodes, (size_t)c * sizeof *n);
		if (n == NULL) return NULL;
		g->nodes = n;
		g->cap = c;
	}
	fnode *n = &g->nodes[g->nnode++];
	memset(n, 0, sizeof *n);
	return n;
}
// end_capture ends st's capture (under mu), undoing its thread's counts
// where it is on the thread that began it.
static void end_capture(slot *st) {
	if (st->cap_mode == MODE_GLOBAL) global_captures--;
	if (st->cap_mode != MODE_RELAXED && pthread_equal(st->cap_thread, pthread_self())) {
		thread_nonrelaxed--;
		if (st->cap_mode == MODE_GLOBAL) thread_global--;
	}
	st->cap = CAP_NONE;
}
static void invalidate(slot *st) { // under mu
	if (st->cap == CAP_ACTIVE) {
		st->cap = CAP_INVALIDATED;
		fakecuda_captures_invalidated++;
	}
}
// prohibited is the answer to a potentially unsafe call: OK, or
// STREAM_CAPTURE_UNSUPPORTED, the captures that prohibit it invalidated.
static CUresult prohibited(void) {
	int mine = thread_nonrelaxed > 0 && thread_mode != MODE_RELAXED;
	pthread_mutex_lock(&mu);
	int others = thread_mode == MODE_GLOBAL && global_captures - thread_global > 0;
	if (mine || others) {
		for (int i = 3; i < nused; i++) {
			slot *st = &slots[i];
			if (st->kind != STREAM || st->cap != CAP_ACTIVE || st->cap_mode == MODE_RELAXED) continue;
			int here = pthread_equal(st->cap_thread, pthread_self());
			if ((mine && here) || (others && !here && st->cap_mode == MODE_GLOBAL)) invalidate(st);
		}
	}
	pthread_mutex_unlock(&mu);
	return mine || others ? STREAM_CAPTURE_UNSUPPORTED : OK;
}
// implicit is the answer to work on the legacy default stream of dev's
// context: OK, or STREAM_CAPTURE_IMPLICIT, the blocking streams capturing
// there invalidated.
static CUresult implicit(int dev) {
	CUresult r = OK;
	pthread_mutex_lock(&mu);
	for (int i = 3; i < nused; i++) {
		slot *st = &slots[i];
		if (st->kind == STREAM && st->dev == dev && st->cap == CAP_ACTIVE && !(st->flags & NON_BLOCKING)) {
			invalidate(st);
			r = STREAM_CAPTURE_IMPLICIT;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static int legacy(void *s) { return (uintptr_t)s <= 1; }
// capturing reports whether st records its work (under mu); an
// invalidated capture takes the work and drops it.
static int capturing(slot *st) { return st != NULL && st->cap != CAP_NONE; }

static CUresult cuStreamBeginCapture(void *s, int mode) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (st == NULL) return STREAM_CAPTURE_UNSUPPORTED; // a default stream
	if (mode < MODE_GLOBAL || mode > MODE_RELAXED) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	CUresult r = OK;
	if (st->cap != CAP_NONE) r = ILLEGAL_STATE;
	else if ((st->cap_graph = new_graph(st->dev, 0)) == NULL) r = OUT_OF_MEMORY;
	else {
		st->cap = CAP_ACTIVE;
		st->cap_mode = mode;
		st->cap_thread = pthread_self();
		if (mode == MODE_GLOBAL) global_captures++;
		if (mode != MODE_RELAXED) {
			thread_nonrelaxed++;
			if (mode == MODE_GLOBAL) thread_global++;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuStreamEndCapture(void *s, void **graph) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (st == NULL) return ILLEGAL_STATE;
	pthread_mutex_lock(&mu);
	CUresult r = OK;
	if (st->cap == CAP_NONE) r = ILLEGAL_STATE;
	else if (st->cap_mode != MODE_RELAXED && !pthread_equal(st->cap_thread, pthread_self())) r = STREAM_CAPTURE_WRONG_THREAD;
	else {
		fgraph *g = st->cap_graph;
		if (st->cap == CAP_INVALIDATED) {
			free_graph(g);
			g = NULL;
			r = STREAM_CAPTURE_INVALIDATED;
		}
		end_capture(st);
		st->cap_graph = NULL;
		*graph = g;
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuStreamIsCapturing(void *s, int *status) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	*status = st ? __atomic_load_n(&st->cap, __ATOMIC_RELAXED) : CAP_NONE;
	return OK;
}
static CUresult cuThreadExchangeStreamCaptureMode(int *mode) {
	if (mode == NULL || *mode < MODE_GLOBAL || *mode > MODE_RELAXED) return INVALID_VALUE;
	int old = thread_mode;
	thread_mode = *mode;
	*mode = old;
	return OK;
}

// run_kernel runs fn as a launch of it does, on st (NULL: a default
// stream), its parameters at params[i]. Under mu; a spin's wait is set by
// the caller from *spin_ns.
static CUresult run_kernel(ffunc *fn, unsigned gx, unsigned bx, void **params, long long *spin_ns) {
	*spin_ns = 0;
	if (fn->what == FN_ADD_ONE && fn->nparam == 2 && params != NULL) {
		float *p = (float *)(uintptr_t)*(uint64_t *)params[0];
		unsigned n = *(unsigned *)params[1];
		unsigned long long threads = (unsigned long long)gx * bx;
		if (threads > n) threads = n;
		if (threads > 0 && !within((uintptr_t)p, threads * sizeof(float))) return ILLEGAL_ADDRESS;
		for (unsigned long long i = 0; i < threads; i++) p[i] += 1;
	}
	if (fn->what == FN_SPIN && fn->nparam == 1 && params != NULL) *spin_ns = (long long)*(uint64_t *)params[0];
	return OK;
}
static void spun(slot *st, long long ns) {
	if (st && ns > 0) {
		st->done_at = max(st->done_at, now_ns()) + ns;
		queued(st->dev, st->done_at);
	}
}

// cuLaunchKernel takes the parameters through kernelParams (a pointer per
// parameter) or through extra: CU_LAUNCH_PARAM_BUFFER_POINTER (1) and
// CU_LAUNCH_PARAM_BUFFER_SIZE (2), each followed by its value, then
// CU_LAUNCH_PARAM_END (0); the buffer laid out as the kernel's parameters
// and at least as long as they are. Both at once, another key, or a buffer
// without its size or too short are INVALID_VALUE. Launches through a
// buffer are counted in fakecuda_buffer_launches besides fakecuda_launches.
long long fakecuda_buffer_launches;
static CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, void *s, void **params, void **extra) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (legacy(s) && current && implicit(ctx_dev(current)) != OK) return STREAM_CAPTURE_IMPLICIT;
	pthread_mutex_lock(&mu);
	ffunc *fn = live_function(f);
	if (fn == NULL) {
		pthread_mutex_unlock(&mu);
		return INVALID_HANDLE;
	}
	// The function's context must be the stream's (a default stream's is
	// the current one).
	if ((st ? st->dev : ctx_dev(current)) != fn->mod->dev) {
		pthread_mutex_unlock(&mu);
		return INVALID_HANDLE;
	}
	void *from_buf[MAXPARAM];
	int via_buf = extra != NULL;
	if (via_buf) {
		const unsigned char *buf = NULL;
		size_t size = 0, total = fn->nparam > 0 ? fn->off[fn->nparam - 1] + fn->size[fn->nparam - 1] : 0;
		int sized = 0, ok = params == NULL;
		for (int i = 0; ok && extra[i] != NULL; i += 2) {
			if (extra[i] == (void *)1) buf = extra[i + 1];
			else if (extra[i] == (void *)2 && extra[i + 1] != NULL) size = *(const size_t *)extra[i + 1], sized = 1;
			else ok = 0;
		}
		// The size must be the parameters' end, as the package computes it:
		// drivers have been reported to refuse a padded one.
		if (!ok || buf == NULL || !sized || size != total) {
			pthread_mutex_unlock(&mu);
			return INVALID_VALUE;
		}
		for (int i = 0; i < fn->nparam; i++) from_buf[i] = (void *)(buf + fn->off[i]);
		params = from_buf;
	}
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
			(unsigned long long)bx * by * bz > (unsigned long long)fn->maxntid ||
			(fn->nparam > 0 && params == NULL && extra == NULL) || shmem > (48u << 10)) {
		pthread_mutex_unlock(&mu);
		return INVALID_VALUE;
	}
	fakecuda_launches++;
	fakecuda_buffer_launches += via_buf;
	fakecuda_last_grid_x = gx, fakecuda_last_grid_y = gy, fakecuda_last_grid_z = gz;
	fakecuda_last_block_x = bx, fakecuda_last_block_y = by, fakecuda_last_block_z = bz;
	fakecuda_last_shmem = shmem;
	if (capturing(st)) { // a kernel node, its arguments' bytes copied now
		CUresult r = OK;
		size_t total = fn->nparam > 0 ? fn->off[fn->nparam - 1] + fn->size[fn->nparam - 1] : 0;
		fnode *n = total > MAXPARAMBYTES || (params == NULL && fn->nparam > 0) ? NULL : add_node(st->cap_graph);
		if (n == NULL) r = NOT_SUPPORTED;
		else {
			n->type = NODE_KERNEL;
			n->fn = fn;
			n->g[0] = gx, n->g[1] = gy, n->g[2] = gz, n->b[0] = bx, n->b[1] = by, n->b[2] = bz;
			n->shmem = shmem;
			n->nparam = fn->nparam;
			for (int i = 0; i < fn->nparam; i++) memcpy(n->params + fn->off[i], params[i], fn->size[i]);
		}
		pthread_mutex_unlock(&mu);
		return r;
	}
	long long ns;
	CUresult r = run_kernel(fn, gx, bx, params, &ns);
	pthread_mutex_unlock(&mu);
	if (r == OK) spun(st, ns);
	return r;
}

// cuLaunchCooperativeKernel: a launch whose blocks must all fit on the
// device at once: the fake's device holds 1,024 blocks
// (COOPERATIVE_LAUNCH_TOO_LARGE past them). Counted in
// fakecuda_coop_launches besides fakecuda_launches.
enum { COOPERATIVE_LAUNCH_TOO_LARGE = 720, COOP_MAX_BLOCKS = 1024 };
long long fakecuda_coop_launches;
static CUresult cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		unsigned bz, unsigned shmem, void *s, void **params) {
	if ((unsigned long long)gx * gy * gz > COOP_MAX_BLOCKS) return COOPERATIVE_LAUNCH_TOO_LARGE;
	CUresult r = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
	if (r == OK) count(&fakecuda_coop_launches);
	return r;
}

// cuLaunchKernelEx: CUlaunchConfig and its CUlaunchAttributes as the
// driver reads them. A cluster shape (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
// must divide the grid (else CUDA_ERROR_INVALID_VALUE) and hold at most 8
// blocks, the portable size (else CUDA_ERROR_INVALID_CLUSTER_SIZE); a
// cooperative attribute launches as cuLaunchCooperativeKernel. The last
// cluster shape launched is kept in fakecuda_last_cluster_x, _y and _z, and the launches
// with one counted in fakecuda_cluster_launches.
typedef struct {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	const struct fattr *attrs;
	unsigned nattrs;
} fcfg;
typedef struct fattr {
	int id;
	char pad[4];
	union {
		char raw[64];
		struct { unsigned x, y, z; } cluster;
		int coop;
	} v;
} fattr;
_Static_assert(sizeof(fcfg) == 56 && sizeof(fattr) == 72, "CUlaunchConfig and CUlaunchAttribute layouts");
enum { ATTR_COOPERATIVE = 2, ATTR_CLUSTER_DIMENSION = 4, INVALID_CLUSTER_SIZE = 912 };
long long fakecuda_cluster_launches;
long long fakecuda_last_cluster_x, fakecuda_last_cluster_y, fakecuda_last_cluster_z;
static CUresult cuLaunchKernelEx(const fcfg *c, void *f, void **params, void **extra) {
	if (c == NULL || (c->nattrs > 0 && c->attrs == NULL)) return INVALID_VALUE;
	int coop = 0, cluster = 0;
	unsigned cx = 1, cy = 1, cz = 1;
	for (unsigned i = 0; i < c->nattrs; i++) {
		const fattr *a = &c->attrs[i];
		if (a->id == ATTR_CLUSTER_DIMENSION) {
			cx = a->v.cluster.x, cy = a->v.cluster.y, cz = a->v.cluster.z, cluster = 1;
			if (!cx || !cy || !cz || c->gx % cx || c->gy % cy || c->gz % cz) return INVALID_VALUE;
			if ((unsigned long long)cx * cy * cz > 8) return INVALID_CLUSTER_SIZE;
		} else if (a->id == ATTR_COOPERATIVE)
			coop = a->v.coop;
		else
			return NOT_SUPPORTED;
	}
	CUresult r = coop ? cuLaunchCooperativeKernel(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shmem, c->stream, params)
	                  : cuLaunchKernel(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shmem, c->stream, params, extra);
	if (r == OK && cluster) {
		pthread_mutex_lock(&mu);
		fakecuda_last_cluster_x = cx, fakecuda_last_cluster_y = cy, fakecuda_last_cluster_z = cz;
		pthread_mutex_unlock(&mu);
		count(&fakecuda_cluster_launches);
	}
	return r;
}

// The asynchronous copies (between devices too: cuMemcpyPeerAsync) and
// memsets: run at the call on a stream (the fake's work is instant),
// recorded as a node while the stream captures.
static CUresult copy_now(int kind, uintptr_t dst, uintptr_t src, size_t n) { // under mu
	if ((kind != COPY_HTOD && !within(src, n)) || (kind != COPY_DTOH && !within(dst, n))) return INVALID_VALUE;
	memcpy((void *)dst, (const void *)src, n);
	return OK;
}
static CUresult copy_async(int kind, uintptr_t dst, uintptr_t src, size_t n, void *s) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (legacy(s) && implicit(ctx_dev(current)) != OK) return STREAM_CAPTURE_IMPLICIT;
	pthread_mutex_lock(&mu);
	CUresult r = OK;
	if (capturing(st)) {
		fnode *x = add_node(st->cap_graph);
		if (x == NULL) r = OUT_OF_MEMORY;
		else x->type = NODE_MEMCPY, x->kind = kind, x->dst = dst, x->src = src, x->n = n;
	} else
		r = copy_now(kind, dst, src, n);
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuMemcpyHtoDAsync(unsigned long long dst, const void *src, size_t n, void *s) {
	return copy_async(COPY_HTOD, (uintptr_t)dst, (uintptr_t)src, n, s);
}
static CUresult cuMemcpyDtoHAsync(void *dst, unsigned long long src, size_t n, void *s) {
	return copy_async(COPY_DTOH, (uintptr_t)dst, (uintptr_t)src, n, s);
}
static CUresult cuMemcpyDtoDAsync(unsigned long long dst, unsigned long long src, size_t n, void *s) {
	return copy_async(COPY_DTOD, (uintptr_t)dst, (uintptr_t)src, n, s);
}
// cuMemcpyPeerAsync: both contexts live, each range in an allocation of its
// context's device.
static int within_dev(uintptr_t p, size_t n, int dev) { // under mu
	for (falloc *a = allocs; a != NULL; a = a->next)
		if (a->dev == dev && p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base)) return 1;
	return 0;
}
static CUresult cuMemcpyPeerAsync(unsigned long long dst, void *dctx, unsigned long long src, void *sctx, size_t n, void *s) {
	int dd = ctx_dev(dctx), sd = ctx_dev(sctx);
	if (dd < 0 || sd < 0) return INVALID_CONTEXT;
	if (released(dd) || released(sd)) return CONTEXT_IS_DESTROYED;
	pthread_mutex_lock(&mu);
	int ok = within_dev((uintptr_t)dst, n, dd) && within_dev((uintptr_t)src, n, sd);
	pthread_mutex_unlock(&mu);
	return ok ? copy_async(COPY_DTOD, (uintptr_t)dst, (uintptr_t)src, n, s) : INVALID_VALUE;
}
// Peer access: cuDeviceCanAccessPeer says yes for two different devices
// unless FAKECUDA_NO_PEER is set; cuCtxEnablePeerAccess (flags 0, another
// device's live context) turns it on from the current context's device,
// once: again is PEER_ACCESS_ALREADY_ENABLED (704), as the driver answers.
long long fakecuda_peer_enables; // cuCtxEnablePeerAccess calls, turning access on or not
static CUresult cuDeviceCanAccessPeer(int *can, int dev, int peer) {
	if (dev < 0 || dev >= ndev || peer < 0 || peer >= ndev) return INVALID_DEVICE;
	*can = dev != peer && getenv("FAKECUDA_NO_PEER") == NULL;
	return OK;
}
static CUresult cuCtxEnablePeerAccess(void *peer_ctx, unsigned flags) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	int dev = ctx_dev(current), peer = ctx_dev(peer_ctx);
	if (peer < 0 || released(peer)) return INVALID_CONTEXT;
	if (flags != 0) return INVALID_VALUE;
	if (dev == peer || getenv("FAKECUDA_NO_PEER") != NULL) return 217; // CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
	pthread_mutex_lock(&mu);
	int was = peer_on[dev][peer];
	peer_on[dev][peer] = 1;
	fakecuda_peer_enables++;
	pthread_mutex_unlock(&mu);
	return was ? 704 : OK;
}
long long fakecuda_memsets; // memsets run (not captured)
static CUresult set_now(uintptr_t dst, unsigned v, int esize, size_t n) { // under mu
	if (!within(dst, n * (size_t)esize)) return INVALID_VALUE;
	for (size_t i = 0; i < n; i++) memcpy((void *)(dst + i * (size_t)esize), &v, (size_t)esize); // little-endian
	fakecuda_memsets++;
	return OK;
}
static CUresult memset_async(uintptr_t dst, unsigned v, int esize, size_t n, void *s) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (legacy(s) && implicit(ctx_dev(current)) != OK) return STREAM_CAPTURE_IMPLICIT;
	if (esize > 1 && dst % (uintptr_t)esize) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	CUresult r = OK;
	if (capturing(st)) {
		fnode *x = add_node(st->cap_graph);
		if (x == NULL) r = OUT_OF_MEMORY;
		else x->type = NODE_MEMSET, x->dst = dst, x->value = v, x->esize = esize, x->n = n;
	} else
		r = set_now(dst, v, esize, n);
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void *s) { return memset_async((uintptr_t)d, v, 1, n, s); }
static CUresult cuMemsetD16Async(unsigned long long d, unsigned short v, size_t n, void *s) { return memset_async((uintptr_t)d, v, 2, n, s); }
static CUresult cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void *s) { return memset_async((uintptr_t)d, v, 4, n, s); }
// The synchronous memsets run on the legacy default stream, and are
// potentially unsafe during capture.
static CUresult memset_sync(uintptr_t dst, unsigned v, int esize, size_t n) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	CUresult r = prohibited();
	if (r != OK) return r;
	return memset_async(dst, v, esize, n, NULL);
}
static CUresult cuMemsetD8(unsigned long long d, unsigned char v, size_t n) { return memset_sync((uintptr_t)d, v, 1, n); }
static CUresult cuMemsetD16(unsigned long long d, unsigned short v, size_t n) { return memset_sync((uintptr_t)d, v, 2, n); }
static CUresult cuMemsetD32(unsigned long long d, unsigned v, size_t n) { return memset_sync((uintptr_t)d, v, 4, n); }

static CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
	(void)flags;
	if (!held_graph(graph, 0)) return INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	fgraph *g = live_graph(graph, 0), *x = NULL;
	CUresult r = g == NULL ? INVALID_HANDLE : released(g->dev) ? CONTEXT_IS_DESTROYED : OK;
	if (r == OK && (x = new_graph(g->dev, 1)) == NULL) r = OUT_OF_MEMORY;
	if (r == OK && g->nnode > 0) {
		x->nodes = malloc((size_t)g->nnode * sizeof *x->nodes);
		if (x->nodes == NULL) {
			free_graph(x);
			r = OUT_OF_MEMORY;
		} else {
			memcpy(x->nodes, g->nodes, (size_t)g->nnode * sizeof *x->nodes);
			x->nnode = x->cap = g->nnode;
		}
	}
	if (r == OK) *exec = x;
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuGraphLaunch(void *exec, void *s) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (legacy(s) && implicit(ctx_dev(current)) != OK) return STREAM_CAPTURE_IMPLICIT;
	if (!held_graph(exec, 1)) return INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	fgraph *x = live_graph(exec, 1);
	CUresult r = x == NULL ? INVALID_HANDLE : (st ? st->dev : ctx_dev(current)) != x->dev ? INVALID_VALUE : OK;
	if (r == OK && capturing(st)) r = NOT_SUPPORTED; // a child graph node: not modelled
	long long spin = 0;
	if (r == OK) {
		fakecuda_graph_launches++;
		for (int i = 0; i < x->nnode && r == OK; i++) {
			fnode *n = &x->nodes[i];
			void *ps[MAXPARAM];
			long long ns;
			switch (n->type) {
			case NODE_KERNEL:
				for (int j = 0; j < n->nparam; j++) ps[j] = n->params + n->fn->off[j];
				fakecuda_graph_kernels++;
				r = run_kernel(n->fn, n->g[0], n->b[0], ps, &ns);
				spin += ns;
				break;
			case NODE_MEMCPY:
				r = copy_now(n->kind, n->dst, n->src, n->n);
				break;
			case NODE_MEMSET:
				r = set_now(n->dst, n->value, n->esize, n->n);
				break;
			}
		}
	}
	pthread_mutex_unlock(&mu);
	if (r == OK) spun(st, spin);
	return r;
}
static CUresult destroy_graph(void *h, int exec) {
	pthread_mutex_lock(&mu);
	fgraph *g = live_graph(h, exec);
	if (g != NULL) free_graph(g);
	pthread_mutex_unlock(&mu);
	return g ? OK : INVALID_HANDLE;
}
static CUresult cuGraphDestroy(void *g) { return destroy_graph(g, 0); }
static CUresult cuGraphExecDestroy(void *x) { return destroy_graph(x, 1); }
static CUresult cuGraphGetNodes(void *graph, void **nodes, size_t *n) {
	if (n == NULL) return INVALID_VALUE;
	if (!held_graph(graph, 0)) return INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	fgraph *g = live_graph(graph, 0);
	if (g == NULL) {
		pthread_mutex_unlock(&mu);
		return INVALID_HANDLE;
	}
	if (nodes != NULL) {
		for (size_t i = 0; i < *n && i < (size_t)g->nnode; i++) nodes[i] = &g->nodes[i];
		if (*n > (size_t)g->nnode) *n = (size_t)g->nnode;
	} else
		*n = (size_t)g->nnode;
	pthread_mutex_unlock(&mu);
	return OK;
}
// update is cuGraphExecUpdate's check and update: CU_GRAPH_EXEC_UPDATE_*
// in *result, and the node at fault in *node.
enum { UPDATE_SUCCESS = 0, UPDATE_TOPOLOGY_CHANGED = 2, UPDATE_NODE_TYPE_CHANGED = 3, UPDATE_FUNCTION_CHANGED = 4 };
static CUresult update(void *exec, void *graph, void **node, int *result) {
	if (!held_graph(exec, 1) || !held_graph(graph, 0)) return INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	fgraph *x = live_graph(exec, 1), *g = live_graph(graph, 0);
	CUresult r = x == NULL || g == NULL ? INVALID_HANDLE : x->dev != g->dev ? INVALID_VALUE : OK;
	*node = NULL;
	*result = UPDATE_SUCCESS;
	if (r == OK) {
		if (x->nnode != g->nnode) *result = UPDATE_TOPOLOGY_CHANGED;
		for (int i = 0; i < g->nnode && *result == UPDATE_SUCCESS; i++) {
			if (g->nodes[i].type != x->nodes[i].type) *result = UPDATE_NODE_TYPE_CHANGED;
			else if (g->nodes[i].type == NODE_KERNEL && g->nodes[i].fn != x->nodes[i].fn) *result = UPDATE_FUNCTION_CHANGED;
			if (*result != UPDATE_SUCCESS) *node = &g->nodes[i];
		}
		if (*result == UPDATE_SUCCESS) memcpy(x->nodes, g->nodes, (size_t)g->nnode * sizeof *g->nodes);
		else r = GRAPH_EXEC_UPDATE_FAILURE;
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuGraphExecUpdate(void *exec, void *graph, void **node, int *result) { return update(exec, graph, node, result); }
typedef struct { int result; void *node, *from; } update_info;
static CUresult cuGraphExecUpdate_v2(void *exec, void *graph, update_info *info) {
	info->from = NULL;
	return update(exec, graph, &info->node, &info->result);
}

// drop_capture ends the capture of a stream being destroyed, its graph
// freed. Under mu.
static void drop_capture(slot *st) {
	if (st->cap == CAP_NONE) return;
	free_graph(st->cap_graph);
	st->cap_graph = NULL;
	end_capture(st);
}
// capture_sync is the answer to a synchronisation or query of s: of a
// capturing stream, STREAM_CAPTURE_UNSUPPORTED (the capture invalidated);
// of the legacy default stream, implicit's.
static CUresult capture_sync(void *s, slot *st) {
	if (legacy(s)) return current ? implicit(ctx_dev(current)) : OK;
	if (st == NULL) return OK;
	pthread_mutex_lock(&mu);
	int cap = st->cap != CAP_NONE;
	if (cap) invalidate(st);
	pthread_mutex_unlock(&mu);
	return cap ? STREAM_CAPTURE_UNSUPPORTED : OK;
}
// free_graphs frees the graphs of dev's context, destroyed. Under mu.
static void free_graphs(int dev) {
	for (fgraph **x = &graphs; *x != NULL;) {
		if ((*x)->dev == dev) free_graph(*x);
		else x = &(*x)->next;
	}
}

// Stream-ordered memory (cuMemAllocAsync, cuMemFreeAsync): from the
// device's pool, allocated and freed at the call (the fake's work is
// instant), never waiting for the device's work and never prohibited
// during another stream's capture; a stream capturing one is refused
// (the driver's allocation nodes are not modelled). Counted in
// fakecuda_async_allocs and fakecuda_async_frees besides the live
// allocations.
long long fakecuda_async_allocs, fakecuda_async_frees;
static CUresult pool_alloc(unsigned long long *dptr, size_t n, void *s, void *pool_of_alloc);
static CUresult cuMemAllocAsync(unsigned long long *dptr, size_t n, void *s) {
	return pool_alloc(dptr, n, s, NULL);
}
static CUresult pool_alloc(unsigned long long *dptr, size_t n, void *s, void *pool_of_alloc) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (capturing(st)) return NOT_SUPPORTED;
	if (n == 0) return INVALID_VALUE;
	int dev = st ? st->dev : ctx_dev(current);
	falloc *a = malloc(sizeof *a);
	void *p = malloc(n);
	if (a == NULL || p == NULL) {
		free(a);
		free(p);
		return OUT_OF_MEMORY;
	}
	memset(p, 0xa5, n);
	a->base = (uintptr_t)p;
	a->size = n;
	a->dev = dev;
	a->pool = 1;
	a->opened = 0;
	a->mpool = pool_of_alloc;
	pthread_mutex_lock(&mu);
	a->next = allocs;
	allocs = a;
	fakecuda_live_allocs++;
	fakecuda_alloc_bytes += (long long)n;
	fakecuda_async_allocs++;
	pthread_mutex_unlock(&mu);
	*dptr = (unsigned long long)a->base;
	return OK;
}
long long fakecuda_pool_ptrs_imported; // cuMemPoolImportPointer mappings not freed
static CUresult cuMemFreeAsync(unsigned long long dptr, void *s) {
	CUresult bad;
	slot *st = stream_of(s, &bad);
	if (bad) return bad;
	if (capturing(st)) return NOT_SUPPORTED;
	pthread_mutex_lock(&mu);
	for (falloc **x = &allocs; *x != NULL; x = &(*x)->next)
		if ((*x)->base == (uintptr_t)dptr) {
			if ((*x)->mpool && (*x)->opened > 0) { // an importer's free: the mapping goes
				(*x)->opened--;
				fakecuda_pool_ptrs_imported--;
				pthread_mutex_unlock(&mu);
				return OK;
			}
			free_alloc(x);
			fakecuda_async_frees++;
			pthread_mutex_unlock(&mu);
			return OK;
		}
	pthread_mutex_unlock(&mu);
	return INVALID_VALUE;
}


// Memory pools shared with other processes (cuMemPoolCreate with a handle
// type): a pool of a device whose allocations (cuMemAllocFromPoolAsync)
// are device memory as cuMemAllocAsync's. cuMemPoolExportToShareableHandle
// of a pool made with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR writes a
// file descriptor of its own (a memfd), which
// cuMemPoolImportFromShareableHandle finds again by its inode (one address
// space stands for two processes), making an imported pool;
// cuMemPoolExportPointer writes an allocation's address and pool into the
// 64 bytes, and cuMemPoolImportPointer, into an imported pool of the same
// pool, maps it (the same address), counted until a free, which unmaps
// the first mappings before the allocation itself is freed. Live pools are
// counted in fakecuda_live_pools.
typedef struct fpool {
	int used, dev, types, imported;
	int access[MAXDEV]; // cuMemPoolSetAccess's flags per device; the pool's own device has 3 (read and write)
	struct fpool *src; // an imported pool's exporter's
	ino_t ino;         // its exported descriptor's inode (0: not exported)
} fpool;
static fpool pools[64]; // under mu
long long fakecuda_live_pools;
static fpool *pool_of(void *p) { // under mu
	fpool *x = p;
	return x >= pools && x < pools + 64 && x->used ? x : NULL;
}
static CUresult cuMemPoolCreate(void **pool, const int *props) {
	if (!current) return INVALID_CONTEXT;
	if (pool == NULL || props == NULL) return INVALID_VALUE;
	// CUmemPoolProps: allocType, handleTypes, location {type, id}.
	if (props[0] != 1 || props[2] != 1 || props[3] < 0 || props[3] >= ndev) return INVALID_VALUE;
	if (props[1] & ~1) return NOT_SUPPORTED; // only POSIX file descriptors here
	pthread_mutex_lock(&mu);
	fpool *x = NULL;
	for (int i = 0; i < 64 && x == NULL; i++)
		if (!pools[i].used) x = &pools[i];
	if (x != NULL) {
		*x = (fpool){.used = 1, .dev = props[3], .types = props[1]};
		fakecuda_live_pools++;
	}
	pthread_mutex_unlock(&mu);
	if (x == NULL) return OUT_OF_MEMORY;
	*pool = x;
	return OK;
}
static CUresult cuMemPoolDestroy(void *pool) {
	pthread_mutex_lock(&mu);
	fpool *x = pool_of(pool);
	if (x != NULL) {
		x->used = 0;
		fakecuda_live_pools--;
	}
	pthread_mutex_unlock(&mu);
	return x ? OK : INVALID_VALUE;
}
// cuMemPoolGetAccess and cuMemPoolSetAccess: CUmemAccessDesc is a
// location {type, id} and the flags; only devices' locations.
long long fakecuda_pool_access_sets; // devices given access to a pool
static CUresult cuMemPoolGetAccess(int *flags, void *pool, const int *loc) {
	if (flags == NULL || loc == NULL || loc[0] != 1 || loc[1] < 0 || loc[1] >= ndev) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	fpool *x = pool_of(pool);
	if (x != NULL) *flags = loc[1] == x->dev ? 3 : x->access[loc[1]];
	pthread_mutex_unlock(&mu);
	return x ? OK : INVALID_VALUE;
}
static CUresult cuMemPoolSetAccess(void *pool, const int *desc, size_t n) {
	pthread_mutex_lock(&mu);
	fpool *x = pool_of(pool);
	CUresult r = x ? OK : INVALID_VALUE;
	for (size_t i = 0; i < n && r == OK; i++) {
		const int *d = desc + 3 * i;
		if (d[0] != 1 || d[1] < 0 || d[1] >= ndev || (d[1] == x->dev && d[2] != 3)) r = INVALID_VALUE;
		else if (d[1] != x->dev) x->access[d[1]] = d[2], fakecuda_pool_access_sets++;
	}
	pthread_mutex_unlock(&mu);
	return r;
}
static CUresult cuMemAllocFromPoolAsync(unsigned long long *dptr, size_t n, void *pool, void *s) {
	pthread_mutex_lock(&mu);
	fpool *x = pool_of(pool);
	int ok = x != NULL && !x->imported; // an imported pool only maps its exporter's allocations
	pthread_mutex_unlock(&mu);
	if (!ok) return INVALID_VALUE;
	return pool_alloc(dptr, n, s, pool);
}
static CUresult cuMemPoolExportToShareableHandle(void *out, void *pool, int type, unsigned long long flags) {
	if (out == NULL || flags != 0) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	fpool *x = pool_of(pool);
	int ok = x != NULL && !x->imported && (x->types & type) && type == 1;
	pthread_mutex_unlock(&mu);
	if (!ok) return INVALID_VALUE;
	char name[64];
	snprintf(name, sizeof name, "/tmp/fakecuda-pool-%d-XXXXXX", (int)getpid());
	int fd = mkstemp(name);
	if (fd < 0) return OUT_OF_MEMORY;
	unlink(name);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&mu);
	x->ino = st.st_ino;
	pthread_mutex_unlock(&mu);
	*(int *)out = fd;
	return OK;
}
static CUresult cuMemPoolImportFromShareableHandle(void **pool, void *handle, int type, unsigned long long flags) {
	if (!current) return INVALID_CONTEXT;
	if (pool == NULL || type != 1 || flags != 0) return INVALID_VALUE;
	struct stat st;
	if (fstat((int)(intptr_t)handle, &st) != 0) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	fpool *src = NULL, *x = NULL;
	for (int i = 0; i < 64; i++) {
		if (pools[i].used && !pools[i].imported && pools[i].ino == st.st_ino && src == NULL) src = &pools[i];
		if (!pools[i].used && x == NULL) x = &pools[i];
	}
	if (src != NULL && x != NULL) {
		*x = (fpool){.used = 1, .dev = src->dev, .types = src->types, .imported = 1, .src = src};
		fakecuda_live_pools++;
	}
	pthread_mutex_unlock(&mu);
	if (src == NULL) return INVALID_VALUE;
	if (x == NULL) return OUT_OF_MEMORY;
	*pool = x;
	return OK;
}
typedef struct { uint64_t magic, ptr; void *pool; char pad[40]; } fptrdata;
_Static_assert(sizeof(fptrdata) == 64, "CUmemPoolPtrExportData");
static CUresult cuMemPoolExportPointer(fptrdata *out, unsigned long long dptr) {
	if (out == NULL) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	falloc *a = allocs;
	while (a != NULL && a->base != (uintptr_t)dptr) a = a->next;
	fpool *x = a ? pool_of(a->mpool) : NULL;
	int ok = x != NULL && x->types != 0;
	pthread_mutex_unlock(&mu);
	if (!ok) return INVALID_VALUE;
	memset(out, 0, sizeof *out);
	*out = (fptrdata){.magic = 0xfa4ec0da, .ptr = dptr, .pool = x};
	return OK;
}
static CUresult cuMemPoolImportPointer(unsigned long long *dptr, void *pool, const fptrdata *in) {
	if (dptr == NULL || in == NULL || in->magic != 0xfa4ec0da) return INVALID_VALUE;
	pthread_mutex_lock(&mu);
	fpool *x = pool_of(pool);
	falloc *a = allocs;
	while (a != NULL && a->base != (uintptr_t)in->ptr) a = a->next;
	int ok = x != NULL && x->imported && x->src == in->pool && a != NULL && a->mpool == in->pool;
	if (ok) {
		a->opened++;
		fakecuda_pool_ptrs_imported++;
	}
	pthread_mutex_unlock(&mu);
	if (!ok) return INVALID_VALUE;
	*dptr = in->ptr;
	return OK;
}

// Page-locked host memory (cuMemHostAlloc, cuMemAllocHost, cuMemFreeHost):
// malloc's, in a list of live ones, counted in fakecuda_live_host_allocs;
// potentially unsafe during capture.
typedef struct fhost {
	void *p;
	struct fhost *next;
} fhost;
static fhost *hosts; // under mu
long long fakecuda_live_host_allocs;
static CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags) {
	(void)flags;
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	fhost *h = malloc(sizeof *h);
	void *p = malloc(n ? n : 1);
	if (h == NULL || p == NULL) {
		free(h);
		free(p);
		return OUT_OF_MEMORY;
	}
	h->p = p;
	pthread_mutex_lock(&mu);
	h->next = hosts;
	hosts = h;
	fakecuda_live_host_allocs++;
	pthread_mutex_unlock(&mu);
	*pp = p;
	return OK;
}
static CUresult cuMemAllocHost(void **pp, size_t n) { return cuMemHostAlloc(pp, n, 0); }
static CUresult cuMemFreeHost(void *p) {
	CUresult pr = prohibited();
	if (pr != OK) return pr;
	pthread_mutex_lock(&mu);
	for (fhost **x = &hosts; *x != NULL; x = &(*x)->next)
		if ((*x)->p == p) {
			fhost *h = *x;
			*x = h->next;
			fakecuda_live_host_allocs--;
			pthread_mutex_unlock(&mu);
			free(h->p);
			free(h);
			return OK;
		}
	pthread_mutex_unlock(&mu);
	return INVALID_VALUE;
}

// Device memory: 1 GiB, of which each live event or stream takes 4 KiB, so
// that a test of free memory sees handles that are not freed, and each
// allocation its bytes.
static CUresult cuMemGetInfo(size_t *free, size_t *total) {
	if (!current) return INVALID_CONTEXT;
	if (current_released()) return CONTEXT_IS_DESTROYED;
	*total = (size_t)1 << 30;
	*free = *total - (size_t)__atomic_load_n(&fakecuda_live_handles, __ATOMIC_RELAXED) * 4096 -
		(size_t)__atomic_load_n(&fakecuda_alloc_bytes, __ATOMIC_RELAXED);
	return OK;
}

// The entry points, each with the ABI version it came in (the pinned
// headers' cudaTypedefs.h: PFN_<name>_v<version>); a name may have several.
static const struct { const char *name; void *fn; int version; } procs[] = {
#define P(f, v) {#f, (void *)f, v}
	P(cuInit, 2000), P(cuDriverGetVersion, 2020), P(cuGetErrorName, 6000), P(cuGetErrorString, 6000),
	P(cuDeviceGetCount, 2000), P(cuDeviceGet, 2000), P(cuDeviceGetName, 2000), P(cuDeviceGetAttribute, 2000),
	P(cuDevicePrimaryCtxRetain, 7000), P(cuDevicePrimaryCtxRelease, 11000),
	P(cuCtxSetCurrent, 4000), P(cuCtxGetCurrent, 4000), P(cuCtxGetDevice, 2000), P(cuCtxSynchronize, 2000),
	P(cuCtxGetStreamPriorityRange, 5050),
	P(cuStreamCreate, 2000), P(cuStreamCreateWithPriority, 5050), P(cuStreamGetPriority, 5050),
	P(cuStreamGetFlags, 5050), P(cuStreamGetCtx, 9020),
	P(cuStreamDestroy, 4000), P(cuStreamSynchronize, 2000), P(cuStreamQuery, 2000), P(cuStreamWaitEvent, 3020),
	P(cuEventCreate, 2000), P(cuEventRecord, 2000), P(cuEventRecordWithFlags, 11010), P(cuEventQuery, 2000),
	P(cuEventSynchronize, 2000), P(cuEventDestroy, 4000),
	P(cuIpcGetEventHandle, 4010), P(cuIpcOpenEventHandle, 4010), P(cuLaunchHostFunc, 10000),
	P(cuModuleLoadData, 2000), P(cuModuleUnload, 2000), P(cuModuleGetFunction, 2000), P(cuLaunchKernel, 4000),
	P(cuMemGetInfo, 3020), P(cuFuncGetAttribute, 2020), P(cuFuncGetParamInfo, 12040),
	P(cuMemAlloc, 3020), P(cuMemFree, 3020), P(cuIpcGetMemHandle, 4010), P(cuIpcCloseMemHandle, 4010), P(cuMemcpyHtoD, 3020), P(cuMemcpyDtoH, 3020),
	P(cuStreamBeginCapture, 10010), P(cuStreamEndCapture, 10000), P(cuStreamIsCapturing, 10000),
	P(cuThreadExchangeStreamCaptureMode, 10010), P(cuGraphInstantiateWithFlags, 11040), P(cuGraphLaunch, 10000),
	P(cuGraphDestroy, 10000), P(cuGraphExecDestroy, 10000), P(cuGraphGetNodes, 10000),
	P(cuGraphExecUpdate, 10020),
	P(cuMemcpyHtoDAsync, 3020), P(cuMemcpyDtoHAsync, 3020), P(cuMemcpyDtoDAsync, 3020), P(cuMemcpyPeerAsync, 4000), P(cuDeviceCanAccessPeer, 4000), P(cuCtxEnablePeerAccess, 4000), P(cuLaunchCooperativeKernel, 9000), P(cuLaunchKernelEx, 11060), P(cuMemPoolCreate, 11020), P(cuMemPoolDestroy, 11020), P(cuMemAllocFromPoolAsync, 11020), P(cuMemPoolExportToShareableHandle, 11020), P(cuMemPoolImportFromShareableHandle, 11020), P(cuMemPoolExportPointer, 11020), P(cuMemPoolImportPointer, 11020), P(cuMemPoolGetAccess, 11020), P(cuMemPoolSetAccess, 11020),
	P(cuMemsetD8, 3020), P(cuMemsetD16, 3020), P(cuMemsetD32, 3020),
	P(cuMemsetD8Async, 3020), P(cuMemsetD16Async, 3020), P(cuMemsetD32Async, 3020),
	P(cuMemAllocAsync, 11020), P(cuMemFreeAsync, 11020),
	P(cuMemHostAlloc, 2020), P(cuMemAllocHost, 3020), P(cuMemFreeHost, 2000), P(cuMemHostRegister, 4000), P(cuMemHostRegister, 6050), P(cuMemHostUnregister, 4000), P(cuMemGetAddressRange, 3020),
#undef P
	{"cuEventElapsedTime", (void *)cuEventElapsedTime, 2000},
	{"cuEventElapsedTime", (void *)cuEventElapsedTime_v2, 12080},
	{"cuIpcOpenMemHandle", (void *)cuIpcOpenMemHandle_v2, 11000},
	{"cuGraphExecUpdate", (void *)cuGraphExecUpdate_v2, 12000},
};

// driver_version is what cuDriverGetVersion reports: FAKECUDA_VERSION
// (default 13000). The fake then behaves as a driver of that version: it
// hands out no entry point newer than it.
static int driver_version(void) {
	const char *s = getenv("FAKECUDA_VERSION");
	return s ? atoi(s) : 13000;
}

// find is cuGetProcAddress's answer: the newest entry point of name whose
// ABI version is at most the one asked for and the driver's; *status 0 if
// there is one, else 2 (CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) if name
// has only newer ones, else 1 (CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND).
static void *find(const char *name, int version, int *status) {
	int dv = driver_version(), best = -1;
	void *fn = NULL;
	*status = 1;
	for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
		if (strcmp(procs[i].name, name) != 0) continue;
		if (procs[i].version > version || procs[i].version > dv) {
			if (*status == 1) *status = 2;
			continue;
		}
		if (procs[i].version > best) {
			best = procs[i].version;
			fn = procs[i].fn;
		}
	}
	if (fn != NULL) *status = 0;
	return fn;
}

// The 11.x form, and the 12.0 form (with the symbol status), which a driver
// before 12.0 does not export: the fake built with -DFAKECUDA_DRIVER11 (the
// 11.x drivers' build, run with FAKECUDA_VERSION below 12000) has none.
CUresult cuGetProcAddress(const char *name, void **fn, int version, unsigned long long flags) {
	(void)flags;
	int status;
	*fn = find(name, version, &status);
	return *fn ? OK : NOT_FOUND;
}
#ifndef FAKECUDA_DRIVER11
CUresult cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags, int *status) {
	(void)flags;
	int st;
	*fn = find(name, version, &st);
	if (status) *status = st;
	return *fn ? OK : NOT_FOUND;
}
#endif
