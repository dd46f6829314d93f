package cuda

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// Lifetime of driver objects
//
// Every object that calls the driver (a Device, an Event, a Stream) holds a
// handle (internal/lifetime, whose package documentation has the design):
// a count of its calls in flight and a closing bit, in one atomic word. The
// hot calls (Record, Query, Sync, Sub, a Wait on complete work, and a
// stream's Wait, Query and Sync, on streams other than the default ones) do
// not count: inside their cgo crossing they hold the word in a hazard slot
// of their thread, without a locked instruction (internal/lifetime). The
// others count themselves in and out (call.go). Close sets the closing bit,
// retires the object without a lock and returns at once; the object is
// destroyed by a flush of its context's retired objects once no call holds
// it, on the package's flusher goroutine or in a later create, never in a
// Close. Nothing waits or spins.
//
// Each context's lifetime.Domain (ctxState.life) counts its live objects:
// every Device and every open event and stream. Closing the last Device
// marks every event and stream of the context closed, and the drop of the
// last live object has the flusher release the context (Release, below). So no call ever runs
// on a released context, and a call in flight (a Sync on pending work, a
// cancelled Wait's driver sleep) delays the release, never Close.
//
// Wrappers of foreign streams and events (AdoptStream, AdoptEvent) have a
// handle of their own too, in their Device's list rather than the
// context's: the Device's Close closes them, and retiring one destroys
// nothing. The default streams share their Device's handle. A context
// adopted with AdoptContext is never released.

// handle is an object's lifetime state.
type handle = lifetime.Handle

// The state word's bits.
const (
	closing  = lifetime.Closing
	noReuse  = lifetime.NoReuse
	finished = lifetime.Finished
)

// Destroy destroys a retired event's, stream's, module's, memory's, graph's
// or executable graph's driver
// object (an adopted wrapper's is its creator's). A module's unload and a
// buffer's free may wait for the context's pending GPU work (the driver's
// free synchronises): they go to the context's slow calls (later), so that
// the flusher goes on with other objects and contexts.
func (p *ctxState) Destroy(h *handle) error {
	switch h.Kind {
	case kindModule:
		m := driver.Module(h.H)
		p.later(func() { _ = driver.ModuleUnloadCtx(p.ctx, m) })
		return nil
	case kindMemory:
		if h.H == 0 { // an empty Buffer's: nothing allocated
			return nil
		}
		ptr := driver.DevicePtr(h.H)
		p.later(func() { _ = driver.MemFreeCtx(p.ctx, ptr) })
		return nil
	case kindIPCMemory: // unmapped in this process; the exporter frees it
		ptr := driver.DevicePtr(h.H)
		p.later(func() { _ = driver.IPCCloseMemHandleCtx(p.ctx, ptr) })
		return nil
	case kindPoolMemory: // back to the pool in the legacy default stream's order, without waiting
		if h.H == 0 {
			return nil
		}
		return driverErr("free device memory to its pool", driver.MemFreeAsyncCtx(p.ctx, driver.DevicePtr(h.H), 0))
	case kindHostMemory: // unregistered and unmapped
		p.destroyHost(h)
		return nil
	case kindSharedPool: // never waits: the driver releases it once its allocations are freed
		return driverErr("destroy shared pool", driver.MemPoolDestroyCtx(p.ctx, driver.MemoryPool(h.H)))
	case kindGraph: // a graph's and an executable graph's destroys never wait for GPU work
		return driverErr("destroy graph", driver.GraphDestroyCtx(p.ctx, driver.Graph(h.H)))
	case kindGraphExec:
		return driverErr("destroy graph exec", driver.GraphExecDestroyCtx(p.ctx, driver.GraphExec(h.H)))
	case lifetime.KindEvent:
		return driverErr("destroy event", driver.EventDestroyCtx(p.ctx, driver.Event(h.H)))
	case lifetime.KindStream:
		return driverErr("destroy stream", driver.StreamDestroyCtx(p.ctx, driver.Stream(h.H)))
	}
	return nil
}

// Complete reports whether a retired recorded event is complete, for its
// driver handle's reuse (recycle.go). A failed query answers no.
func (p *ctxState) Complete(h *handle) bool {
	return p.completion(driver.Event(h.H)) == nil
}

// Release ends a context whose last object was dropped: its idle waiters,
// its kept event handles and its module go, and a retained primary context
// is released, in the background (an adopted context is left to its
// creator); then Device.Done's channel is closed. It runs on the package's
// flusher goroutine (internal/lifetime), never on a Close's.
func (p *ctxState) Release(kept []uintptr) {
	// The idle waiters' events are complete and their streams idle: their
	// destroys do not wait.
	for _, w := range p.waits.take() {
		w.destroy()
	}
	// Its module goes with a released context. In an adopted context it
	// stays loaded until the creator destroys the context: unloading could
	// wait for the context's work, and Close never blocks.
	spinKernels.Delete(p)
	// The staging memory of its asynchronous copies, after their transfers.
	p.later(p.freeAllStaging)
	if p.foreign {
		// The kept event handles are complete: their destroy does not
		// wait. After the slow calls queued before (the frees and unloads
		// of its buffers and modules), Done is closed: the creator may
		// then destroy the context.
		p.later(func() {
			p.destroyKept(kept)
			close(p.done)
		})
		return
	}
	// The driver's release of the last retain destroys the context, which
	// first waits for the context's pending work, spinning (seen with
	// driver 580: 2s under a 2s kernel, and forever for a stream waiting on
	// an IPC event whose exporter died). So it is the last of the context's
	// slow calls, after its frees and unloads, on their goroutine: the
	// flusher goes on with the other contexts. Its error has no caller to
	// go to; the context is gone either way.
	p.later(func() {
		p.destroyKept(kept)
		_ = driver.DevicePrimaryCtxRelease(p.dev)
		close(p.done)
	})
}

// slowCalls are a context's driver calls that may wait for its pending GPU
// work (a buffer's free, a module's unload, the context's release), made
// in the order queued on a goroutine of their own (runSlow) while any is
// queued. Their errors have no caller to go to.
type slowCalls struct {
	mu      sync.Mutex
	queue   []func()
	running bool
}

// later queues f among p's slow calls, starting their goroutine if none
// runs. It never blocks on a driver call.
func (p *ctxState) later(f func()) {
	w := &p.slow
	w.mu.Lock()
	w.queue = append(w.queue, f)
	start := !w.running
	w.running = true
	w.mu.Unlock()
	if start {
		go p.runSlow()
	}
}

// runSlow makes p's slow calls in order, and ends once none is queued.
func (p *ctxState) runSlow() {
	w := &p.slow
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		f := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		w.mu.Unlock()
		f()
	}
}

func (p *ctxState) destroyKept(kept []uintptr) {
	for _, ev := range kept {
		_ = driver.EventDestroyCtx(p.ctx, driver.Event(ev))
	}
}

var leaked atomic.Int64

// Leaked is the number of events, streams, modules and buffers destroyed by
// the garbage collector because they were never closed (nor their device). A growing
// count is a leak to fix with Close.
func Leaked() int64 { return leaked.Load() }

// backstop registers the garbage-collection release of a stream or adopted
// wrapper that is never closed (events have one per slab: recycle.go). Its
// argument is the handle, never the Go object, and the cleanup is one static
// function, so registering it allocates no closure of ours. Close may stop
// it; run after Close, it finds the handle closed and does nothing.
func backstop[T any](obj *T, h *handle) runtime.Cleanup {
	return runtime.AddCleanup(obj, releaseLeaked, h)
}

// releaseLeaked runs on the runtime's cleanup goroutine. The object is
// unreachable, so no call is in flight on it; a handle already closed (by
// its device) is left alone. It never panics.
func releaseLeaked(h *handle) {
	if h.Close(false) && h.Kind != lifetime.KindAdopted {
		leaked.Add(1) // an adopted wrapper's handle is its creator's
	}
}
