package cuda

import (
	"runtime"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
)

// guard counts calls in flight on a driver object, so that Close can wait
// for them and no call reaches the driver with a destroyed handle.
type guard struct {
	state atomic.Int64 // calls in flight, plus closing once closed
}

const closing = int64(1) << 62

// enter counts a call in; it fails once the object is closed.
func (g *guard) enter() bool {
	if g.state.Add(1)&closing != 0 {
		g.state.Add(-1)
		return false
	}
	return true
}

// exit counts a call out.
func (g *guard) exit() { g.state.Add(-1) }

// closed reports whether close has begun.
func (g *guard) closed() bool { return g.state.Load()&closing != 0 }

// close marks the object closed and waits for the calls in flight. It
// reports false if the object was already closed.
func (g *guard) close() bool {
	for {
		s := g.state.Load()
		if s&closing != 0 {
			return false
		}
		if g.state.CompareAndSwap(s, s|closing) {
			break
		}
	}
	for g.state.Load() != closing {
		runtime.Gosched()
	}
	return true
}

var leaked atomic.Int64

// Leaked is the number of events and streams released by the garbage
// collector because they were never closed. A growing count is a leak to fix
// with Close.
func Leaked() int64 { return leaked.Load() }

// handleRef is what a backstop needs: the handle and its context's state,
// never the Go object itself.
type handleRef struct {
	p      *primary
	h      uintptr
	stream bool // a stream, else an event
}

// backstop registers the garbage-collection release of a driver object that
// is never closed. It tolerates a context already gone (its objects went with
// it) and never panics. Close stops it. The cleanup is one static function,
// so registering it allocates no closure.
func backstop[T any](obj *T, p *primary, h uintptr, stream bool) runtime.Cleanup {
	return runtime.AddCleanup(obj, releaseLeaked, handleRef{p, h, stream})
}

func releaseLeaked(r handleRef) {
	leaked.Add(1)
	if !r.p.alive() {
		return
	}
	if r.stream {
		_ = driver.StreamDestroyCtx(r.p.ctx, driver.Stream(r.h))
	} else {
		_ = driver.EventDestroyCtx(r.p.ctx, driver.Event(r.h))
	}
}
