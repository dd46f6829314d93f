//go:build cgo

package driver

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

extern void cudagenHostFn(uintptr_t);
extern void cudagenStreamCallback(uintptr_t, int, uintptr_t);
extern size_t cudagenB2D(int);

static void cg_host_tramp(void *ud) { cudagenHostFn((uintptr_t)ud); }
static void cg_stream_tramp(void *s, int status, void *ud) { cudagenStreamCallback((uintptr_t)s, status, (uintptr_t)ud); }
static size_t cg_b2d_tramp(int blockSize) { return cudagenB2D(blockSize); }

static void *cg_host_tramp_ptr(void) { return (void *)cg_host_tramp; }
static void *cg_stream_tramp_ptr(void) { return (void *)cg_stream_tramp; }
static void *cg_b2d_tramp_ptr(void) { return (void *)cg_b2d_tramp; }
// cg_ptr makes a handle the userData pointer: in C, so that Go converts
// no integer to a pointer.
static void *cg_ptr(uintptr_t v) { return (void *)v; }

#include "cgqueue.h"

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
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Callbacks from Go. Each C callback type can be given a Go func: the
// func travels to the driver as a runtime/cgo.Handle in the userData
// pointer, and a C function of the type's signature calls it back. The
// func runs on a thread of the driver's, where it must not call CUDA (the
// driver's rule for callbacks), and should return quickly: the stream's
// later work waits for it. A handle keeps the func and what it captures
// alive until it is released.

// goCallback is what a handle holds.
type goCallback struct {
	host   func()
	stream func(Stream, Result)
	once   bool // released after its one call
	gone   atomic.Bool
}

func (c *goCallback) done(h cgo.Handle) {
	if c.once {
		c.release(h)
	}
}

// release deletes the handle once, whichever of the callback and a
// failed call comes first.
func (c *goCallback) release(h cgo.Handle) {
	if c.gone.CompareAndSwap(false, true) {
		h.Delete()
	}
}

// NewHostFn returns the C host function and userData that make the driver
// call f, for a CUhostFn parameter or struct field (HostNodeParams.Fn and
// .UserData, UserObjectCreate's destroy). Call release once the driver
// will not call it again (after the graph that holds the node is
// destroyed, say); until then f is kept alive. LaunchHostFuncGo and
// UserObjectCreateGo release their handles themselves.
func NewHostFn(f func()) (fn HostFn, userData unsafe.Pointer, release func()) {
	h := cgo.NewHandle(&goCallback{host: f})
	return HostFn(C.cg_host_tramp_ptr()), C.cg_ptr(C.uintptr_t(h)), h.Delete
}

// LaunchHostFuncGo queues f on hStream, as cuLaunchHostFunc: f runs once
// the work queued before it is done, and the work after it waits for f.
// The handle that keeps f alive is released after f has run (or at once
// if the launch fails); a stream whose context is destroyed before f runs
// never releases it.
func LaunchHostFuncGo(hStream Stream, f func()) error { return LaunchHostFuncGoCtx(0, hStream, f) }

// LaunchHostFuncGoCtx is LaunchHostFuncGo making ctx current first.
func LaunchHostFuncGoCtx(ctx Context, hStream Stream, f func()) error {
	c := &goCallback{host: f, once: true}
	h := cgo.NewHandle(c)
	err := LaunchHostFuncCtx(ctx, hStream, HostFn(C.cg_host_tramp_ptr()), C.cg_ptr(C.uintptr_t(h)))
	if err != nil {
		c.release(h)
	}
	return err
}

// StreamAddCallbackGo adds f to hStream, as cuStreamAddCallback: f runs
// once the work queued before it is done, with the stream and the status
// of that work. Its handle is released after f has run (or at once if the
// call fails).
func StreamAddCallbackGo(hStream Stream, f func(Stream, Result), flags uint32) error {
	return StreamAddCallbackGoCtx(0, hStream, f, flags)
}

// StreamAddCallbackGoCtx is StreamAddCallbackGo making ctx current first.
func StreamAddCallbackGoCtx(ctx Context, hStream Stream, f func(Stream, Result), flags uint32) error {
	c := &goCallback{stream: f, once: true}
	h := cgo.NewHandle(c)
	err := StreamAddCallbackCtx(ctx, hStream, StreamCallback(C.cg_stream_tramp_ptr()), C.cg_ptr(C.uintptr_t(h)), flags)
	if err != nil {
		c.release(h)
	}
	return err
}

// UserObjectCreateGo creates a user object whose destructor is f, as
// cuUserObjectCreate: the driver calls f once, when the last reference is
// released, and its handle is released then (or at once if the call
// fails).
func UserObjectCreateGo(destroy func(), initialRefcount, flags uint32) (UserObject, error) {
	return UserObjectCreateGoCtx(0, destroy, initialRefcount, flags)
}

// UserObjectCreateGoCtx is UserObjectCreateGo making ctx current first.
func UserObjectCreateGoCtx(ctx Context, destroy func(), initialRefcount, flags uint32) (UserObject, error) {
	c := &goCallback{host: destroy, once: true}
	h := cgo.NewHandle(c)
	o, err := UserObjectCreateCtx(ctx, C.cg_ptr(C.uintptr_t(h)), HostFn(C.cg_host_tramp_ptr()), initialRefcount, flags)
	if err != nil {
		c.release(h)
	}
	return o, err
}

// b2dMu serialises the occupancy calculations that call Go: the driver
// calls CUoccupancyB2DSize during the call, with no userData, so the func
// travels in b2dFunc.
var (
	b2dMu   sync.Mutex
	b2dFunc func(blockSize int32) uint64
)

// OccupancyMaxPotentialBlockSizeGo is cuOccupancyMaxPotentialBlockSizeWithFlags
// with the dynamic shared memory per block size given by a Go func, which
// the driver calls during the call (on the calling thread). It returns the
// minimum grid size for full occupancy and the block size. Such calls are
// serialised.
func OccupancyMaxPotentialBlockSizeGo(f Function, dynamicSMem func(blockSize int32) uint64, blockSizeLimit int32, flags uint32) (minGridSize, blockSize int32, err error) {
	return OccupancyMaxPotentialBlockSizeGoCtx(0, f, dynamicSMem, blockSizeLimit, flags)
}

// OccupancyMaxPotentialBlockSizeGoCtx is OccupancyMaxPotentialBlockSizeGo
// making ctx current first.
func OccupancyMaxPotentialBlockSizeGoCtx(ctx Context, f Function, dynamicSMem func(blockSize int32) uint64, blockSizeLimit int32, flags uint32) (minGridSize, blockSize int32, err error) {
	b2dMu.Lock()
	defer b2dMu.Unlock()
	b2dFunc = dynamicSMem
	defer func() { b2dFunc = nil }()
	return OccupancyMaxPotentialBlockSizeWithFlagsCtx(ctx, f, OccupancyB2DSize(C.cg_b2d_tramp_ptr()), 0, blockSizeLimit, flags)
}

// A registered callback (cuDeviceRegisterAsyncNotification,
// cuLogsRegisterCallback) may be called on any thread, inside any driver
// call, also one the generated layer marks nocallback, which must not call
// into Go. So its C trampoline only copies the message into a C queue
// (cgqueue.h), and a goroutine of the registration calls the Go func with
// each message, in order.
type cQueue struct {
	q    *C.cg_queue
	done chan struct{}
}

// startQueue starts the goroutine that hands each message to deliver.
func startQueue(deliver func(a int32, h uintptr, data []byte)) *cQueue {
	q := &cQueue{q: C.cg_queue_new(), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for {
			m := C.cg_queue_get(q.q)
			if m == nil {
				return
			}
			data := C.GoBytes(C.cg_msg_data(m), C.int(C.cg_msg_n(m)))
			a, h := int32(C.cg_msg_a(m)), uintptr(C.cg_msg_h(m))
			C.free(unsafe.Pointer(m))
			deliver(a, h, data)
		}
	}()
	return q
}

// userData is the queue, the trampoline's userData (C memory).
func (q *cQueue) userData() unsafe.Pointer { return unsafe.Pointer(q.q) }

// stop closes the queue, waits until every message in it has been
// delivered, and frees it. The driver must no longer call the trampoline.
func (q *cQueue) stop() {
	C.cg_queue_close(q.q)
	<-q.done
	C.cg_queue_free(q.q)
}
