package cuda

import (
	"runtime"
	"weak"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/hazard"
)

// Creating and closing an event costs, in steady state, no driver call and
// no allocation, for three reasons, all kept per context (primary) under its
// mutex, which NewEvent and the destroy take once each anyway:
//
//   - Reuse. The flush that retires a closed event (guard.go) keeps its
//     driver handle, by creation flags (up to reuseMax per flag set), for
//     the next NewEvent with the same options, if the event is complete:
//     never recorded (Record sets the state word's recorded bit, inside its
//     hazard slot or before its counted exit, whatever the driver
//     answered), or, if recorded, cuEventQuery says so (handle.reusable).
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
const (
	slabSize = 64
	reuseMax = 64 // driver handles kept per flag set
	flagSets = 8  // CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS
)

type eventSlab struct {
	ev [slabSize]Event
}

// slabHandles are the handles of one slab's events: what its backstop needs.
type slabHandles struct {
	p          *primary
	n          int          // slots taken, under p.mu
	prev, next *slabHandles // in p's list of slabs, under p.mu
	h          [slabSize]handle
}

// eventAlloc is a context's event allocator and its kept driver handles,
// under primary.mu.
type eventAlloc struct {
	cur  weak.Pointer[eventSlab]
	hs   *slabHandles
	free [flagSets][]driver.Event
}

// reuse pops a kept driver handle with flags f (0 if none). Under p.mu.
func (p *primary) reuse(f driver.EventFlags) driver.Event {
	l := p.events.free[f%flagSets]
	if len(l) == 0 {
		return 0
	}
	h := l[len(l)-1]
	p.events.free[f%flagSets] = l[:len(l)-1]
	return h
}

// keep keeps a complete event's driver handle for reuse; false if its flag
// set has reuseMax already. Under p.mu.
func (p *primary) keep(f driver.EventFlags, h driver.Event) bool {
	l := p.events.free[f%flagSets]
	if len(l) >= reuseMax {
		return false
	}
	if l == nil {
		l = make([]driver.Event, 0, reuseMax)
	}
	p.events.free[f%flagSets] = append(l, h)
	return true
}

// kept takes every kept driver handle out, for their destroy with the
// context. Under p.mu.
func (p *primary) kept() []driver.Event {
	var all []driver.Event
	for i := range p.events.free {
		all = append(all, p.events.free[i]...)
		p.events.free[i] = nil
	}
	return all
}

// linkEvent makes the Event for driver handle ev in a slab, and lists its
// handle as open; nil if there is no host memory for a new slab's state
// words. Under p.mu, with p not closing.
func (p *primary) linkEvent(d *Device, ev driver.Event, opts EventOptions, f driver.EventFlags, imported bool) *Event {
	a := &p.events
	s := a.cur.Value()
	if s == nil || a.hs.n == slabSize {
		ws := hazard.Words(slabSize)
		if ws == nil {
			return nil
		}
		s = new(eventSlab)
		a.hs = &slabHandles{p: p, next: p.slabs}
		for i := range a.hs.h {
			a.hs.h[i].state = &ws[i].Int64
		}
		// The words go with the handles: nothing reaches them after that
		// (a hazard call holds a word only while its event is reachable).
		runtime.AddCleanup(a.hs, hazard.FreeWords, ws)
		if p.slabs != nil {
			p.slabs.prev = a.hs
		}
		p.slabs = a.hs
		runtime.AddCleanup(s, releaseSlab, a.hs)
		a.cur = weak.Make(s)
	}
	e, r := &s.ev[a.hs.n], &a.hs.h[a.hs.n]
	a.hs.n++
	r.p, r.h, r.kind, r.flags = p, uintptr(ev), kindEvent, f
	if imported || opts.IPC {
		r.state.Store(noReuse)
	} else {
		r.state.Store(0) // never recorded: complete
	}
	p.live++ // listed by its slab, in p.slabs
	e.w, e.h, e.p, e.dev, e.opts, e.imported, e.r, e.ipc = r.state, ev, p, d, opts, imported, r, nil
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
	p.mu.Lock()
	n := hs.n
	p.mu.Unlock()
	for i := range n {
		releaseLeaked(&hs.h[i])
	}
	// Its handles are finished (none had a call in flight): the slab leaves
	// p's list.
	p.mu.Lock()
	if hs.prev != nil {
		hs.prev.next = hs.next
	} else if p.slabs == hs {
		p.slabs = hs.next
	}
	if hs.next != nil {
		hs.next.prev = hs.prev
	}
	hs.prev, hs.next = nil, nil
	p.mu.Unlock()
}

// openEvents appends the handles of p's events not yet closed. Under p.mu.
func (p *primary) openEvents(open []*handle) []*handle {
	for hs := p.slabs; hs != nil; hs = hs.next {
		for i := range hs.n {
			if h := &hs.h[i]; !h.closed() {
				open = append(open, h)
			}
		}
	}
	return open
}
