//go:build cgo

package driver

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

extern void cudagenHostFn(uintptr_t);
extern void cudagenStreamCallback(uintptr_t, int, uintptr_t);
extern size_t cudagenB2D(int);
extern int cg_make_current(uintptr_t ctx);

static void cg_host_tramp(void *ud) { cudagenHostFn((uintptr_t)ud); }
static void cg_stream_tramp(void *s, int status, void *ud) { cudagenStreamCallback((uintptr_t)s, status, (uintptr_t)ud); }
static size_t cg_b2d_tramp(int blockSize) { return cudagenB2D(blockSize); }
#include "cgqueue.h"

// A user object's destructor may run inside any driver call, even one
// marked nocallback (the driver runs it on the calling thread inside
// cuGraphDestroy): it only queues its handle, and a goroutine of the
// package (dtorQueue) releases the handle or calls the Go func. kind 0:
// release (the objects that tie a handle to a graph); 1: call, then
// release (UserObjectCreateGo's).
static cg_queue *cg_dtors;
static void cg_set_dtors(cg_queue *q) { __atomic_store_n(&cg_dtors, q, __ATOMIC_RELEASE); }
static void cg_release_tramp(void *ud) { cg_queue_put(__atomic_load_n(&cg_dtors, __ATOMIC_ACQUIRE), 0, (uintptr_t)ud, NULL, 0); }
static void cg_dtor_tramp(void *ud) { cg_queue_put(__atomic_load_n(&cg_dtors, __ATOMIC_ACQUIRE), 1, (uintptr_t)ud, NULL, 0); }

static void *cg_host_tramp_ptr(void) { return (void *)cg_host_tramp; }
static void *cg_stream_tramp_ptr(void) { return (void *)cg_stream_tramp; }
static void *cg_b2d_tramp_ptr(void) { return (void *)cg_b2d_tramp; }

// The entry points the Go forms call, each at an ABI version that every
// driver from 11.3 has, through these functions: fn is the entry point (0:
// it could not be resolved, and -1 is returned), ctx the context to make
// current (0: as it is). Handles travel as integers, and a handle's value
// is the userData.
#define CG_ENTER(ctx, fn) do { \
	if (!(fn)) return -1; \
	if (ctx) { int r_ = cg_make_current(ctx); if (r_) return r_; } \
} while (0)

typedef struct { void *fn; void *userData; } cg_host_params; // CUDA_HOST_NODE_PARAMS
typedef struct { int r; int capturing; uintptr_t graph; } cg_launch_result;
typedef struct { int r; uintptr_t h; } cg_handle_result;

// cg_launch_host_go asks cuStreamGetCaptureInfo (the 11.3 form) whether
// stream is capturing. If it is, it returns the graph being captured and
// launches nothing; otherwise (or where the question fails: the launch
// then fails the same way) it launches the host trampoline with h.
static cg_launch_result cg_launch_host_go(uintptr_t ctx, uintptr_t info, uintptr_t launch, uintptr_t stream, uintptr_t h) {
	cg_launch_result res = {0, 0, 0};
	if (!launch) { res.r = -1; return res; }
	if (ctx && (res.r = cg_make_current(ctx)) != 0) return res;
	if (info) {
		int status = 0;
		unsigned long long id = 0;
		void *g = NULL;
		const void *deps = NULL;
		size_t n = 0;
		int r = ((int (*)(void *, int *, unsigned long long *, void **, const void **, size_t *))info)((void *)stream, &status, &id, &g, &deps, &n);
		if (r == 0 && status == 1 && g) { // CU_STREAM_CAPTURE_STATUS_ACTIVE
			res.capturing = 1;
			res.graph = (uintptr_t)g;
			return res;
		}
	}
	res.r = ((int (*)(void *, void (*)(void *), void *))launch)((void *)stream, cg_host_tramp, (void *)h);
	return res;
}
static int cg_launch_host(uintptr_t ctx, uintptr_t fn, uintptr_t stream, uintptr_t h) {
	CG_ENTER(ctx, fn);
	return ((int (*)(void *, void (*)(void *), void *))fn)((void *)stream, cg_host_tramp, (void *)h);
}
static int cg_add_callback(uintptr_t ctx, uintptr_t fn, uintptr_t stream, uintptr_t h, unsigned flags) {
	CG_ENTER(ctx, fn);
	return ((int (*)(void *, void (*)(void *, int, void *), void *, unsigned))fn)((void *)stream, cg_stream_tramp, (void *)h, flags);
}
// cg_user_object_create creates a user object whose destructor is the
// host trampoline, with h.
static cg_handle_result cg_user_object_create(uintptr_t ctx, uintptr_t fn, uintptr_t h, unsigned rc, unsigned flags) {
	cg_handle_result res = {0, 0};
	if (!fn) { res.r = -1; return res; }
	if (ctx && (res.r = cg_make_current(ctx)) != 0) return res;
	void *obj = NULL;
	res.r = ((int (*)(void **, void *, void (*)(void *), unsigned, unsigned))fn)(&obj, (void *)h, cg_dtor_tramp, rc, flags);
	res.h = (uintptr_t)obj;
	return res;
}

// The user objects that tie a handle to a graph are made, moved and
// released with this thread's capture mode relaxed (exch, when it
// resolves: cuThreadExchangeStreamCaptureMode), which allows such calls
// while a capture in the global mode is under way; then the mode is
// restored.
typedef struct { uintptr_t exch, create, retain, release, graph_release; } cg_tie_fns;
static int cg_relax(uintptr_t exch, int *mode) {
	*mode = 2; // CU_STREAM_CAPTURE_MODE_RELAXED
	return exch && ((int (*)(int *))exch)(mode) == 0;
}
static void cg_restore(uintptr_t exch, int relaxed, int mode) {
	if (relaxed) ((int (*)(int *))exch)(&mode);
}
// cg_tie creates a user object whose destructor releases h (1 reference,
// CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) and moves the reference to graph
// (CU_GRAPH_USER_OBJECT_MOVE). Should the move fail, it releases the
// object, whose destructor then releases h.
static cg_handle_result cg_tie(uintptr_t ctx, cg_tie_fns f, uintptr_t graph, uintptr_t h) {
	cg_handle_result res = {0, 0};
	if (!f.create || !f.retain || !f.release) { res.r = -1; return res; }
	if (ctx && (res.r = cg_make_current(ctx)) != 0) return res;
	int mode, relaxed = cg_relax(f.exch, &mode);
	void *obj = NULL;
	res.r = ((int (*)(void **, void *, void (*)(void *), unsigned, unsigned))f.create)(&obj, (void *)h, cg_release_tramp, 1, 1);
	if (res.r == 0) {
		res.r = ((int (*)(void *, void *, unsigned, unsigned))f.retain)((void *)graph, obj, 1, 1);
		if (res.r == 0) res.h = (uintptr_t)obj;
		else ((int (*)(void *, unsigned))f.release)(obj, 1);
	}
	cg_restore(f.exch, relaxed, mode);
	return res;
}
// cg_untie releases graph's reference to obj (cg_tie's), whose destructor
// then releases its handle.
static int cg_untie(uintptr_t ctx, cg_tie_fns f, uintptr_t graph, uintptr_t obj) {
	CG_ENTER(ctx, f.graph_release);
	int mode, relaxed = cg_relax(f.exch, &mode);
	int r = ((int (*)(void *, void *, unsigned))f.graph_release)((void *)graph, (void *)obj, 1);
	cg_restore(f.exch, relaxed, mode);
	return r;
}
// The driver copies the parameters and the dependencies during the call.
static cg_handle_result cg_graph_add_host_node(uintptr_t ctx, uintptr_t fn, uintptr_t graph, const uintptr_t *deps, size_t n, uintptr_t h) {
	cg_handle_result res = {0, 0};
	if (!fn) { res.r = -1; return res; }
	if (ctx && (res.r = cg_make_current(ctx)) != 0) return res;
	cg_host_params p = {(void *)cg_host_tramp, (void *)h};
	void *node = NULL;
	res.r = ((int (*)(void **, void *, const uintptr_t *, size_t, const cg_host_params *))fn)(&node, (void *)graph, n ? deps : NULL, n, &p);
	res.h = (uintptr_t)node;
	return res;
}
static int cg_graph_host_node_set_params(uintptr_t ctx, uintptr_t fn, uintptr_t node, uintptr_t h) {
	CG_ENTER(ctx, fn);
	cg_host_params p = {(void *)cg_host_tramp, (void *)h};
	return ((int (*)(void *, const cg_host_params *))fn)((void *)node, &p);
}
static int cg_graph_exec_host_node_set_params(uintptr_t ctx, uintptr_t fn, uintptr_t exec, uintptr_t node, uintptr_t h) {
	CG_ENTER(ctx, fn);
	cg_host_params p = {(void *)cg_host_tramp, (void *)h};
	return ((int (*)(void *, void *, const cg_host_params *))fn)((void *)exec, (void *)node, &p);
}

// cg_queue_get blocks for the next message (the caller frees it); NULL
// once the queue is closed and empty.
static cg_msg *cg_queue_get(cg_queue *q) {
	pthread_mutex_lock(&q->mu);
	while (!q->head && !q->closed) pthread_cond_wait(&q->cv, &q->mu);
	cg_msg *m = q->head;
	if (m) {
		q->head = m->next;
		if (!q->head) q->tail = NULL;
	}
	pthread_mutex_unlock(&q->mu);
	return m;
}
static void cg_queue_close(cg_queue *q) {
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
static void cg_queue_free(cg_queue *q) {
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}
static int cg_msg_a(cg_msg *m) { return m->a; }
static uintptr_t cg_msg_h(cg_msg *m) { return m->h; }
static void *cg_msg_data(cg_msg *m) { return m->data; }
static size_t cg_msg_n(cg_msg *m) { return m->n; }
*/
import "C"

import (
	"bytes"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Callbacks from Go. Each C callback type can be given a Go func: the
// func travels to the driver as a runtime/cgo.Handle, whose value is the
// userData, and a C function of the type's signature calls it back. The
// func runs on a thread of the driver's, where it must not call CUDA (the
// driver's rule for callbacks), and should return quickly: the stream's
// later work waits for it. A handle keeps the func and what it captures
// alive until it is released: after the func's one call, or, for a func
// the driver may call again (a host node of a graph, a host function
// launched into a stream capture), when the graph and every exec made
// from it are destroyed, through a user object whose destructor releases
// it. What a panic of the func does: callback_panic.go.

// goCallback is what a handle holds.
type goCallback struct {
	form   string // the Go form that took the func, for CallbackPanic
	host   func()
	stream func(Stream, Result)
	once   atomic.Bool // released after its one call
	gone   atomic.Bool
}

// newCallback makes the handle of c.
func newCallback(c *goCallback, once bool) cgo.Handle {
	c.once.Store(once)
	liveCallbacks.Add(1)
	return cgo.NewHandle(c)
}

func (c *goCallback) done(h cgo.Handle) {
	if c.once.Load() {
		c.release(h)
	}
}

// release deletes the handle once, whichever of its releases comes first.
func (c *goCallback) release(h cgo.Handle) {
	if c.gone.CompareAndSwap(false, true) {
		h.Delete()
		liveCallbacks.Add(-1)
	}
}

// callbackOf is the func behind h, or nil if h was released.
func callbackOf(h cgo.Handle) (c *goCallback) {
	defer func() {
		if recover() != nil {
			c = nil
		}
	}()
	c, _ = h.Value().(*goCallback)
	return c
}

// releasedCall is the Value of the CallbackPanic of a call through a
// released handle.
type releasedCall struct{ what string }

func (e releasedCall) Error() string {
	return "cuda: the driver called a Go " + e.what + " whose handle was already released: a release func (NewHostFn's, GraphExecHostNodeSetParamsGo's) " +
		"was called while the driver could still call the func; release it only after the graph exec that holds it is destroyed and its launches have finished"
}

// liveCallback is h's callback, or nil once it was released: then the call
// (of a what) is reported as a CallbackPanic.
func liveCallback(h cgo.Handle, what string) *goCallback {
	c := callbackOf(h)
	if c == nil {
		reportPanic(&CallbackPanic{Callback: "a released " + what, Value: releasedCall{what}, Stack: debug.Stack()})
	}
	return c
}

func callHost(h cgo.Handle) {
	c := liveCallback(h, "host function")
	if c == nil {
		return
	}
	defer c.done(h)
	defer recoverCallback(c.form)
	c.host()
}

func callStream(h cgo.Handle, s Stream, status Result) {
	c := liveCallback(h, "stream callback")
	if c == nil {
		return
	}
	defer c.done(h)
	defer recoverCallback(c.form)
	c.stream(s, status)
}

// releaseFromDriver is the releasing user objects' destructor.
func releaseFromDriver(h cgo.Handle) {
	if c := callbackOf(h); c != nil {
		c.release(h)
	}
}

// dtorOnce starts the goroutine that runs user objects' destructors:
// the C destructors queue their handles (cg_release_tramp, cg_dtor_tramp),
// since the driver may run them inside a call marked nocallback. It
// lives as long as the process.
var dtorOnce sync.Once

func startDtors() {
	dtorOnce.Do(func() {
		q := startQueue("a user object's destructor", func(kind int32, h uintptr, _ []byte) {
			if kind == 1 {
				callHost(cgo.Handle(h))
				return
			}
			releaseFromDriver(cgo.Handle(h))
		})
		C.cg_set_dtors(q.q)
	})
}

// recoverCallback, deferred by a trampoline, recovers a panic of the func
// given to form and hands it to the handler (callback_panic.go's rule).
func recoverCallback(form string) {
	if v := recover(); v != nil {
		if p, ok := v.(*CallbackPanic); ok {
			panic(p) // already reported, and unhandled: a crash
		}
		reportPanic(&CallbackPanic{Callback: form, Value: v, Stack: debug.Stack()})
	}
}

// reportPanic calls the handler, or crashes without one: a panic from a
// deferred function that recovered keeps the first panic's frames in the
// trace.
func reportPanic(p *CallbackPanic) {
	if h := panicHandler.Load(); h != nil {
		(*h)(p)
		return
	}
	panic(p)
}

// nilFuncError is the error of a Go form of a callback given a nil func,
// returned before the driver is called. It matches ErrorInvalidValue
// (errors.Is), which the driver returns for a NULL callback.
type nilFuncError struct {
	fn    string // the Go form: "LaunchHostFuncGo"
	param string // the func's parameter: "f"
}

func (e *nilFuncError) Error() string {
	return "cuda: " + e.fn + ": " + e.param + " is nil, and the driver would call it; pass a func (func() {} to do nothing)"
}

// Is reports whether target is ErrorInvalidValue.
func (e *nilFuncError) Is(target error) bool { return target == error(ErrorInvalidValue) }

// The entry points the Go forms call (through the C functions above), at
// ABI versions that every driver from 11.3 and every pinned header has,
// so that the forms do not depend on one pin's signatures:
// cuStreamGetCaptureInfo's Go signature differs in each pin.
var (
	pCaptureInfo       = cbProc("cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_v2", 11030)
	pLaunchHostFunc    = cbProc("cuLaunchHostFunc", "cuLaunchHostFunc", 10000)
	pStreamAddCallback = cbProc("cuStreamAddCallback", "cuStreamAddCallback", 5000)
	pExchangeMode      = cbProc("cuThreadExchangeStreamCaptureMode", "cuThreadExchangeStreamCaptureMode", 10010)
	pUserObjectCreate  = cbProc("cuUserObjectCreate", "cuUserObjectCreate", 11030)
	pUserObjectRelease = cbProc("cuUserObjectRelease", "cuUserObjectRelease", 11030)
	pGraphRetainUO     = cbProc("cuGraphRetainUserObject", "cuGraphRetainUserObject", 11030)
	pGraphReleaseUO    = cbProc("cuGraphReleaseUserObject", "cuGraphReleaseUserObject", 11030)
	pGraphAddHostNode  = cbProc("cuGraphAddHostNode", "cuGraphAddHostNode", 10000)
	pHostNodeSetParams = cbProc("cuGraphHostNodeSetParams", "cuGraphHostNodeSetParams", 10000)
	pExecHostNodeSet   = cbProc("cuGraphExecHostNodeSetParams", "cuGraphExecHostNodeSetParams", 10020)
)

func cbProc(name, symbol string, version int) *proc {
	return &proc{name: name, symbol: symbol, version: version, flags: gpaFlags}
}

// tieFns are cg_tie's entry points; the failed resolution of a required
// one is the error of pUserObjectCreate, pGraphRetainUO or
// pUserObjectRelease (or pGraphReleaseUO for cg_untie).
func tieFns() (C.cg_tie_fns, *proc) {
	f := C.cg_tie_fns{exch: pExchangeMode.fn(), create: pUserObjectCreate.fn(), retain: pGraphRetainUO.fn(),
		release: pUserObjectRelease.fn(), graph_release: pGraphReleaseUO.fn()}
	for _, p := range []*proc{pUserObjectCreate, pGraphRetainUO, pUserObjectRelease, pGraphReleaseUO} {
		if p.ready.Load() == 0 {
			return f, p
		}
	}
	return f, pUserObjectCreate
}

// tieToGraph makes graph keep h: a user object whose destructor releases
// h, its one reference moved to graph. A graph's execs hold the graph's
// user objects, so h is released when graph and every exec made from it
// are destroyed (and their launches have finished), on the driver's
// thread. On error h is released.
func tieToGraph(ctx Context, graph Graph, c *goCallback, h cgo.Handle) (UserObject, error) {
	startDtors()
	f, p := tieFns()
	res := C.cg_tie(C.uintptr_t(ctx), f, C.uintptr_t(graph), C.uintptr_t(h))
	if err := p.done(res.r); err != nil {
		// A destructor that runs releases h too; releasing it here does not wait for it.
		c.release(h)
		return 0, err
	}
	return UserObject(res.h), nil
}

// untie undoes tieToGraph after the call that was to give h to the driver
// failed: nothing else holds h.
func untie(ctx Context, graph Graph, obj UserObject, c *goCallback, h cgo.Handle) {
	f, _ := tieFns()
	C.cg_untie(C.uintptr_t(ctx), f, C.uintptr_t(graph), C.uintptr_t(obj))
	c.release(h)
}

// userDataOf is h as the userData the generated wrappers take for a
// pointer the driver keeps: an integer, never a pointer word.
func userDataOf(h cgo.Handle) uintptr { return uintptr(h) }

// NewHostFn returns the C host function and userData that make the driver
// call f, for a CUhostFn parameter or struct field (HostNodeParams.Fn and
// .UserData, UserObjectCreate's destroy). Call release once the driver
// will not call it again (after the graph exec that holds the node is
// destroyed and its launches have finished, say); until then f is kept
// alive. A call after release crashes the process with a message saying
// so (see CallbackPanic). f must not be nil: NewHostFn panics. The Go
// forms keep and release their handles themselves: LaunchHostFuncGo,
// GraphAddHostNodeGo, GraphHostNodeSetParamsGo, UserObjectCreateGo.
func NewHostFn(f func()) (fn HostFn, userData uintptr, release func()) {
	if f == nil {
		panic(&nilFuncError{"NewHostFn", "f"})
	}
	c := &goCallback{form: "NewHostFn", host: f}
	h := newCallback(c, false)
	return HostFn(C.cg_host_tramp_ptr()), userDataOf(h), func() { c.release(h) }
}

// LaunchHostFuncGo queues f on hStream, as cuLaunchHostFunc: f runs once
// the work queued before it is done, and the work after it waits for f.
// Outside a stream capture, the handle that keeps f alive is released
// after f has run (or at once if the launch fails); a stream whose context
// is destroyed before f runs never releases it. Into a stream being
// captured (cuStreamGetCaptureInfo says so), the launch adds a host node
// to the graph being captured, and f runs at every launch of an exec made
// from it: the graph keeps f, through a user object, until the graph and
// every exec made from it are destroyed and their launches have finished
// (see GraphAddHostNodeGo). A nil f is refused with an error matching
// ErrorInvalidValue.
func LaunchHostFuncGo(hStream Stream, f func()) error { return LaunchHostFuncGoCtx(0, hStream, f) }

// LaunchHostFuncGoCtx is LaunchHostFuncGo making ctx current first.
func LaunchHostFuncGoCtx(ctx Context, hStream Stream, f func()) error {
	if f == nil {
		return &nilFuncError{"LaunchHostFuncGo", "f"}
	}
	c := &goCallback{form: "LaunchHostFuncGo", host: f}
	h := newCallback(c, true)
	res := C.cg_launch_host_go(C.uintptr_t(ctx), pCaptureInfo.fn(), pLaunchHostFunc.fn(), C.uintptr_t(hStream), C.uintptr_t(h))
	if err := pLaunchHostFunc.done(res.r); err != nil {
		c.release(h)
		return err
	}
	if res.capturing == 0 {
		return nil
	}
	// Captured: the driver may call f at every launch of the graph.
	c.once.Store(false)
	graph := Graph(res.graph)
	obj, err := tieToGraph(ctx, graph, c, h)
	if err != nil {
		return err
	}
	if err := pLaunchHostFunc.done(C.cg_launch_host(C.uintptr_t(ctx), pLaunchHostFunc.fn(), C.uintptr_t(hStream), C.uintptr_t(h))); err != nil {
		untie(ctx, graph, obj, c, h)
		return err
	}
	return nil
}

// StreamAddCallbackGo adds f to hStream, as cuStreamAddCallback: f runs
// once the work queued before it is done, with the stream and the status
// of that work. Its handle is released after f has run (or at once if the
// call fails; the driver refuses it in a stream capture). A nil f is
// refused with an error matching ErrorInvalidValue.
func StreamAddCallbackGo(hStream Stream, f func(Stream, Result), flags uint32) error {
	return StreamAddCallbackGoCtx(0, hStream, f, flags)
}

// StreamAddCallbackGoCtx is StreamAddCallbackGo making ctx current first.
func StreamAddCallbackGoCtx(ctx Context, hStream Stream, f func(Stream, Result), flags uint32) error {
	if f == nil {
		return &nilFuncError{"StreamAddCallbackGo", "f"}
	}
	c := &goCallback{form: "StreamAddCallbackGo", stream: f}
	h := newCallback(c, true)
	if err := pStreamAddCallback.done(C.cg_add_callback(C.uintptr_t(ctx), pStreamAddCallback.fn(), C.uintptr_t(hStream), C.uintptr_t(h), C.uint(flags))); err != nil {
		c.release(h)
		return err
	}
	return nil
}

// UserObjectCreateGo creates a user object whose destructor is destroy,
// as cuUserObjectCreate: when the last reference is released the driver
// runs the destructor (on a thread of its own, or inside the releasing
// call: cuGraphDestroy runs it there), which queues destroy; a goroutine
// of the package (started with the first user object, living as long as
// the process) calls it once, and its handle is released then (or at
// once if the call fails). destroy must not call CUDA. A nil destroy is
// refused with an error matching ErrorInvalidValue.
func UserObjectCreateGo(destroy func(), initialRefcount, flags uint32) (UserObject, error) {
	return UserObjectCreateGoCtx(0, destroy, initialRefcount, flags)
}

// UserObjectCreateGoCtx is UserObjectCreateGo making ctx current first.
func UserObjectCreateGoCtx(ctx Context, destroy func(), initialRefcount, flags uint32) (UserObject, error) {
	if destroy == nil {
		return 0, &nilFuncError{"UserObjectCreateGo", "destroy"}
	}
	startDtors()
	c := &goCallback{form: "UserObjectCreateGo", host: destroy}
	h := newCallback(c, true)
	res := C.cg_user_object_create(C.uintptr_t(ctx), pUserObjectCreate.fn(), C.uintptr_t(h), C.uint(initialRefcount), C.uint(flags))
	if err := pUserObjectCreate.done(res.r); err != nil {
		c.release(h)
		return 0, err
	}
	return UserObject(res.h), nil
}

// b2dMu serialises the occupancy calculations that call Go: the driver
// calls CUoccupancyB2DSize during the call, with no userData, so the func
// travels in b2dFunc, and a panic of it in b2dPanic.
var (
	b2dMu    sync.Mutex
	b2dFunc  func(blockSize int32) uint64
	b2dPanic *CallbackPanic
)

// callB2D is the occupancy trampoline: after a panic of the func it
// answers 0 without calling it.
func callB2D(blockSize int32) (n uint64) {
	if b2dPanic != nil || b2dFunc == nil {
		return 0
	}
	defer func() {
		if v := recover(); v != nil {
			b2dPanic = &CallbackPanic{Callback: "OccupancyMaxPotentialBlockSizeGo", Value: v, Stack: debug.Stack()}
			n = 0
		}
	}()
	return b2dFunc(blockSize)
}

// OccupancyMaxPotentialBlockSizeGo is cuOccupancyMaxPotentialBlockSizeWithFlags
// with the dynamic shared memory per block size given by a Go func, which
// the driver calls during the call (on the calling thread). It returns the
// minimum grid size for full occupancy and the block size. Such calls are
// serialised. A nil dynamicSMem is refused with an error matching
// ErrorInvalidValue. Should dynamicSMem panic, the driver gets 0 bytes
// for that block size and every later one, and once the driver has
// returned the panic continues here with a *CallbackPanic holding its
// value and stack.
func OccupancyMaxPotentialBlockSizeGo(f Function, dynamicSMem func(blockSize int32) uint64, blockSizeLimit int32, flags OccupancyFlags) (minGridSize, blockSize int32, err error) {
	return OccupancyMaxPotentialBlockSizeGoCtx(0, f, dynamicSMem, blockSizeLimit, flags)
}

// OccupancyMaxPotentialBlockSizeGoCtx is OccupancyMaxPotentialBlockSizeGo
// making ctx current first.
func OccupancyMaxPotentialBlockSizeGoCtx(ctx Context, f Function, dynamicSMem func(blockSize int32) uint64, blockSizeLimit int32, flags OccupancyFlags) (minGridSize, blockSize int32, err error) {
	if dynamicSMem == nil {
		return 0, 0, &nilFuncError{"OccupancyMaxPotentialBlockSizeGo", "dynamicSMem"}
	}
	b2dMu.Lock()
	defer b2dMu.Unlock()
	b2dFunc, b2dPanic = dynamicSMem, nil
	minGridSize, blockSize, err = OccupancyMaxPotentialBlockSizeWithFlagsCtx(ctx, f, OccupancyB2DSize(C.cg_b2d_tramp_ptr()), 0, blockSizeLimit, flags)
	p := b2dPanic
	b2dFunc, b2dPanic = nil, nil
	if p != nil {
		panic(p)
	}
	return minGridSize, blockSize, err
}

// A registered callback (cuDeviceRegisterAsyncNotification,
// cuLogsRegisterCallback) may be called on any thread, inside any driver
// call, also one the generated layer marks nocallback, which must not call
// into Go. So its C trampoline only copies the message into a C queue
// (cgqueue.h), and a goroutine of the registration calls the Go func with
// each message, in order, until the queue is closed and empty; then it
// frees the queue.
type cQueue struct {
	q    *C.cg_queue
	gid  atomic.Uint64 // the delivering goroutine's id
	done chan struct{} // closed when the goroutine has returned
}

// startQueue starts the goroutine that hands each message to deliver;
// form names the Go form for CallbackPanic.
func startQueue(form string, deliver func(a int32, h uintptr, data []byte)) *cQueue {
	q := &cQueue{q: C.cg_queue_new(), done: make(chan struct{})}
	go q.run(form, deliver)
	return q
}

func (q *cQueue) run(form string, deliver func(a int32, h uintptr, data []byte)) {
	q.gid.Store(goid())
	defer close(q.done)
	defer C.cg_queue_free(q.q)
	for {
		m := C.cg_queue_get(q.q)
		if m == nil {
			return
		}
		data := C.GoBytes(C.cg_msg_data(m), C.int(C.cg_msg_n(m)))
		a, h := int32(C.cg_msg_a(m)), uintptr(C.cg_msg_h(m))
		C.free(unsafe.Pointer(m))
		deliverOne(form, deliver, a, h, data)
	}
}

func deliverOne(form string, deliver func(a int32, h uintptr, data []byte), a int32, h uintptr, data []byte) {
	defer recoverCallback(form)
	deliver(a, h, data)
}

// userData is the queue, the trampoline's userData (C memory).
func (q *cQueue) userData() uintptr { return uintptr(unsafe.Pointer(q.q)) }

// delivering reports whether the caller is the delivering goroutine (a
// func inside its callback, or what it calls).
func (q *cQueue) delivering() bool { return goid() == q.gid.Load() }

// stop closes the queue and waits until every message in it has been
// delivered (the goroutine then frees it). The driver must no longer
// call the trampoline.
func (q *cQueue) stop() {
	C.cg_queue_close(q.q)
	<-q.done
}

// goid is the calling goroutine's id, from the first line of its trace
// ("goroutine 18 [running]:").
func goid() uint64 {
	var buf [32]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// A registration is a registered callback's queue and how to unregister.
type registration struct {
	q      *cQueue
	unreg  func() error // the driver's unregister
	mu     sync.Mutex
	closed bool
}

// unregister unregisters with the driver once, then closes the queue: the
// messages already in it are still delivered. Called from the delivering
// goroutine (inside the Go func), it returns at once, and the goroutine
// ends after the func returns and the queue is empty; called from any
// other, it waits for that. Should the driver's unregister fail, the
// registration stays, and unregister may be called again.
func (r *registration) unregister() error {
	r.mu.Lock()
	if !r.closed {
		if err := r.unreg(); err != nil {
			r.mu.Unlock()
			return err
		}
		r.closed = true
		C.cg_queue_close(r.q.q)
	}
	r.mu.Unlock()
	if !r.q.delivering() {
		<-r.q.done
	}
	return nil
}

// The graph calls of callback_graph.go's forms, with h as the host node's
// userData and the host trampoline as its function.

func cGraphAddHostNode(ctx Context, graph Graph, deps []GraphNode, h cgo.Handle) (GraphNode, error) {
	res := C.cg_graph_add_host_node(C.uintptr_t(ctx), pGraphAddHostNode.fn(), C.uintptr_t(graph),
		(*C.uintptr_t)(unsafe.Pointer(unsafe.SliceData(deps))), C.size_t(len(deps)), C.uintptr_t(h))
	return GraphNode(res.h), pGraphAddHostNode.done(res.r)
}

func cGraphHostNodeSetParams(ctx Context, node GraphNode, h cgo.Handle) error {
	return pHostNodeSetParams.done(C.cg_graph_host_node_set_params(C.uintptr_t(ctx), pHostNodeSetParams.fn(), C.uintptr_t(node), C.uintptr_t(h)))
}

func cGraphExecHostNodeSetParams(ctx Context, exec GraphExec, node GraphNode, h cgo.Handle) error {
	return pExecHostNodeSet.done(C.cg_graph_exec_host_node_set_params(C.uintptr_t(ctx), pExecHostNodeSet.fn(), C.uintptr_t(exec), C.uintptr_t(node), C.uintptr_t(h)))
}
