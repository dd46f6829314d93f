package cuda

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Events are cheap to create and close because of two things kept per
// primary context:
//
//   - Recycling. Closing an event that was never recorded (and is not an IPC
//     event) keeps its driver handle, by its creation flags, for the next
//     NewEvent with the same options, instead of destroying it. A
//     never-recorded event has no work, so the handle handed out again is
//     complete, as a new one would be, and has the same options; an event
//     that was ever recorded is destroyed as before, so a handle with pending
//     work is never reused. The handles die with their context.
//   - Slabs. Events are allocated slabSize at a time, and the garbage
//     collection backstop is registered once per slab, not per event: when
//     no event of a slab is reachable any more, it destroys the handles of
//     those never closed. A reachable event thus delays the release of its
//     leaked neighbours, at most slabSize-1 of them.
const (
	slabSize    = 64
	recycleMax  = 64 // handles kept per flag set
	flagClasses = 8  // CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS
)

type eventSlab struct {
	ev [slabSize]Event
}

// slabState is what a slab's backstop needs: never the slab itself.
type slabState struct {
	p *primary
	h [slabSize]atomic.Uintptr // the handle of each event not yet closed
}

// eventAlloc is a primary context's event allocator.
type eventAlloc struct {
	mu   sync.Mutex
	cur  weak.Pointer[eventSlab]
	st   *slabState
	next int
	free [flagClasses][]driver.Event
}

// take returns a fresh Event in the current slab, with its slab state and
// slot, and a recycled handle for flags f if one is kept (0 if none).
func (a *eventAlloc) take(p *primary, f driver.EventFlags, recycle bool) (*Event, *slabState, int, driver.Event) {
	a.mu.Lock()
	s := a.cur.Value()
	if s == nil || a.next == slabSize {
		s = new(eventSlab)
		a.st = &slabState{p: p}
		runtime.AddCleanup(s, releaseSlab, a.st)
		a.cur = weak.Make(s)
		a.next = 0
	}
	e, st, i := &s.ev[a.next], a.st, a.next
	a.next++
	var h driver.Event
	if recycle {
		if l := a.free[f%flagClasses]; len(l) > 0 {
			h = l[len(l)-1]
			a.free[f%flagClasses] = l[:len(l)-1]
		}
	}
	a.mu.Unlock()
	return e, st, i, h
}

// keep takes a closed, never-recorded event's handle for reuse; false if
// the class is full.
func (a *eventAlloc) keep(f driver.EventFlags, h driver.Event) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.free[f%flagClasses]
	if len(l) >= recycleMax {
		return false
	}
	if l == nil {
		l = make([]driver.Event, 0, recycleMax)
	}
	a.free[f%flagClasses] = append(l, h)
	return true
}

func releaseSlab(st *slabState) {
	for i := range st.h {
		h := st.h[i].Swap(0)
		if h == 0 {
			continue
		}
		leaked.Add(1)
		if st.p.alive() {
			_ = driver.EventDestroyCtx(st.p.ctx, driver.Event(h))
		}
	}
}
