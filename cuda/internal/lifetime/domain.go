package lifetime

import (
	"sync"
	"sync/atomic"
)

// LimboBatch is how many retired events wait for one flush: a flush costs
// a membarrier system call. A create that finds no kept handle flushes a
// batch itself once this many wait (Help); the flusher goroutine is asked
// once AskEvents wait, and flushes at most flushMax handles at a time.
const (
	LimboBatch = 64
	AskEvents  = 2 * LimboBatch
	flushMax   = 4 * LimboBatch
	// HighWater bounds what waits for a flush: past it, each create of
	// the Domain flushes a batch first (Throttle), so that creating and
	// closing faster than the flusher destroys cannot grow it further.
	HighWater = 16 * LimboBatch
)

// Owner does, for a Domain, what needs the driver. The Domain calls it
// outside Mu, never on the goroutine of a Close.
type Owner interface {
	// Destroy destroys the driver object of a retired event or stream
	// that no call holds (nothing for an adopted wrapper). Its error has
	// no caller to go to.
	Destroy(h *Handle) error
	// Complete reports whether a recorded event's work is complete (the
	// driver's query), so that its driver handle may be kept.
	Complete(h *Handle) bool
	// Release runs once, after the last live handle of a closing Domain
	// was dropped: kept are the event handles kept for reuse, to destroy
	// with the context. It runs on the flusher goroutine (or in Flush).
	Release(kept []uintptr)
}

// Domain is the lifetime state of one context: its live handles, its
// lists of open objects, its retired handles and its kept event handles.
type Domain struct {
	// Mu guards the fields below, and the Owner's state that must change
	// together with them (its count of Devices, its slabs of events). It
	// is never held across a driver call.
	Mu      sync.Mutex
	Live    int     // unfinished handles: Devices, events, streams, wrappers
	Closing bool    // the last Device closed (CloseLocked): nothing new; released at Live == 0
	Open    *Handle // open streams (a list head for Link)
	kept    keptHandles
	owner   Owner
	owed    bool      // Release is owed: Live reached 0 while closing
	done    bool      // Release was run
	owedTo  []uintptr // the kept handles that Release destroys

	// The retired handles, pushed by retire without a lock (a stack,
	// linked through Handle.next), and how many wait in it or in the
	// backlog.
	retired atomic.Pointer[Handle]
	pending atomic.Int64
	closed  atomic.Bool  // Closing, readable without Mu
	asked   atomic.Bool  // in the flusher's queue
	asks    atomic.Int64 // times queued (for tests)
	qnext   *Domain      // the next in the flusher's queue

	flushMu sync.Mutex // one flush at a time; its state and scratch:
	backlog *Handle    // taken from retired, oldest first, not yet flushed
	waiting []*Handle  // found held by a call at the last flush
	batch   []*Handle  // the handles of one flush
	held    []uintptr  // the words hazard slots hold
	ready   []*Handle  // the handles to destroy
}

// Init sets d's owner and its first live handles (its first Device's).
func (d *Domain) Init(o Owner, live int) {
	d.owner, d.Live = o, live
}

// CloseLocked marks d closing: nothing new is created in it, closed
// events are no longer kept, and it is released once its last live handle
// is dropped (at once if none is left). The caller then calls Ask, which
// has the flusher run what is owed. Under d.Mu.
func (d *Domain) CloseLocked() {
	d.Closing = true
	d.closed.Store(true)
	if d.Live == 0 {
		d.oweRelease()
	}
}

// oweRelease records that Release is owed, with the kept handles. Under
// d.Mu.
func (d *Domain) oweRelease() {
	if !d.owed && !d.done {
		d.owed, d.owedTo = true, d.kept.all()
	}
}

// Link lists h (with an L) as open and counts it live. Under d.Mu.
func (d *Domain) Link(h *Handle) {
	list := h.L.List
	h.L.next = *list
	if *list != nil {
		(*list).L.prev = h
	}
	*list = h
	d.Live++
}

// unlink takes h out of its list. Under d.Mu.
func (d *Domain) unlink(h *Handle) {
	list := h.L.List
	if h.L.prev != nil {
		h.L.prev.L.next = h.L.next
	} else if *list == h {
		*list = h.L.next
	}
	if h.L.next != nil {
		h.L.next.L.prev = h.L.prev
	}
	h.L.prev, h.L.next = nil, nil
}

// Limbo is the number of retired handles waiting for a flush, those a
// call held at the last flush included. It waits for a flush in progress.
func (d *Domain) Limbo() int {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	return int(d.pending.Load()) + len(d.waiting)
}

// Pending is the number of retired handles no flush has taken yet.
func (d *Domain) Pending() int { return int(d.pending.Load()) }

// drop is a finished handle's last step: it leaves its list, and the last
// one of a closing Domain makes Release owed, which the flusher runs.
func (d *Domain) drop(h *Handle) {
	d.Mu.Lock()
	if h.L != nil {
		d.unlink(h)
	}
	d.Live--
	last := d.Live == 0 && d.Closing
	if last {
		d.oweRelease()
	}
	d.Mu.Unlock()
	if last {
		d.Ask()
	}
}

// release runs Release if it is owed, once. Under d.flushMu (so that it
// follows every destroy of d), never under d.Mu.
func (d *Domain) release() {
	d.Mu.Lock()
	owed, kept := d.owed, d.owedTo
	if owed {
		d.owed, d.done, d.owedTo = false, true, nil
	}
	d.Mu.Unlock()
	if owed {
		d.owner.Release(kept)
	}
}

// destroy is a retired handle's end, once no hazard slot holds it. The
// destroy's error has no caller: the Close that retired the handle has
// returned.
func (d *Domain) destroy(h *Handle) {
	if h.Kind != KindDevice {
		_ = d.owner.Destroy(h)
	}
	d.drop(h)
}
