package cuda

import (
	"runtime"
	"weak"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// Creating and closing an event costs, in steady state, no driver call and
// no allocation, for three reasons, all kept per context (ctxState) under its
// lifetime lock (p.life.Mu), which NewEvent and the destroy take once each
// anyway:
//
//   - Reuse. The flush that retires a closed event (internal/lifetime)
//     keeps its driver handle, by creation flags (up to lifetime.ReuseMax
//     per flag set), for
//     the next NewEvent with the same options, if the event is complete:
//     never recorded (Record sets the state word's recorded bit, inside its
//     hazard slot or before its counted exit, whatever the driver
//     answered), or, if recorded, cuEventQuery says so (complete).
//     That answer is final: the event is closing and no slot holds it, so
//     no record can still come through this package. So a reused handle is
//     complete, as a new event is, and has the options asked for; one whose
//     latest record is pending (or whose query fails) is destroyed, never
//     reused. Never reused: IPC and imported events (another process may
//     hold them), events whose Handle was taken (work may have been
//     recorded through it), events recorded or waited on with the EXTERNAL
//     flags (captured in a graph, every launch records or waits on the
//     handle), and events closed by their Device's Close. The kept handles
//     are destroyed when the context is released. Query, Sync and Wait
//     write nothing for it; a recorded event's Close costs one driver
//     query, in the flush of its batch.
//   - Slabs. Events come slabSize to an allocation, their handles slabSize
//     to another (apart, so that the context's list of open handles does
//     not keep the events reachable), and the garbage-collection backstop is
//     registered once per slab: when no event of a slab is reachable, it
//     closes those never closed, and counts them in Leaked. A reachable
//     event thus delays the release of its leaked neighbours (at most
//     slabSize-1).
//   - Lists of slabs. The last Device's Close finds the open events through
//     the context's list of slabs (linked once per slab), so that creating
//     and closing an event writes no list pointer.
const slabSize = 64

type eventSlab struct {
	ev [slabSize]Event
}

// slabHandles are the handles of one slab's events: what its backstop needs.
type slabHandles struct {
	p          *ctxState
	n          int          // slots taken, under p.life.Mu
	prev, next *slabHandles // in p's list of slabs, under p.life.Mu
	h          [slabSize]handle
}

// eventAlloc is a context's event allocator, under ctxState.life.Mu (with
// which it changes: a new event is live, and listed by its slab for the
// last Device's Close).
type eventAlloc struct {
	cur   weak.Pointer[eventSlab]
	hs    *slabHandles
	slabs *slabHandles // the slabs of the context's events
}

// completion asks the driver whether an event's latest record is complete
// (nil), pending (driver.ErrorNotReady) or unusable (another error): the
// test of reuse that the flush makes (lifetime.go: ctxState.Complete, where
// only nil keeps a handle). Never under a lock.
func (p *ctxState) completion(h driver.Event) error {
	return eventQuery(p.ctx, h)
}

// linkEvent makes the Event for driver handle ev in a slab, and lists its
// handle as open; nil if there is no host memory for a new slab's state
// words. Under p.life.Mu, with p not closing.
func (p *ctxState) linkEvent(d *Device, ev driver.Event, opts EventOptions, f driver.EventFlags, imported bool) *Event {
	a := &p.events
	s := a.cur.Value()
	if s == nil || a.hs.n == slabSize {
		ws := lifetime.Words(slabSize)
		if ws == nil {
			return nil
		}
		s = new(eventSlab)
		a.hs = &slabHandles{p: p, next: a.slabs}
		for i := range a.hs.h {
			a.hs.h[i].State = &ws[i].Int64
		}
		// The words go with the handles: nothing reaches them after that
		// (a hazard call holds a word only while its event is reachable).
		runtime.AddCleanup(a.hs, lifetime.FreeWords, ws)
		if a.slabs != nil {
			a.slabs.prev = a.hs
		}
		a.slabs = a.hs
		runtime.AddCleanup(s, releaseSlab, a.hs)
		a.cur = weak.Make(s)
	}
	e, r := &s.ev[a.hs.n], &a.hs.h[a.hs.n]
	a.hs.n++
	r.D, r.H, r.Kind, r.Flags = &p.life, uintptr(ev), lifetime.KindEvent, uint32(f)
	if imported || opts.IPC {
		r.State.Store(noReuse)
	} else {
		r.State.Store(0) // never recorded: complete
	}
	p.life.Live++ // listed by its slab, in p.events.slabs
	e.w, e.h, e.p, e.dev, e.opts, e.imported, e.r, e.ipc = r.State, ev, p, d, opts, imported, r, nil
	if imported {
		e.recorded.Store(true) // recorded by the exporting process
	}
	return e
}

// releaseSlab is a slab's backstop: it runs on the runtime's cleanup
// goroutine once none of the slab's events is reachable, so none has a call
// in flight, and closes those neither closed nor closed by their device. It
// never panics.
func releaseSlab(hs *slabHandles) {
	p := hs.p
	p.life.Mu.Lock()
	n := hs.n
	p.life.Mu.Unlock()
	for i := range n {
		releaseLeaked(&hs.h[i])
	}
	// Its handles are finished (none had a call in flight): the slab leaves
	// p's list.
	a := &p.events
	p.life.Mu.Lock()
	if hs.prev != nil {
		hs.prev.next = hs.next
	} else if a.slabs == hs {
		a.slabs = hs.next
	}
	if hs.next != nil {
		hs.next.prev = hs.prev
	}
	hs.prev, hs.next = nil, nil
	p.life.Mu.Unlock()
}

// closeEvents closes, for the last Device's Close, p's events not yet
// closed, reporting whether it closed any. Under p.life.Mu: each retires
// without a lock, and needs no driver call.
func (p *ctxState) closeEvents() bool {
	closed := false
	for hs := p.events.slabs; hs != nil; hs = hs.next {
		for i := range hs.n {
			if h := &hs.h[i]; !h.Closed() {
				closed = h.Close(true) || closed
			}
		}
	}
	return closed
}
