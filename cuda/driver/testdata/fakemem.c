// fakemem.c: a fake libcuda that keeps, reads and writes memory as cuda.h
// documents the driver does, so that a wrapper that hands it Go memory it
// keeps, or a buffer smaller than it writes, is caught on a machine without
// a GPU. cuda/driver/fakemem_test.go builds it and loads it in a child test
// process through CUDAGEN_LIBCUDA (see there for how to use it).
//
// What it implements, each as cuda.h documents:
//   - cuInit, cuDriverGetVersion (FAKEMEM_DRIVER_VERSION, else 13000),
//     cuGetProcAddress (11.3 form) and cuGetProcAddress_v2, which hand out
//     every entry point by (name, ABI version): the newest at or below the
//     version asked for, as the driver does; one device, its primary
//     context, created contexts, the current context per thread.
//   - Streams, each with a thread of its own that runs its work in order
//     (host functions, stream callbacks, graph launches); the legacy and
//     per-thread default streams share one. cuStreamBeginCapture,
//     EndCapture, IsCapturing, GetCaptureInfo (10.1, 11.3 and 12.3 forms);
//     capture is per stream, global and thread-local captures must end on
//     the thread that began them, and a stream callback or synchronize
//     invalidates a capture, as the driver does;
//     cuThreadExchangeStreamCaptureMode swaps the thread's mode.
//   - cuLaunchHostFunc: outside a capture it runs fn(userData) once on the
//     stream's thread; in a capture it adds a host node keeping fn and
//     userData. cuStreamAddCallback runs once (refused in a capture).
//   - Graphs: cuGraphCreate/Destroy, cuGraphAddHostNode (keeps fn and
//     userData), cuGraphHostNodeGet/SetParams, cuGraphAddMemcpyNode and
//     cuGraphAddNode's kernel, memcpy and host members (keeping the copy's
//     host pointers; a kernel node copies its parameters during the call),
//     cuGraphGetNodes, cuGraphNodeGetType, cuGraphInstantiate (the 10.0 and
//     11.0 forms write bufferSize bytes of log, all of them) and
//     cuGraphInstantiateWithFlags, cuGraphLaunch (on the stream's thread:
//     every host node called, every memcpy node copied from and to its kept
//     pointers), cuGraphExecHostNodeSetParams, cuGraphExecDestroy (after
//     the launches in flight).
//   - User objects: cuUserObjectCreate/Retain/Release,
//     cuGraphRetainUserObject/ReleaseUserObject; an exec holds the user
//     objects of its graph (the CUDA C++ Programming Guide's rule); a
//     destructor runs when the last reference goes, on one shared thread
//     of the fake's ("executed by a shared internal thread").
//   - Memory: cuMemAlloc/Free (host memory standing for device memory; more
//     than 1 GiB fails and sends an over-budget notification),
//     cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost, cuMemcpyHtoD/DtoH,
//     cuMemcpy3D, and cuMemcpyHtoDAsync/DtoHAsync, which read or write the
//     host memory on the stream's thread, after the call (in a capture they
//     add memcpy nodes that keep it).
//   - cuLinkCreate/AddData/Complete/Destroy: keeps the optionValues array,
//     and with CU_JIT_INFO_LOG_BUFFER or CU_JIT_ERROR_LOG_BUFFER the buffers
//     it names; writes the logs and their sizes (and CU_JIT_WALL_TIME) at
//     AddData and Complete, reading optionValues again each time (a value
//     changed since cuLinkCreate counts as corruption, and is not written
//     through); AddData and Complete need a current context; a call on a
//     link from a thread other than the one that created it is counted
//     (fakemem_link_thread_moves): the real JIT linker crashed then. A
//     new link reuses the memory, and so the handle value, of the link last
//     destroyed, as a malloc would; while fakemem_link_destroy_hold is set,
//     cuLinkDestroy, the link ended, waits until it is cleared
//     (fakemem_link_destroy_waiting is 1 meanwhile), so that a test can make
//     a link in that window.
//   - cuModuleLoadData/GetFunction/Unload; cuLibraryLoadData (with
//     CU_LIBRARY_BINARY_IS_PRESERVED given, it keeps `code` and reads it
//     again at cuLibraryGetKernel and cuLibraryUnload: changed bytes count
//     as corruption), cuLibraryGetKernel, cuKernelGetFunction;
//     cuFuncGetParamInfo/cuKernelGetParamInfo; cuLaunchKernel reads
//     kernelParams[0..count) (each parameter's size) or `extra` up to
//     CU_LAUNCH_PARAM_END, and keeps the bytes read in fakemem_last_params.
//     An image is text: a line "fakemem-image", then a line per kernel, its
//     name and its parameters' sizes ("add_one 8 4"), ending in a NUL byte.
//   - cuTexRefCreate/Destroy, cuTexRefSetBorderColor (reads 4 floats),
//     cuTexRefGetBorderColor (writes 4).
//   - cuOccupancyMaxPotentialBlockSizeWithFlags, calling the block-size
//     callback during the call on the caller's thread.
//   - cuLogsRegisterCallback/Unregister (a failing call logs an error
//     inside the call, on its thread), cuDeviceRegisterAsyncNotification/
//     Unregister (an over-budget cuMemAlloc notifies inside the call).
//
// The counters below are read by the tests through dlsym.
//
// Built with -DFAKEMEM_LAYOUT_CHECK and cuda.h on the include path, it only
// checks its structs' layouts against the header's.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The C layouts of the structs the fake reads, as cuda.h declares them.
typedef struct { void (*fn)(void *); void *userData; } fm_host_params; // CUDA_HOST_NODE_PARAMS(_v2)
typedef struct {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	int srcMemoryType;
	const void *srcHost;
	unsigned long long srcDevice;
	void *srcArray, *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	int dstMemoryType;
	void *dstHost;
	unsigned long long dstDevice;
	void *dstArray, *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} fm_memcpy3d; // CUDA_MEMCPY3D
typedef struct {
	void *func;
	unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	void **kernelParams, **extra;
	void *kern, *ctx;
} fm_kernel_params; // CUDA_KERNEL_NODE_PARAMS_v3
typedef struct {
	int flags, reserved;
	void *copyCtx;
	fm_memcpy3d copyParams;
} fm_memcpy_node_params; // CUDA_MEMCPY_NODE_PARAMS
typedef struct {
	int type;
	int reserved0[3];
	union {
		long long reserved1[29];
		fm_kernel_params kernel;
		fm_memcpy_node_params memcpy;
		fm_host_params host;
	} u;
	long long reserved2;
} fm_node_params; // CUgraphNodeParams
typedef struct {
	int type;
	union { struct { unsigned long long bytesOverBudget; } overBudget; } info;
} fm_async_info; // CUasyncNotificationInfo

#ifdef FAKEMEM_LAYOUT_CHECK
#include <cuda.h>
#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), #a " and " #b " differ in size")
#define AT(a, b, fa, fb) _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa " is not at " #b "." #fb)
SAME(fm_host_params, CUDA_HOST_NODE_PARAMS);
AT(fm_host_params, CUDA_HOST_NODE_PARAMS, userData, userData);
SAME(fm_memcpy3d, CUDA_MEMCPY3D);
AT(fm_memcpy3d, CUDA_MEMCPY3D, srcMemoryType, srcMemoryType);
AT(fm_memcpy3d, CUDA_MEMCPY3D, srcHost, srcHost);
AT(fm_memcpy3d, CUDA_MEMCPY3D, srcDevice, srcDevice);
AT(fm_memcpy3d, CUDA_MEMCPY3D, srcPitch, srcPitch);
AT(fm_memcpy3d, CUDA_MEMCPY3D, srcHeight, srcHeight);
AT(fm_memcpy3d, CUDA_MEMCPY3D, dstMemoryType, dstMemoryType);
AT(fm_memcpy3d, CUDA_MEMCPY3D, dstHost, dstHost);
AT(fm_memcpy3d, CUDA_MEMCPY3D, dstDevice, dstDevice);
AT(fm_memcpy3d, CUDA_MEMCPY3D, dstPitch, dstPitch);
AT(fm_memcpy3d, CUDA_MEMCPY3D, WidthInBytes, WidthInBytes);
AT(fm_memcpy3d, CUDA_MEMCPY3D, Depth, Depth);
#if CUDA_VERSION >= 12020
SAME(fm_kernel_params, CUDA_KERNEL_NODE_PARAMS_v3);
AT(fm_kernel_params, CUDA_KERNEL_NODE_PARAMS_v3, kernelParams, kernelParams);
AT(fm_kernel_params, CUDA_KERNEL_NODE_PARAMS_v3, extra, extra);
AT(fm_kernel_params, CUDA_KERNEL_NODE_PARAMS_v3, kern, kern);
AT(fm_kernel_params, CUDA_KERNEL_NODE_PARAMS_v3, ctx, ctx);
SAME(fm_memcpy_node_params, CUDA_MEMCPY_NODE_PARAMS);
AT(fm_memcpy_node_params, CUDA_MEMCPY_NODE_PARAMS, copyParams, copyParams);
SAME(fm_node_params, CUgraphNodeParams);
AT(fm_node_params, CUgraphNodeParams, u.kernel, kernel);
AT(fm_node_params, CUgraphNodeParams, u.memcpy, memcpy);
AT(fm_node_params, CUgraphNodeParams, u.host, host);
AT(fm_node_params, CUgraphNodeParams, reserved2, reserved2);
#endif
#if CUDA_VERSION >= 12040
SAME(fm_async_info, CUasyncNotificationInfo);
AT(fm_async_info, CUasyncNotificationInfo, info.overBudget.bytesOverBudget, info.overBudget.bytesOverBudget);
#endif
#else // !FAKEMEM_LAYOUT_CHECK

// Results, as cuda.h numbers them.
enum {
	OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_DEVICE = 101,
	INVALID_IMAGE = 200, INVALID_CONTEXT = 201, INVALID_HANDLE = 400, ILLEGAL_STATE = 401,
	NOT_FOUND = 500, NOT_SUPPORTED = 801, CAPTURE_UNSUPPORTED = 900, CAPTURE_INVALIDATED = 901,
	CAPTURE_IMPLICIT = 906, CAPTURE_WRONG_THREAD = 908,
};

// The counters, read by the tests (dlsym). Each only grows, but for the
// live counts.
long long fakemem_corruption;          // kept memory found changed that must not change
long long fakemem_bad_handles;         // calls with a handle that is not (or no longer) live
long long fakemem_host_fns_run;        // cuLaunchHostFunc functions run outside a capture
long long fakemem_stream_callbacks_run;
long long fakemem_host_nodes_run;      // host nodes run by graph launches
long long fakemem_memcpy_nodes_run;
long long fakemem_kernel_nodes_run;
long long fakemem_kernel_launches;     // cuLaunchKernel calls that read their parameters
long long fakemem_destructors_run;     // user-object destructors run
long long fakemem_live_handles;        // live objects of every kind (contexts created, streams, graphs, nodes, execs, user objects, links, ...)
long long fakemem_live_user_objects;
long long fakemem_graph_launches;      // graph launches finished
long long fakemem_logs_written;        // link log writes
long long fakemem_link_thread_moves;   // calls on a link from a thread other than its cuLinkCreate's
long long fakemem_last_params_size;    // bytes of the last cuLaunchKernel's parameters
long long fakemem_link_destroy_hold;   // set: cuLinkDestroy waits, the link ended, until it is cleared
long long fakemem_link_destroy_waiting; // 1 while cuLinkDestroy waits
unsigned char fakemem_last_params[4096];

#define COUNT(c) __atomic_add_fetch(&(c), 1, __ATOMIC_SEQ_CST)
#define UNCOUNT(c) __atomic_sub_fetch(&(c), 1, __ATOMIC_SEQ_CST)

// One lock for the fake's state (recursive: a log from inside a call takes
// it again). Callbacks into the program run without it, but for the
// registered ones, whose calls must not outlive their unregistering.
static pthread_mutex_t mu;
__attribute__((constructor)) static void fm_init_lock(void) {
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&mu, &a);
}
#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

// ---- Objects: every handle is a pointer to one, live while registered.

enum kind { K_CTX = 1, K_STREAM, K_GRAPH, K_NODE, K_EXEC, K_UO, K_LINK, K_MOD, K_FUNC, K_LIB, K_KERNEL, K_TEX, K_LOGCB, K_ASYNCCB };

typedef struct obj { int kind; struct obj *next; } obj;
static obj *live;

static void reg(obj *o, int kind) {
	o->kind = kind;
	o->next = live;
	live = o;
	COUNT(fakemem_live_handles);
}
static void unreg(obj *o) {
	for (obj **p = &live; *p; p = &(*p)->next) {
		if (*p == o) {
			*p = o->next;
			UNCOUNT(fakemem_live_handles);
			return;
		}
	}
}
// find returns the live object h of kind, or NULL (counted).
static void *find(uintptr_t h, int kind) {
	for (obj *o = live; o; o = o->next) {
		if ((uintptr_t)o == h && o->kind == kind) return o;
	}
	COUNT(fakemem_bad_handles);
	return NULL;
}
static void *find2(uintptr_t h, int kind1, int kind2, int *kind) {
	for (obj *o = live; o; o = o->next) {
		if ((uintptr_t)o == h && (o->kind == kind1 || o->kind == kind2)) {
			*kind = o->kind;
			return o;
		}
	}
	COUNT(fakemem_bad_handles);
	return NULL;
}
// add registers the new object o as kind, under the lock.
static void add(obj *o, int kind) {
	LOCK();
	reg(o, kind);
	UNLOCK();
}
// take unregisters the live object h of kind, under the lock, and returns
// it for the caller to free, or NULL (counted).
static void *take(uintptr_t h, int kind) {
	LOCK();
	obj *o = find(h, kind);
	if (o) unreg(o);
	UNLOCK();
	return o;
}

// ---- Work queues: each stream's thread, and the destructors' thread.

typedef struct work { void (*run)(void *); void *arg; struct work *next; } work;
typedef struct worker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	work *head, *tail;
	int busy, started, quit;
	pthread_t t;
} worker;

static void *worker_main(void *a) {
	worker *w = a;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
		if (!w->head) break;
		work *k = w->head;
		w->head = k->next;
		if (!w->head) w->tail = NULL;
		w->busy = 1;
		pthread_mutex_unlock(&w->mu);
		k->run(k->arg);
		free(k);
		pthread_mutex_lock(&w->mu);
		w->busy = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}
static void worker_init(worker *w) {
	memset(w, 0, sizeof *w);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
}
static void worker_put(worker *w, void (*run)(void *), void *arg) {
	work *k = calloc(1, sizeof *k);
	k->run = run, k->arg = arg;
	pthread_mutex_lock(&w->mu);
	if (!w->started) {
		w->started = 1;
		pthread_create(&w->t, NULL, worker_main, w);
	}
	if (w->tail) w->tail->next = k; else w->head = k;
	w->tail = k;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}
// worker_drain waits until the queue is empty and nothing runs.
static void worker_drain(worker *w) {
	pthread_mutex_lock(&w->mu);
	while (w->head || w->busy) pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}
static int worker_idle(worker *w) {
	pthread_mutex_lock(&w->mu);
	int idle = !w->head && !w->busy;
	pthread_mutex_unlock(&w->mu);
	return idle;
}
static void worker_stop(worker *w) {
	pthread_mutex_lock(&w->mu);
	int started = w->started;
	w->quit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (started) pthread_join(w->t, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

static worker dtors; // the shared thread that runs user-object destructors

// ---- Registered callbacks and logging.

typedef struct { obj o; void (*fn)(void *, int, char *, size_t); void *ud; } logcb;
typedef struct { obj o; int dev; void (*fn)(fm_async_info *, void *, void *); void *ud; } asynccb;

// fm_log calls every log callback with the message, inside the call, as
// the driver does (CU_LOG_LEVEL_ERROR).
static void fm_log(const char *format, ...) {
	char msg[256];
	va_list ap;
	va_start(ap, format);
	vsnprintf(msg, sizeof msg, format, ap);
	va_end(ap);
	LOCK();
	for (obj *o = live; o; o = o->next) {
		if (o->kind == K_LOGCB) {
			logcb *c = (logcb *)o;
			c->fn(c->ud, 0, msg, strlen(msg));
		}
	}
	UNLOCK();
}
#define FAIL(r, ...) (fm_log(__VA_ARGS__), (r))

static void fm_notify_over_budget(int dev, unsigned long long over) {
	LOCK();
	for (obj *o = live; o; o = o->next) {
		if (o->kind == K_ASYNCCB && ((asynccb *)o)->dev == dev) {
			asynccb *c = (asynccb *)o;
			fm_async_info info = {1, {{over}}}; // CU_ASYNC_NOTIFICATION_TYPE_OVER_BUDGET
			c->fn(&info, c->ud, c);
		}
	}
	UNLOCK();
}

// ---- Init, device, contexts.

static int inited;
#define NEED_INIT() do { if (!inited) return NOT_INITIALIZED; } while (0)

typedef struct { obj o; int primary, refs; } ctx;
static ctx primary;
static __thread ctx *current;

static void init_streams(void);

static int fm_cuInit(unsigned flags) {
	if (flags) return INVALID_VALUE;
	LOCK();
	if (!inited) {
		inited = 1;
		primary.primary = 1;
		reg(&primary.o, K_CTX);
		worker_init(&dtors);
		init_streams();
	}
	UNLOCK();
	return OK;
}
static int fm_cuDeviceGetCount(int *n) {
	NEED_INIT();
	if (!n) return INVALID_VALUE;
	*n = 1;
	return OK;
}
static int fm_cuDeviceGet(int *dev, int ordinal) {
	NEED_INIT();
	if (!dev) return INVALID_VALUE;
	if (ordinal != 0) return INVALID_DEVICE;
	*dev = 0;
	return OK;
}
static int fm_cuDevicePrimaryCtxRetain(uintptr_t *pctx, int dev) {
	NEED_INIT();
	if (!pctx) return INVALID_VALUE;
	if (dev != 0) return INVALID_DEVICE;
	LOCK();
	primary.refs++;
	UNLOCK();
	*pctx = (uintptr_t)&primary;
	return OK;
}
static int fm_cuDevicePrimaryCtxRelease(int dev) {
	NEED_INIT();
	if (dev != 0) return INVALID_DEVICE;
	LOCK();
	int r = primary.refs > 0 ? (primary.refs--, OK) : INVALID_CONTEXT;
	UNLOCK();
	return r;
}
static int ctx_create(uintptr_t *pctx, int dev) {
	NEED_INIT();
	if (!pctx) return INVALID_VALUE;
	if (dev != 0) return INVALID_DEVICE;
	ctx *c = calloc(1, sizeof *c);
	add(&c->o, K_CTX);
	current = c;
	*pctx = (uintptr_t)c;
	return OK;
}
static int fm_cuCtxCreate_v2(uintptr_t *pctx, unsigned flags, int dev) { (void)flags; return ctx_create(pctx, dev); }
static int fm_cuCtxCreate_v3(uintptr_t *pctx, void *params, int n, unsigned flags, int dev) {
	(void)params, (void)n, (void)flags;
	return ctx_create(pctx, dev);
}
static int fm_cuCtxCreate_v4(uintptr_t *pctx, void *params, unsigned flags, int dev) {
	(void)params, (void)flags;
	return ctx_create(pctx, dev);
}
static int fm_cuCtxDestroy(uintptr_t h) {
	NEED_INIT();
	LOCK();
	ctx *c = find(h, K_CTX);
	if (!c || c->primary) {
		UNLOCK();
		return c ? INVALID_CONTEXT : INVALID_HANDLE;
	}
	unreg(&c->o);
	UNLOCK();
	if (current == c) current = NULL;
	free(c);
	return OK;
}
static int fm_cuCtxGetCurrent(uintptr_t *pctx) {
	NEED_INIT();
	if (!pctx) return INVALID_VALUE;
	*pctx = (uintptr_t)current;
	return OK;
}
static int fm_cuCtxSetCurrent(uintptr_t h) {
	NEED_INIT();
	if (!h) {
		current = NULL;
		return OK;
	}
	LOCK();
	ctx *c = find(h, K_CTX);
	UNLOCK();
	if (!c) return INVALID_CONTEXT;
	current = c;
	return OK;
}
#define NEED_CTX() do { NEED_INIT(); if (!current) return INVALID_CONTEXT; } while (0)

// ---- Streams and capture.

typedef struct node node;
typedef struct graph graph;

typedef struct stream {
	obj o;
	worker w;
	int capture;  // 0 none, 1 active, 2 invalidated (CUstreamCaptureStatus)
	int mode;     // CUstreamCaptureMode
	pthread_t by; // the thread that began it
	graph *cg;
	unsigned long long id;
	node *last;   // the dependency of the next captured node
	const void *deps[1];
} stream;
static stream legacy; // the legacy and per-thread default streams
static void init_streams(void) { worker_init(&legacy.w); }
static unsigned long long capture_ids;
static int global_captures;

// stream_of finds a stream handle; 0, CU_STREAM_LEGACY and
// CU_STREAM_PER_THREAD are the default stream (which needs a context).
static int stream_of(uintptr_t h, stream **s) {
	if (h == 0 || h == 1 || h == 2) {
		if (!current) return INVALID_CONTEXT;
		if (global_captures) return CAPTURE_IMPLICIT;
		*s = &legacy;
		return OK;
	}
	*s = find(h, K_STREAM);
	return *s ? OK : INVALID_HANDLE;
}

static int fm_cuStreamCreate(uintptr_t *ph, unsigned flags) {
	(void)flags;
	NEED_CTX();
	if (!ph) return INVALID_VALUE;
	stream *s = calloc(1, sizeof *s);
	worker_init(&s->w);
	add(&s->o, K_STREAM);
	*ph = (uintptr_t)s;
	return OK;
}
static int fm_cuStreamCreateWithPriority(uintptr_t *ph, unsigned flags, int prio) {
	(void)prio;
	return fm_cuStreamCreate(ph, flags);
}
static void graph_free(graph *g);
static int fm_cuStreamDestroy(uintptr_t h) {
	NEED_INIT();
	LOCK();
	stream *s = find(h, K_STREAM);
	if (!s) {
		UNLOCK();
		return INVALID_HANDLE;
	}
	unreg(&s->o);
	if (s->capture) {
		if (s->mode == 0) global_captures--;
		graph_free(s->cg);
	}
	UNLOCK();
	worker_drain(&s->w);
	worker_stop(&s->w);
	free(s);
	return OK;
}
// invalidate ends s's capture in error (its caller holds the lock).
static void invalidate(stream *s) {
	if (s->capture == 1) s->capture = 2;
}
// uncaptured finds a stream handle (stream_of) for a call a capture does
// not take: on a capturing stream the call fails and ends the capture in
// error (the lock held).
static int uncaptured(uintptr_t h, stream **s) {
	int r = stream_of(h, s);
	if (r == OK && (*s)->capture) {
		invalidate(*s);
		r = CAPTURE_UNSUPPORTED;
	}
	return r;
}
// stream_wait is cuStreamSynchronize (wait: it waits for the stream's
// work, a call a capture does not take) and cuStreamQuery (whether the
// work is done).
static int stream_wait(uintptr_t h, int wait) {
	NEED_INIT();
	LOCK();
	stream *s = NULL;
	int r = wait ? uncaptured(h, &s) : stream_of(h, &s);
	UNLOCK();
	if (r != OK) return r;
	if (!wait) return worker_idle(&s->w) ? OK : 600; // CUDA_ERROR_NOT_READY
	worker_drain(&s->w);
	return OK;
}
static int fm_cuStreamSynchronize(uintptr_t h) { return stream_wait(h, 1); }
static int fm_cuStreamQuery(uintptr_t h) { return stream_wait(h, 0); }
static int fm_cuCtxSynchronize(void) {
	NEED_CTX();
	LOCK();
	int n = 0;
	for (obj *o = live; o; o = o->next) n += o->kind == K_STREAM;
	stream **all = calloc(n + 1, sizeof *all);
	int i = 0;
	for (obj *o = live; o; o = o->next) {
		if (o->kind == K_STREAM) all[i++] = (stream *)o;
	}
	UNLOCK();
	worker_drain(&legacy.w);
	for (i = 0; i < n; i++) worker_drain(&all[i]->w);
	free(all);
	return OK;
}

struct graph { obj o; node *first, *last; size_t n; struct uoref *refs; };

static int begin_capture(uintptr_t h, int mode) {
	NEED_INIT();
	if (mode < 0 || mode > 2) return INVALID_VALUE;
	if (h == 0 || h == 1 || h == 2) return CAPTURE_UNSUPPORTED;
	LOCK();
	stream *s = find(h, K_STREAM);
	int r = OK;
	if (!s) {
		r = INVALID_HANDLE;
	} else if (s->capture) {
		r = ILLEGAL_STATE;
	} else {
		graph *g = calloc(1, sizeof *g);
		reg(&g->o, K_GRAPH);
		s->capture = 1, s->mode = mode, s->by = pthread_self(), s->cg = g, s->id = ++capture_ids, s->last = NULL;
		if (mode == 0) global_captures++;
	}
	UNLOCK();
	return r;
}
static __thread int thread_mode; // cuThreadExchangeStreamCaptureMode's
static int fm_cuThreadExchangeStreamCaptureMode(int *mode) {
	NEED_INIT();
	if (!mode || *mode < 0 || *mode > 2) return INVALID_VALUE;
	int old = thread_mode;
	thread_mode = *mode;
	*mode = old;
	return OK;
}
static int fm_cuStreamBeginCapture(uintptr_t h) { return begin_capture(h, 0); }
static int fm_cuStreamBeginCapture_v2(uintptr_t h, int mode) { return begin_capture(h, mode); }
static int fm_cuStreamEndCapture(uintptr_t h, uintptr_t *phGraph) {
	NEED_INIT();
	if (!phGraph) return INVALID_VALUE;
	LOCK();
	stream *s = find(h, K_STREAM);
	int r = OK;
	if (!s) {
		r = INVALID_HANDLE;
	} else if (!s->capture) {
		r = ILLEGAL_STATE;
	} else if (s->mode != 2 && !pthread_equal(s->by, pthread_self())) {
		r = CAPTURE_WRONG_THREAD;
	} else {
		if (s->mode == 0) global_captures--;
		if (s->capture == 2) {
			graph_free(s->cg);
			*phGraph = 0;
			r = CAPTURE_INVALIDATED;
		} else {
			*phGraph = (uintptr_t)s->cg;
		}
		s->capture = 0, s->cg = NULL, s->last = NULL;
	}
	UNLOCK();
	return r;
}
static int fm_cuStreamIsCapturing(uintptr_t h, int *status) {
	NEED_INIT();
	if (!status) return INVALID_VALUE;
	LOCK();
	stream *s = NULL;
	int r = stream_of(h, &s);
	if (r == OK) *status = s->capture;
	UNLOCK();
	return r;
}
static int capture_info(uintptr_t h, int *status, unsigned long long *id, uintptr_t *g, const void ***deps, const void **edges, size_t *n) {
	NEED_INIT();
	if (!status) return INVALID_VALUE;
	LOCK();
	stream *s = NULL;
	int r = stream_of(h, &s);
	if (r == OK) {
		*status = s->capture;
		if (s->capture == 1) {
			s->deps[0] = s->last;
			if (id) *id = s->id;
			if (g) *g = (uintptr_t)s->cg;
			if (deps) *deps = s->deps;
			if (edges) *edges = NULL;
			if (n) *n = s->last ? 1 : 0;
		}
	}
	UNLOCK();
	return r;
}
static int fm_cuStreamGetCaptureInfo(uintptr_t h, int *status, unsigned long long *id) {
	return capture_info(h, status, id, NULL, NULL, NULL, NULL);
}
static int fm_cuStreamGetCaptureInfo_v2(uintptr_t h, int *status, unsigned long long *id, uintptr_t *g, const void ***deps, size_t *n) {
	return capture_info(h, status, id, g, deps, NULL, n);
}
static int fm_cuStreamGetCaptureInfo_v3(uintptr_t h, int *status, unsigned long long *id, uintptr_t *g, const void ***deps, const void **edges, size_t *n) {
	return capture_info(h, status, id, g, deps, edges, n);
}

// ---- Graphs, nodes, execs, user objects.

typedef struct kdef { char name[64]; int n; size_t off[32], size[32], total; } kdef;

struct node {
	obj o;
	graph *g;
	node *next; // in its graph, in the order added (a valid topological order)
	int type;   // CUgraphNodeType: 0 kernel, 1 memcpy, 3 host
	fm_host_params host;
	fm_memcpy3d copy;
	unsigned char *kparams; // a kernel node's parameters, copied when added
	size_t nkparams;
};

typedef struct uo { obj o; int refs; void *ptr; void (*destroy)(void *); } uo;
typedef struct uoref { uo *u; unsigned count; struct uoref *next; } uoref;

static void run_destructor(void *a) {
	uo *u = a;
	u->destroy(u->ptr);
	COUNT(fakemem_destructors_run);
	free(u);
}
// uo_release drops count references (the lock held); the last one queues
// the destructor on the destructors' thread.
static void uo_release(uo *u, unsigned count) {
	u->refs -= count;
	if (u->refs <= 0) {
		unreg(&u->o);
		UNCOUNT(fakemem_live_user_objects);
		worker_put(&dtors, run_destructor, u);
	}
}
static void refs_add(uoref **list, uo *u, unsigned count) {
	for (uoref *r = *list; r; r = r->next) {
		if (r->u == u) {
			r->count += count;
			return;
		}
	}
	uoref *r = calloc(1, sizeof *r);
	r->u = u, r->count = count, r->next = *list;
	*list = r;
}
static void refs_release(uoref **list) {
	while (*list) {
		uoref *r = *list;
		*list = r->next;
		uo_release(r->u, r->count);
		free(r);
	}
}

static node *node_new(graph *g, int type) {
	node *n = calloc(1, sizeof *n);
	n->g = g, n->type = type;
	reg(&n->o, K_NODE);
	if (g->last) g->last->next = n; else g->first = n;
	g->last = n;
	g->n++;
	return n;
}
static void graph_free(graph *g) {
	unreg(&g->o);
	for (node *n = g->first, *next; n; n = next) {
		next = n->next;
		unreg(&n->o);
		free(n->kparams);
		free(n);
	}
	refs_release(&g->refs);
	free(g);
}
static int fm_cuGraphCreate(uintptr_t *ph, unsigned flags) {
	NEED_INIT();
	if (!ph || flags) return INVALID_VALUE;
	graph *g = calloc(1, sizeof *g);
	add(&g->o, K_GRAPH);
	*ph = (uintptr_t)g;
	return OK;
}
static int fm_cuGraphDestroy(uintptr_t h) {
	NEED_INIT();
	LOCK();
	graph *g = find(h, K_GRAPH);
	if (g) graph_free(g);
	UNLOCK();
	return g ? OK : INVALID_HANDLE;
}
// check_deps checks that each dependency is a node of g (the lock held).
static int check_deps(graph *g, const uintptr_t *deps, size_t n) {
	if (n && !deps) return INVALID_VALUE;
	for (size_t i = 0; i < n; i++) {
		node *d = find(deps[i], K_NODE);
		if (!d || d->g != g) return INVALID_VALUE;
	}
	return OK;
}
static int fm_cuGraphAddHostNode(uintptr_t *ph, uintptr_t hg, const uintptr_t *deps, size_t n, const fm_host_params *p) {
	NEED_INIT();
	if (!ph || !p || !p->fn) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	int r = g ? check_deps(g, deps, n) : INVALID_HANDLE;
	if (r == OK) {
		node *nd = node_new(g, 3);
		nd->host = *p;
		*ph = (uintptr_t)nd;
	}
	UNLOCK();
	return r;
}
// host_node_params copies a host node's parameters to get, or from set.
static int host_node_params(uintptr_t h, fm_host_params *get, const fm_host_params *set) {
	NEED_INIT();
	if (!get && (!set || !set->fn)) return INVALID_VALUE;
	LOCK();
	node *nd = find(h, K_NODE);
	int r = !nd ? INVALID_HANDLE : nd->type != 3 ? INVALID_VALUE : OK;
	if (r == OK && get) *get = nd->host;
	if (r == OK && set) nd->host = *set;
	UNLOCK();
	return r;
}
static int fm_cuGraphHostNodeGetParams(uintptr_t h, fm_host_params *p) { return host_node_params(h, p, NULL); }
static int fm_cuGraphHostNodeSetParams(uintptr_t h, const fm_host_params *p) { return host_node_params(h, NULL, p); }
// copy_ok says whether the fake can do a copy: host, device or unified
// memory on both sides (no arrays), nothing NULL.
static int copy_ok(const fm_memcpy3d *c) {
	int t[2] = {c->srcMemoryType, c->dstMemoryType};
	for (int i = 0; i < 2; i++) {
		if (t[i] != 1 && t[i] != 2 && t[i] != 4) return 0;
	}
	if (c->srcMemoryType == 1 ? !c->srcHost : !c->srcDevice) return 0;
	if (c->dstMemoryType == 1 ? !c->dstHost : !c->dstDevice) return 0;
	return c->WidthInBytes > 0;
}
static int fm_cuGraphAddMemcpyNode(uintptr_t *ph, uintptr_t hg, const uintptr_t *deps, size_t n, const fm_memcpy3d *p, uintptr_t c) {
	(void)c;
	NEED_INIT();
	if (!ph || !p || !copy_ok(p)) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	int r = g ? check_deps(g, deps, n) : INVALID_HANDLE;
	if (r == OK) {
		node *nd = node_new(g, 1);
		nd->copy = *p; // the struct is copied; the host memory it names is kept
		*ph = (uintptr_t)nd;
	}
	UNLOCK();
	return r;
}
static int fm_cuGraphGetNodes(uintptr_t hg, uintptr_t *nodes, size_t *n) {
	NEED_INIT();
	if (!n) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	if (g) {
		if (nodes) {
			size_t i = 0;
			for (node *nd = g->first; nd && i < *n; nd = nd->next) nodes[i++] = (uintptr_t)nd;
			for (; i < *n; i++) nodes[i] = 0;
		}
		*n = g->n;
	}
	UNLOCK();
	return g ? OK : INVALID_HANDLE;
}
static int fm_cuGraphNodeGetType(uintptr_t h, int *type) {
	NEED_INIT();
	if (!type) return INVALID_VALUE;
	LOCK();
	node *nd = find(h, K_NODE);
	if (nd) *type = nd->type;
	UNLOCK();
	return nd ? OK : INVALID_HANDLE;
}

// Kernels: a module's or a library's, described by the image's text.
typedef struct { obj o; char *text; } module;
typedef struct { obj o; kdef k; } func;
typedef struct lib { obj o; const char *code; char *copy; size_t len; unsigned long long sum; int preserved; } lib;
typedef struct { obj o; kdef k; lib *l; } kernel;

static volatile unsigned long long sink;
static unsigned long long checksum(const unsigned char *p, size_t n) {
	unsigned long long h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}
// image_find reads a fakemem image for the kernel name: 1 found, 0 not,
// -1 not an image.
static int image_find(const char *text, const char *name, kdef *k) {
	const char *magic = "fakemem-image\n";
	if (strncmp(text, magic, strlen(magic)) != 0) return -1;
	const char *p = text + strlen(magic);
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[512];
		if (len >= sizeof line) return -1;
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (eol ? 1 : 0);
		char *save = NULL, *tok = strtok_r(line, " ", &save);
		if (!tok || strcmp(tok, name) != 0) continue;
		memset(k, 0, sizeof *k);
		snprintf(k->name, sizeof k->name, "%s", tok);
		size_t off = 0;
		while ((tok = strtok_r(NULL, " ", &save)) != NULL && k->n < 32) {
			size_t sz = strtoul(tok, NULL, 10), align = sz >= 8 ? 8 : sz >= 4 ? 4 : sz >= 2 ? 2 : 1;
			off = (off + align - 1) / align * align;
			k->off[k->n] = off, k->size[k->n] = sz;
			off += sz;
			k->n++;
		}
		k->total = off;
		return 1;
	}
	return 0;
}
static int fm_cuModuleLoadData(uintptr_t *pm, const void *image) {
	NEED_CTX();
	if (!pm || !image) return INVALID_VALUE;
	kdef k;
	if (image_find(image, "", &k) < 0) return INVALID_IMAGE;
	module *m = calloc(1, sizeof *m);
	m->text = strdup(image); // read during the call only
	add(&m->o, K_MOD);
	*pm = (uintptr_t)m;
	return OK;
}
static int fm_cuModuleUnload(uintptr_t h) {
	NEED_INIT();
	module *m = take(h, K_MOD);
	if (!m) return INVALID_HANDLE;
	free(m->text);
	free(m);
	return OK;
}
// func_new makes a function of the kernel k (the lock held).
static uintptr_t func_new(const kdef *k) {
	func *f = calloc(1, sizeof *f);
	f->k = *k;
	reg(&f->o, K_FUNC);
	return (uintptr_t)f;
}
// lib_code reads a library's code again (the lock held): a preserved one
// from the caller's memory, which must be as it was.
static const char *lib_code(lib *l) {
	if (!l->preserved) return l->copy;
	if (checksum((const unsigned char *)l->code, l->len + 1) != l->sum) {
		COUNT(fakemem_corruption);
		return NULL;
	}
	return l->code;
}
static int fm_cuLibraryLoadData(uintptr_t *pl, const void *code, int *jitOptions, void **jitValues, unsigned nJit,
		int *libOptions, void **libValues, unsigned nLib) {
	NEED_INIT();
	if (!pl || !code || (nJit && (!jitOptions || !jitValues)) || (nLib && !libOptions)) return INVALID_VALUE;
	(void)libValues;
	kdef k;
	if (image_find(code, "", &k) < 0) return INVALID_IMAGE;
	lib *l = calloc(1, sizeof *l);
	for (unsigned i = 0; i < nLib; i++) {
		if (libOptions[i] == 1) l->preserved = 1; // CU_LIBRARY_BINARY_IS_PRESERVED: code stays the caller's
	}
	l->len = strlen(code);
	if (l->preserved) {
		l->code = code;
		l->sum = checksum(code, l->len + 1);
	} else {
		l->copy = strdup(code);
	}
	add(&l->o, K_LIB);
	*pl = (uintptr_t)l;
	return OK;
}
// image_kernel is cuModuleGetFunction (h a module: *out a function) and
// cuLibraryGetKernel (h a library: *out a kernel), for the kernel name of
// h's image.
static int image_kernel(uintptr_t *out, uintptr_t h, int kind, const char *name) {
	NEED_INIT();
	if (!out || !name) return INVALID_VALUE;
	LOCK();
	obj *o = find(h, kind);
	const char *text = !o ? NULL : kind == K_MOD ? ((module *)o)->text : lib_code((lib *)o);
	kdef k;
	int r = !o ? INVALID_HANDLE : !text ? INVALID_IMAGE : image_find(text, name, &k) != 1 ? NOT_FOUND : OK;
	if (r == OK && kind == K_MOD) {
		*out = func_new(&k);
	} else if (r == OK) {
		kernel *kn = calloc(1, sizeof *kn);
		kn->k = k, kn->l = (lib *)o;
		reg(&kn->o, K_KERNEL);
		*out = (uintptr_t)kn;
	}
	UNLOCK();
	return r;
}
static int fm_cuModuleGetFunction(uintptr_t *pf, uintptr_t hm, const char *name) { return image_kernel(pf, hm, K_MOD, name); }
static int fm_cuLibraryGetKernel(uintptr_t *pk, uintptr_t hl, const char *name) { return image_kernel(pk, hl, K_LIB, name); }
static int fm_cuLibraryUnload(uintptr_t hl) {
	NEED_INIT();
	LOCK();
	lib *l = find(hl, K_LIB);
	if (l) {
		lib_code(l); // the driver reads a preserved image until here
		unreg(&l->o);
		for (obj *o = live, *next; o; o = next) {
			next = o->next;
			if (o->kind == K_KERNEL && ((kernel *)o)->l == l) {
				unreg(o);
				free(o);
			}
		}
	}
	UNLOCK();
	if (!l) return INVALID_HANDLE;
	free(l->copy);
	free(l);
	return OK;
}
static int fm_cuKernelGetFunction(uintptr_t *pf, uintptr_t hk) {
	NEED_CTX();
	if (!pf) return INVALID_VALUE;
	LOCK();
	kernel *kn = find(hk, K_KERNEL);
	if (kn) *pf = func_new(&kn->k);
	UNLOCK();
	return kn ? OK : INVALID_HANDLE;
}
// kdef_of is the description of a function or a kernel (the lock held).
static kdef *kdef_of(uintptr_t h) {
	int kind;
	obj *o = find2(h, K_FUNC, K_KERNEL, &kind);
	if (!o) return NULL;
	return kind == K_FUNC ? &((func *)o)->k : &((kernel *)o)->k;
}
static int param_info(uintptr_t h, size_t i, size_t *off, size_t *size) {
	NEED_INIT();
	if (!off) return INVALID_VALUE;
	LOCK();
	kdef *k = kdef_of(h);
	int r = !k ? INVALID_HANDLE : i >= (size_t)k->n ? INVALID_VALUE : OK;
	if (r == OK) {
		*off = k->off[i];
		if (size) *size = k->size[i];
	}
	UNLOCK();
	return r;
}
static int fm_cuFuncGetParamInfo(uintptr_t f, size_t i, size_t *off, size_t *size) { return param_info(f, i, off, size); }
static int fm_cuKernelGetParamInfo(uintptr_t k, size_t i, size_t *off, size_t *size) { return param_info(k, i, off, size); }

// read_params copies a launch's parameters into buf (k->total bytes), as
// the driver does during the call: kernelParams[0..n) each of its
// parameter's size, or extra's buffer, up to CU_LAUNCH_PARAM_END.
static int read_params(const kdef *k, void **kernelParams, void **extra, unsigned char *buf) {
	if (kernelParams && extra) return INVALID_VALUE;
	if (kernelParams) {
		for (int i = 0; i < k->n; i++) memcpy(buf + k->off[i], kernelParams[i], k->size[i]);
		return OK;
	}
	if (!extra) return k->n ? INVALID_VALUE : OK;
	const void *data = NULL;
	const size_t *size = NULL;
	for (size_t i = 0;; i += 2) {
		uintptr_t key = (uintptr_t)extra[i];
		if (key == 0) break;                                  // CU_LAUNCH_PARAM_END
		else if (key == 1) data = extra[i + 1];               // CU_LAUNCH_PARAM_BUFFER_POINTER
		else if (key == 2) size = (const size_t *)extra[i + 1]; // CU_LAUNCH_PARAM_BUFFER_SIZE
		else return INVALID_VALUE;
	}
	if (!data || !size || *size < k->total) return INVALID_VALUE;
	memcpy(buf, data, k->total);
	return OK;
}
static void record_params(const unsigned char *buf, size_t n) {
	size_t m = n < sizeof fakemem_last_params ? n : sizeof fakemem_last_params;
	memcpy(fakemem_last_params, buf, m);
	fakemem_last_params_size = (long long)n;
	COUNT(fakemem_kernel_launches);
}
static int fm_cuLaunchKernel(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, uintptr_t hs, void **kernelParams, void **extra) {
	(void)shmem;
	NEED_INIT();
	if (!gx || !gy || !gz || !bx || !by || !bz) return INVALID_VALUE;
	LOCK();
	kdef *k = kdef_of(f);
	stream *s = NULL;
	int r = k ? stream_of(hs, &s) : INVALID_HANDLE;
	unsigned char *buf = NULL;
	if (r == OK) {
		buf = calloc(1, k->total + 1);
		r = read_params(k, kernelParams, extra, buf);
	}
	if (r == OK && s->capture == 2) r = CAPTURE_INVALIDATED;
	if (r == OK && s->capture == 1) {
		node *nd = node_new(s->cg, 0);
		nd->kparams = buf, nd->nkparams = k->total, buf = NULL;
		s->last = nd;
	} else if (r == OK) {
		record_params(buf, k->total);
	}
	UNLOCK();
	free(buf);
	return r;
}

static int fm_cuGraphAddNode(uintptr_t *ph, uintptr_t hg, const uintptr_t *deps, size_t n, fm_node_params *p) {
	NEED_INIT();
	if (!ph || !p) return INVALID_VALUE;
	if (p->reserved0[0] || p->reserved0[1] || p->reserved0[2] || p->reserved2) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	int r = g ? check_deps(g, deps, n) : INVALID_HANDLE;
	if (r == OK) {
		node *nd = NULL;
		switch (p->type) {
		case 0: { // kernel: its parameters are copied now
			fm_kernel_params *kp = &p->u.kernel;
			kdef *k = kdef_of(kp->func ? (uintptr_t)kp->func : (uintptr_t)kp->kern);
			if (!k) {
				r = INVALID_VALUE;
				break;
			}
			unsigned char *buf = calloc(1, k->total + 1);
			r = read_params(k, kp->kernelParams, kp->extra, buf);
			if (r != OK) {
				free(buf);
				break;
			}
			nd = node_new(g, 0);
			nd->kparams = buf, nd->nkparams = k->total;
			break;
		}
		case 1: // memcpy: the host memory it names is kept
			if (p->u.memcpy.flags || p->u.memcpy.reserved || !copy_ok(&p->u.memcpy.copyParams)) {
				r = INVALID_VALUE;
				break;
			}
			nd = node_new(g, 1);
			nd->copy = p->u.memcpy.copyParams;
			break;
		case 3: // host: fn and userData are kept
			if (!p->u.host.fn) {
				r = INVALID_VALUE;
				break;
			}
			nd = node_new(g, 3);
			nd->host = p->u.host;
			break;
		default:
			r = NOT_SUPPORTED;
		}
		if (nd) *ph = (uintptr_t)nd;
	}
	UNLOCK();
	return r;
}
static int fm_cuGraphAddNode_v2(uintptr_t *ph, uintptr_t hg, const uintptr_t *deps, const void *edges, size_t n, fm_node_params *p) {
	(void)edges;
	return fm_cuGraphAddNode(ph, hg, deps, n, p);
}

typedef struct xnode { node *origin; int type; fm_host_params host; fm_memcpy3d copy; } xnode;
typedef struct exec { obj o; xnode *nodes; size_t n; uoref *refs; int inflight, destroyed; } exec;

static int instantiate(uintptr_t *ph, uintptr_t hg) {
	NEED_INIT();
	if (!ph) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	if (g) {
		exec *x = calloc(1, sizeof *x);
		x->nodes = calloc(g->n + 1, sizeof *x->nodes);
		for (node *nd = g->first; nd; nd = nd->next) {
			xnode *xn = &x->nodes[x->n++];
			xn->origin = nd, xn->type = nd->type, xn->host = nd->host, xn->copy = nd->copy;
		}
		// The exec holds references to the graph's user objects.
		for (uoref *r = g->refs; r; r = r->next) {
			r->u->refs += r->count;
			refs_add(&x->refs, r->u, r->count);
		}
		reg(&x->o, K_EXEC);
		*ph = (uintptr_t)x;
	}
	UNLOCK();
	return g ? OK : INVALID_HANDLE;
}
// The 10.0 and 11.0 forms write bufferSize bytes of log: the message, and
// NULs to the end.
static int fm_cuGraphInstantiate(uintptr_t *ph, uintptr_t hg, uintptr_t *errNode, char *log, size_t size) {
	int r = instantiate(ph, hg);
	if (errNode) *errNode = 0;
	if (log && size) {
		memset(log, 0, size);
		snprintf(log, size, "fakemem: instantiated graph %#lx: %s", (unsigned long)hg, r == OK ? "no errors" : "failed");
	}
	return r;
}
static int fm_cuGraphInstantiateWithFlags(uintptr_t *ph, uintptr_t hg, unsigned long long flags) {
	if (flags & ~0xfULL) return INVALID_VALUE;
	return instantiate(ph, hg);
}
static void exec_free(exec *x) {
	refs_release(&x->refs);
	free(x->nodes);
	free(x);
}
static int fm_cuGraphExecDestroy(uintptr_t h) {
	NEED_INIT();
	LOCK();
	exec *x = find(h, K_EXEC);
	if (x) {
		unreg(&x->o);
		x->destroyed = 1;
		if (!x->inflight) exec_free(x); // else the last launch frees it
	}
	UNLOCK();
	return x ? OK : INVALID_HANDLE;
}
static int fm_cuGraphExecHostNodeSetParams(uintptr_t hx, uintptr_t hn, const fm_host_params *p) {
	NEED_INIT();
	if (!p || !p->fn) return INVALID_VALUE;
	LOCK();
	exec *x = find(hx, K_EXEC);
	int r = x ? INVALID_VALUE : INVALID_HANDLE;
	for (size_t i = 0; x && i < x->n; i++) {
		if ((uintptr_t)x->nodes[i].origin == hn && x->nodes[i].type == 3) {
			x->nodes[i].host = *p;
			r = OK;
		}
	}
	UNLOCK();
	return r;
}
static void copy3d(const fm_memcpy3d *c) {
	const unsigned char *src = c->srcMemoryType == 1 ? c->srcHost : (const unsigned char *)(uintptr_t)c->srcDevice;
	unsigned char *dst = c->dstMemoryType == 1 ? c->dstHost : (unsigned char *)(uintptr_t)c->dstDevice;
	size_t depth = c->Depth ? c->Depth : 1, height = c->Height ? c->Height : 1;
	size_t sh = c->srcHeight ? c->srcHeight : height, dh = c->dstHeight ? c->dstHeight : height;
	for (size_t z = 0; z < depth; z++) {
		for (size_t y = 0; y < height; y++) {
			memcpy(dst + ((c->dstZ + z) * dh + c->dstY + y) * c->dstPitch + c->dstXInBytes,
				src + ((c->srcZ + z) * sh + c->srcY + y) * c->srcPitch + c->srcXInBytes, c->WidthInBytes);
		}
	}
}
// run_exec is one launch, on the stream's thread: the nodes in order,
// each with the parameters the exec has when it reaches it.
static void run_exec(void *a) {
	exec *x = a;
	for (size_t i = 0;; i++) {
		LOCK();
		if (i >= x->n) {
			UNLOCK();
			break;
		}
		xnode xn = x->nodes[i];
		UNLOCK();
		switch (xn.type) {
		case 3:
			xn.host.fn(xn.host.userData);
			COUNT(fakemem_host_nodes_run);
			break;
		case 1:
			copy3d(&xn.copy);
			COUNT(fakemem_memcpy_nodes_run);
			break;
		case 0:
			COUNT(fakemem_kernel_nodes_run);
			break;
		}
	}
	COUNT(fakemem_graph_launches);
	LOCK();
	if (--x->inflight == 0 && x->destroyed) exec_free(x);
	UNLOCK();
}
static int fm_cuGraphLaunch(uintptr_t hx, uintptr_t hs) {
	NEED_INIT();
	LOCK();
	exec *x = find(hx, K_EXEC);
	stream *s = NULL;
	int r = x ? uncaptured(hs, &s) : INVALID_HANDLE;
	if (r == OK) {
		x->inflight++;
		worker_put(&s->w, run_exec, x);
	}
	UNLOCK();
	return r;
}

static int fm_cuUserObjectCreate(uintptr_t *pu, void *ptr, void (*destroy)(void *), unsigned refs, unsigned flags) {
	NEED_INIT();
	if (!pu || !destroy || !refs || refs > 0x7fffffff || flags != 1) return INVALID_VALUE; // CU_USER_OBJECT_NO_DESTRUCTOR_SYNC required
	uo *u = calloc(1, sizeof *u);
	u->refs = (int)refs, u->ptr = ptr, u->destroy = destroy;
	add(&u->o, K_UO);
	COUNT(fakemem_live_user_objects);
	*pu = (uintptr_t)u;
	return OK;
}
static int fm_cuUserObjectRetain(uintptr_t h, unsigned count) {
	NEED_INIT();
	if (!count || count > 0x7fffffff) return INVALID_VALUE;
	LOCK();
	uo *u = find(h, K_UO);
	if (u) u->refs += (int)count;
	UNLOCK();
	return u ? OK : INVALID_HANDLE;
}
static int fm_cuUserObjectRelease(uintptr_t h, unsigned count) {
	NEED_INIT();
	if (!count || count > 0x7fffffff) return INVALID_VALUE;
	LOCK();
	uo *u = find(h, K_UO);
	if (u) uo_release(u, count);
	UNLOCK();
	return u ? OK : INVALID_HANDLE;
}
static int fm_cuGraphRetainUserObject(uintptr_t hg, uintptr_t h, unsigned count, unsigned flags) {
	NEED_INIT();
	if (!count || count > 0x7fffffff || flags > 1) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	uo *u = g ? find(h, K_UO) : NULL;
	if (u) {
		if (!(flags & 1)) u->refs += (int)count; // CU_GRAPH_USER_OBJECT_MOVE takes the caller's
		refs_add(&g->refs, u, count);
	}
	UNLOCK();
	return u ? OK : INVALID_HANDLE;
}
static int fm_cuGraphReleaseUserObject(uintptr_t hg, uintptr_t h, unsigned count) {
	NEED_INIT();
	if (!count || count > 0x7fffffff) return INVALID_VALUE;
	LOCK();
	graph *g = find(hg, K_GRAPH);
	int r = g ? INVALID_VALUE : INVALID_HANDLE;
	for (uoref **p = g ? &g->refs : NULL; p && *p; p = &(*p)->next) {
		uoref *ref = *p;
		if ((uintptr_t)ref->u != h || ref->count < count) continue;
		ref->count -= count;
		uo *u = ref->u;
		if (!ref->count) {
			*p = ref->next;
			free(ref);
		}
		uo_release(u, count);
		r = OK;
		break;
	}
	UNLOCK();
	return r;
}

// ---- Host functions and stream callbacks.

// captured finds a stream handle (stream_of) for work a capture takes as a
// node (the lock held): in an active capture *nd is a new node of type,
// the capture's last; in one ended in error the call fails.
static int captured(uintptr_t h, stream **s, int type, node **nd) {
	int r = stream_of(h, s);
	if (r == OK && (*s)->capture == 2) r = CAPTURE_INVALIDATED;
	if (r == OK && (*s)->capture == 1) {
		*nd = node_new((*s)->cg, type);
		(*s)->last = *nd;
	}
	return r;
}
typedef struct { void (*fn)(void *); void *ud; } hostcall;
static void run_host_fn(void *a) {
	hostcall *c = a;
	c->fn(c->ud);
	COUNT(fakemem_host_fns_run);
	free(c);
}
static int fm_cuLaunchHostFunc(uintptr_t hs, void (*fn)(void *), void *ud) {
	NEED_INIT();
	if (!fn) return INVALID_VALUE;
	LOCK();
	stream *s = NULL;
	node *nd = NULL;
	int r = captured(hs, &s, 3, &nd);
	if (nd) {
		nd->host.fn = fn, nd->host.userData = ud;
	} else if (r == OK) {
		hostcall *c = calloc(1, sizeof *c);
		c->fn = fn, c->ud = ud;
		worker_put(&s->w, run_host_fn, c);
	}
	UNLOCK();
	return r;
}
typedef struct { void (*cb)(uintptr_t, int, void *); uintptr_t s; void *ud; } streamcall;
static void run_stream_callback(void *a) {
	streamcall *c = a;
	c->cb(c->s, 0, c->ud);
	COUNT(fakemem_stream_callbacks_run);
	free(c);
}
static int fm_cuStreamAddCallback(uintptr_t hs, void (*cb)(uintptr_t, int, void *), void *ud, unsigned flags) {
	NEED_INIT();
	if (!cb || flags) return INVALID_VALUE;
	LOCK();
	stream *s = NULL;
	int r = uncaptured(hs, &s);
	if (r == OK) {
		streamcall *c = calloc(1, sizeof *c);
		c->cb = cb, c->s = hs, c->ud = ud;
		worker_put(&s->w, run_stream_callback, c);
	}
	UNLOCK();
	return r;
}

// ---- Memory.

#define BUDGET (1ULL << 30)
static int fm_cuMemAlloc(unsigned long long *dptr, size_t size) {
	NEED_CTX();
	if (!dptr) return INVALID_VALUE;
	if (size == 0) return FAIL(INVALID_VALUE, "fakemem: cuMemAlloc: bytesize is 0");
	if (size > BUDGET) {
		fm_notify_over_budget(0, size - BUDGET);
		return FAIL(OUT_OF_MEMORY, "fakemem: cuMemAlloc: %zu bytes is over the device's budget", size);
	}
	void *p = calloc(1, size);
	if (!p) return OUT_OF_MEMORY;
	*dptr = (uintptr_t)p;
	return OK;
}
static int fm_cuMemFree(unsigned long long dptr) {
	NEED_INIT();
	free((void *)(uintptr_t)dptr);
	return OK;
}
static int fm_cuMemcpyHtoD(unsigned long long dst, const void *src, size_t n) {
	NEED_CTX();
	if (n && (!dst || !src)) return INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, n);
	return OK;
}
static int fm_cuMemcpyDtoH(void *dst, unsigned long long src, size_t n) {
	NEED_CTX();
	if (n && (!dst || !src)) return INVALID_VALUE;
	memcpy(dst, (void *)(uintptr_t)src, n);
	return OK;
}

static int fm_cuMemAllocHost(void **pp, size_t size) {
	NEED_CTX();
	if (!pp || !size) return INVALID_VALUE;
	*pp = calloc(1, size);
	return *pp ? OK : OUT_OF_MEMORY;
}
static int fm_cuMemHostAlloc(void **pp, size_t size, unsigned flags) {
	(void)flags;
	return fm_cuMemAllocHost(pp, size);
}
static int fm_cuMemFreeHost(void *p) {
	NEED_INIT();
	free(p);
	return OK;
}
static int fm_cuMemcpy3D(const fm_memcpy3d *c) {
	NEED_CTX();
	if (!c || !copy_ok(c)) return INVALID_VALUE;
	copy3d(c);
	return OK;
}
// The asynchronous copies read or write the host memory when the stream
// gets to them, after the call; in a capture they become memcpy nodes,
// which keep it.
typedef struct { void *dst; const void *src; size_t n; } copycall;
static void run_copy(void *a) {
	copycall *c = a;
	memcpy(c->dst, c->src, c->n);
	free(c);
}
static int copy_async(void *dst, const void *src, size_t n, uintptr_t hs, int toDevice) {
	NEED_INIT();
	if (n && (!dst || !src)) return INVALID_VALUE;
	LOCK();
	stream *s = NULL;
	node *nd = NULL;
	int r = captured(hs, &s, 1, &nd);
	if (nd) {
		fm_memcpy3d *c = &nd->copy;
		c->srcMemoryType = toDevice ? 1 : 2, c->dstMemoryType = toDevice ? 2 : 1;
		if (toDevice) c->srcHost = src, c->dstDevice = (uintptr_t)dst;
		else c->srcDevice = (uintptr_t)src, c->dstHost = dst;
		c->srcPitch = c->dstPitch = c->WidthInBytes = n, c->Height = c->Depth = 1;
	} else if (r == OK) {
		copycall *c = calloc(1, sizeof *c);
		c->dst = dst, c->src = src, c->n = n;
		worker_put(&s->w, run_copy, c);
	}
	UNLOCK();
	return r;
}
static int fm_cuMemcpyHtoDAsync(unsigned long long dst, const void *src, size_t n, uintptr_t hs) {
	return copy_async((void *)(uintptr_t)dst, src, n, hs, 1);
}
static int fm_cuMemcpyDtoHAsync(void *dst, unsigned long long src, size_t n, uintptr_t hs) {
	return copy_async(dst, (const void *)(uintptr_t)src, n, hs, 0);
}

// ---- The JIT linker.

enum { JIT_WALL_TIME = 2, JIT_INFO_LOG = 3, JIT_INFO_LOG_SIZE = 4, JIT_ERROR_LOG = 5, JIT_ERROR_LOG_SIZE = 6 };
typedef struct {
	obj o;
	unsigned n;
	int *options;     // copied: cuda.h keeps no reference to it
	void **values;    // kept: "must remain valid for the life of the CUlinkState"
	void **expect;    // what values[i] must hold: as given, or as the fake last wrote it
	size_t cap[2], len[2]; // the info and error logs
	int inputs;
	char *cubin;
	pthread_t thread; // cuLinkCreate's: every later call on the link must come from it
} linkst;
// link_spare is the memory of the link last destroyed, which the next
// link reuses.
static linkst *link_spare;

// link_thread counts a call on l made from a thread other than the one
// that created it: the real driver's JIT linker crashed then.
static void link_thread(linkst *l) {
	if (!pthread_equal(l->thread, pthread_self())) COUNT(fakemem_link_thread_moves);
}

// link_values reads optionValues again: each must be as given or as last
// written by the fake; a change is corruption, and nothing is written
// through it.
static int link_values_ok(linkst *l) {
	for (unsigned i = 0; i < l->n; i++) {
		if (l->values[i] != l->expect[i]) {
			COUNT(fakemem_corruption);
			return 0;
		}
	}
	return 1;
}
static void link_set(linkst *l, int option, void *v) {
	for (unsigned i = 0; i < l->n; i++) {
		if (l->options[i] == option) l->values[i] = l->expect[i] = v;
	}
}
// link_log appends text to the info (0) or error (1) log named in the
// options, and writes the bytes filled to its size option.
static void link_log(linkst *l, int which, const char *text) {
	int opt = which ? JIT_ERROR_LOG : JIT_INFO_LOG;
	for (unsigned i = 0; i < l->n; i++) {
		if (l->options[i] != opt || !l->cap[which]) continue;
		char *buf = l->values[i];
		if (!buf) return;
		size_t room = l->cap[which] - l->len[which];
		if (room == 0) return;
		int m = snprintf(buf + l->len[which], room, "%s", text);
		l->len[which] += (size_t)m < room ? (size_t)m : room - 1;
		COUNT(fakemem_logs_written);
		link_set(l, which ? JIT_ERROR_LOG_SIZE : JIT_INFO_LOG_SIZE, (void *)(uintptr_t)(l->len[which] + 1));
	}
}
static int link_create(unsigned n, int *options, void **values, uintptr_t *out) {
	NEED_CTX();
	if (!out || (n && (!options || !values))) return INVALID_VALUE;
	LOCK();
	linkst *l = link_spare;
	link_spare = NULL;
	UNLOCK();
	if (l) {
		memset(l, 0, sizeof *l);
	} else {
		l = calloc(1, sizeof *l);
	}
	l->n = n;
	l->options = calloc(n + 1, sizeof *l->options);
	l->expect = calloc(n + 1, sizeof *l->expect);
	for (unsigned i = 0; i < n; i++) {
		l->options[i] = options[i];
		l->expect[i] = values[i];
		if (options[i] == JIT_INFO_LOG_SIZE) l->cap[0] = (unsigned)(uintptr_t)values[i];
		if (options[i] == JIT_ERROR_LOG_SIZE) l->cap[1] = (unsigned)(uintptr_t)values[i];
	}
	l->values = values; // kept until cuLinkDestroy
	l->thread = pthread_self();
	add(&l->o, K_LINK);
	for (int w = 0; w < 2; w++) {
		for (unsigned i = 0; i < n; i++) {
			if (options[i] == (w ? JIT_ERROR_LOG : JIT_INFO_LOG) && l->cap[w] && values[i]) ((char *)values[i])[0] = 0;
		}
	}
	*out = (uintptr_t)l;
	return OK;
}
static int fm_cuLinkCreate(unsigned n, int *options, void **values, uintptr_t *out) { return link_create(n, options, values, out); }
static int fm_cuLinkAddData(uintptr_t h, int type, void *data, size_t size, const char *name, unsigned n, int *options, void **values) {
	NEED_CTX();
	if (!data || !size || (n && (!options || !values))) return INVALID_VALUE;
	LOCK();
	linkst *l = find(h, K_LINK);
	int r = l ? OK : INVALID_HANDLE;
	if (r == OK) {
		link_thread(l);
		sink = checksum(data, size); // read during the call only
		if (type == 1 && strnlen(data, size) == size) r = INVALID_VALUE; // PTX must end in a NUL
	}
	if (r == OK) {
		l->inputs++;
		char msg[128];
		snprintf(msg, sizeof msg, "fakemem: added %s (%zu bytes)\n", name ? name : "input", size);
		if (link_values_ok(l)) link_log(l, 0, msg);
		char *text = strndup(data, size);
		kdef k;
		if (image_find(text, "", &k) >= 0) {
			free(l->cubin);
			l->cubin = text;
		} else {
			free(text);
		}
	}
	UNLOCK();
	return r;
}
static int fm_cuLinkComplete(uintptr_t h, void **cubin, size_t *size) {
	NEED_CTX();
	if (!cubin) return INVALID_VALUE;
	LOCK();
	linkst *l = find(h, K_LINK);
	if (l) {
		link_thread(l);
		if (link_values_ok(l)) {
			char msg[64];
			snprintf(msg, sizeof msg, "fakemem: linked %d inputs\n", l->inputs);
			link_log(l, 0, msg);
			link_log(l, 1, "");
			union { void *p; float f; } wall = {0};
			wall.f = 1.5f;
			link_set(l, JIT_WALL_TIME, wall.p);
		}
		if (!l->cubin) l->cubin = strdup("fakemem-image\n");
		*cubin = l->cubin;
		if (size) *size = strlen(l->cubin) + 1;
	}
	UNLOCK();
	return l ? OK : INVALID_HANDLE;
}
static int fm_cuLinkDestroy(uintptr_t h) {
	NEED_INIT();
	linkst *l = take(h, K_LINK);
	if (!l) return INVALID_HANDLE;
	link_thread(l);
	free(l->options);
	free(l->expect);
	free(l->cubin);
	LOCK();
	if (!link_spare) {
		link_spare = l;
		l = NULL;
	}
	UNLOCK();
	free(l);
	if (__atomic_load_n(&fakemem_link_destroy_hold, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&fakemem_link_destroy_waiting, 1, __ATOMIC_SEQ_CST);
		for (int i = 0; i < 60000 && __atomic_load_n(&fakemem_link_destroy_hold, __ATOMIC_SEQ_CST); i++) usleep(1000);
		__atomic_store_n(&fakemem_link_destroy_waiting, 0, __ATOMIC_SEQ_CST);
	}
	return OK;
}

// ---- Texture references.

typedef struct { obj o; float border[4]; } texref;
static int fm_cuTexRefCreate(uintptr_t *pt) {
	NEED_CTX();
	if (!pt) return INVALID_VALUE;
	texref *t = calloc(1, sizeof *t);
	add(&t->o, K_TEX);
	*pt = (uintptr_t)t;
	return OK;
}
static int fm_cuTexRefDestroy(uintptr_t h) {
	NEED_INIT();
	texref *t = take(h, K_TEX);
	free(t);
	return t ? OK : INVALID_HANDLE;
}
static int fm_cuTexRefSetBorderColor(uintptr_t h, const float *c) {
	NEED_INIT();
	if (!c) return INVALID_VALUE;
	LOCK();
	texref *t = find(h, K_TEX);
	if (t) memcpy(t->border, c, sizeof t->border); // four floats
	UNLOCK();
	return t ? OK : INVALID_HANDLE;
}
static int fm_cuTexRefGetBorderColor(float *c, uintptr_t h) {
	NEED_INIT();
	if (!c) return INVALID_VALUE;
	LOCK();
	texref *t = find(h, K_TEX);
	if (t) memcpy(c, t->border, sizeof t->border); // four floats
	UNLOCK();
	return t ? OK : INVALID_HANDLE;
}

// ---- Occupancy: the callback is called during the call, on this thread.

static int fm_cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGrid, int *block, uintptr_t f, size_t (*b2d)(int),
		size_t dyn, int limit, unsigned flags) {
	(void)flags;
	NEED_INIT();
	if (!minGrid || !block) return INVALID_VALUE;
	LOCK();
	kdef *k = kdef_of(f);
	UNLOCK();
	if (!k) return INVALID_HANDLE;
	int top = limit > 0 && limit < 1024 ? limit / 32 * 32 : 1024, best = 0;
	for (int bs = top; bs >= 32; bs -= 32) {
		size_t smem = b2d ? b2d(bs) : dyn;
		if (smem <= 48 * 1024) {
			best = bs;
			break;
		}
	}
	*block = best;
	*minGrid = best ? 2 * 2048 / best : 0;
	return OK;
}

// ---- Registered callbacks.

static int fm_cuLogsRegisterCallback(void (*fn)(void *, int, char *, size_t), void *ud, uintptr_t *out) {
	if (!fn || !out) return INVALID_VALUE;
	logcb *c = calloc(1, sizeof *c);
	c->fn = fn, c->ud = ud;
	add(&c->o, K_LOGCB);
	*out = (uintptr_t)c;
	return OK;
}
static int fm_cuLogsUnregisterCallback(uintptr_t h) {
	logcb *c = take(h, K_LOGCB);
	free(c);
	return c ? OK : INVALID_VALUE;
}
static int fm_cuDeviceRegisterAsyncNotification(int dev, void (*fn)(fm_async_info *, void *, void *), void *ud, uintptr_t *out) {
	NEED_INIT();
	if (!fn || !out) return INVALID_VALUE;
	if (dev != 0) return INVALID_DEVICE;
	asynccb *c = calloc(1, sizeof *c);
	c->dev = dev, c->fn = fn, c->ud = ud;
	add(&c->o, K_ASYNCCB);
	*out = (uintptr_t)c;
	return OK;
}
static int fm_cuDeviceUnregisterAsyncNotification(int dev, uintptr_t h) {
	NEED_INIT();
	if (dev != 0) return INVALID_DEVICE;
	asynccb *c = take(h, K_ASYNCCB);
	free(c);
	return c ? OK : INVALID_VALUE;
}

// ---- The entry points, by (name, ABI version), as cudaTypedefs.h types them.

static const struct { const char *name; int version; void *fn; } entries[] = {
	{"cuInit", 2000, fm_cuInit},
	{"cuDeviceGet", 2000, fm_cuDeviceGet},
	{"cuDeviceGetCount", 2000, fm_cuDeviceGetCount},
	{"cuDevicePrimaryCtxRetain", 7000, fm_cuDevicePrimaryCtxRetain},
	{"cuDevicePrimaryCtxRelease", 11000, fm_cuDevicePrimaryCtxRelease},
	{"cuCtxCreate", 3020, fm_cuCtxCreate_v2},
	{"cuCtxCreate", 11040, fm_cuCtxCreate_v3},
	{"cuCtxCreate", 12050, fm_cuCtxCreate_v4},
	{"cuCtxDestroy", 4000, fm_cuCtxDestroy},
	{"cuCtxGetCurrent", 4000, fm_cuCtxGetCurrent},
	{"cuCtxSetCurrent", 4000, fm_cuCtxSetCurrent},
	{"cuCtxSynchronize", 2000, fm_cuCtxSynchronize},
	{"cuStreamCreate", 2000, fm_cuStreamCreate},
	{"cuStreamCreateWithPriority", 5050, fm_cuStreamCreateWithPriority},
	{"cuStreamDestroy", 4000, fm_cuStreamDestroy},
	{"cuStreamSynchronize", 2000, fm_cuStreamSynchronize},
	{"cuStreamQuery", 2000, fm_cuStreamQuery},
	{"cuStreamBeginCapture", 10000, fm_cuStreamBeginCapture},
	{"cuStreamBeginCapture", 10010, fm_cuStreamBeginCapture_v2},
	{"cuStreamEndCapture", 10000, fm_cuStreamEndCapture},
	{"cuStreamIsCapturing", 10000, fm_cuStreamIsCapturing},
	{"cuThreadExchangeStreamCaptureMode", 10010, fm_cuThreadExchangeStreamCaptureMode},
	{"cuStreamGetCaptureInfo", 10010, fm_cuStreamGetCaptureInfo},
	{"cuStreamGetCaptureInfo", 11030, fm_cuStreamGetCaptureInfo_v2},
	{"cuStreamGetCaptureInfo", 12030, fm_cuStreamGetCaptureInfo_v3},
	{"cuStreamAddCallback", 5000, fm_cuStreamAddCallback},
	{"cuLaunchHostFunc", 10000, fm_cuLaunchHostFunc},
	{"cuGraphCreate", 10000, fm_cuGraphCreate},
	{"cuGraphDestroy", 10000, fm_cuGraphDestroy},
	{"cuGraphAddHostNode", 10000, fm_cuGraphAddHostNode},
	{"cuGraphHostNodeGetParams", 10000, fm_cuGraphHostNodeGetParams},
	{"cuGraphHostNodeSetParams", 10000, fm_cuGraphHostNodeSetParams},
	{"cuGraphAddMemcpyNode", 10000, fm_cuGraphAddMemcpyNode},
	{"cuGraphAddNode", 12020, fm_cuGraphAddNode},
	{"cuGraphAddNode", 12030, fm_cuGraphAddNode_v2},
	{"cuGraphGetNodes", 10000, fm_cuGraphGetNodes},
	{"cuGraphNodeGetType", 10000, fm_cuGraphNodeGetType},
	{"cuGraphInstantiate", 10000, fm_cuGraphInstantiate},
	{"cuGraphInstantiate", 11000, fm_cuGraphInstantiate},
	{"cuGraphInstantiateWithFlags", 11040, fm_cuGraphInstantiateWithFlags},
	{"cuGraphLaunch", 10000, fm_cuGraphLaunch},
	{"cuGraphExecDestroy", 10000, fm_cuGraphExecDestroy},
	{"cuGraphExecHostNodeSetParams", 10020, fm_cuGraphExecHostNodeSetParams},
	{"cuUserObjectCreate", 11030, fm_cuUserObjectCreate},
	{"cuUserObjectRetain", 11030, fm_cuUserObjectRetain},
	{"cuUserObjectRelease", 11030, fm_cuUserObjectRelease},
	{"cuGraphRetainUserObject", 11030, fm_cuGraphRetainUserObject},
	{"cuGraphReleaseUserObject", 11030, fm_cuGraphReleaseUserObject},
	{"cuMemAlloc", 3020, fm_cuMemAlloc},
	{"cuMemFree", 3020, fm_cuMemFree},
	{"cuMemcpyHtoD", 3020, fm_cuMemcpyHtoD},
	{"cuMemcpyDtoH", 3020, fm_cuMemcpyDtoH},
	{"cuMemcpyHtoDAsync", 3020, fm_cuMemcpyHtoDAsync},
	{"cuMemcpyDtoHAsync", 3020, fm_cuMemcpyDtoHAsync},
	{"cuMemcpy3D", 3020, fm_cuMemcpy3D},
	{"cuMemAllocHost", 3020, fm_cuMemAllocHost},
	{"cuMemHostAlloc", 2020, fm_cuMemHostAlloc},
	{"cuMemFreeHost", 2000, fm_cuMemFreeHost},
	{"cuLinkCreate", 5050, fm_cuLinkCreate},
	{"cuLinkCreate", 6050, fm_cuLinkCreate},
	{"cuLinkAddData", 5050, fm_cuLinkAddData},
	{"cuLinkAddData", 6050, fm_cuLinkAddData},
	{"cuLinkComplete", 5050, fm_cuLinkComplete},
	{"cuLinkDestroy", 5050, fm_cuLinkDestroy},
	{"cuModuleLoadData", 2000, fm_cuModuleLoadData},
	{"cuModuleUnload", 2000, fm_cuModuleUnload},
	{"cuModuleGetFunction", 2000, fm_cuModuleGetFunction},
	{"cuLibraryLoadData", 12000, fm_cuLibraryLoadData},
	{"cuLibraryGetKernel", 12000, fm_cuLibraryGetKernel},
	{"cuLibraryUnload", 12000, fm_cuLibraryUnload},
	{"cuKernelGetFunction", 12000, fm_cuKernelGetFunction},
	{"cuFuncGetParamInfo", 12040, fm_cuFuncGetParamInfo},
	{"cuKernelGetParamInfo", 12040, fm_cuKernelGetParamInfo},
	{"cuLaunchKernel", 4000, fm_cuLaunchKernel},
	{"cuTexRefCreate", 2000, fm_cuTexRefCreate},
	{"cuTexRefDestroy", 2000, fm_cuTexRefDestroy},
	{"cuTexRefSetBorderColor", 8000, fm_cuTexRefSetBorderColor},
	{"cuTexRefGetBorderColor", 8000, fm_cuTexRefGetBorderColor},
	{"cuOccupancyMaxPotentialBlockSizeWithFlags", 7000, fm_cuOccupancyMaxPotentialBlockSizeWithFlags},
	{"cuLogsRegisterCallback", 12090, fm_cuLogsRegisterCallback},
	{"cuLogsUnregisterCallback", 12090, fm_cuLogsUnregisterCallback},
	{"cuDeviceRegisterAsyncNotification", 12040, fm_cuDeviceRegisterAsyncNotification},
	{"cuDeviceUnregisterAsyncNotification", 12040, fm_cuDeviceUnregisterAsyncNotification},
};

static int driver_version(void) {
	const char *v = getenv("FAKEMEM_DRIVER_VERSION");
	return v && *v ? atoi(v) : 13000;
}

// pick is the newest entry point of name at or below version: status 0,
// 1 (no such name) or 2 (none old enough), as CUdriverProcAddressQueryResult.
static void *pick(const char *name, int version, int *status) {
	void *best = NULL;
	int bv = -1, named = 0;
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		if (strcmp(entries[i].name, name) != 0) continue;
		named = 1;
		if (entries[i].version <= version && entries[i].version > bv) bv = entries[i].version, best = entries[i].fn;
	}
	*status = best ? 0 : named ? 2 : 1;
	return best;
}

int cuDriverGetVersion(int *v) {
	if (!v) return INVALID_VALUE;
	*v = driver_version();
	return OK;
}
int cuGetProcAddress(const char *name, void **fn, int version, unsigned long long flags) {
	(void)flags;
	if (!name || !fn) return INVALID_VALUE;
	int status;
	*fn = pick(name, version, &status);
	return *fn ? OK : NOT_FOUND;
}
int cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags, int *status) {
	(void)flags;
	if (!name || !fn) return INVALID_VALUE;
	int st;
	*fn = pick(name, version, &st);
	if (status) *status = st;
	return *fn ? OK : NOT_FOUND;
}

#endif // FAKEMEM_LAYOUT_CHECK
