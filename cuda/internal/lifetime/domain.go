package lifetime

import "sync"

// LimboBatch is how many retired events wait for one flush: a flush costs
// a membarrier system call.
const LimboBatch = 64

// Owner does, for a Domain, what needs the driver. The Domain calls it
// outside Mu.
type Owner interface {
	// Destroy destroys the driver object of a retired event or stream
	// that no call holds (nothing for an adopted wrapper).
	Destroy(h *Handle) error
	// Complete reports whether a recorded event's work is complete (the
	// driver's query), so that its driver handle may be kept.
	Complete(h *Handle) bool
	// Release runs once, after the last live handle of a closing Domain
	// was dropped: kept are the event handles kept for reuse, to destroy
	// with the context.
	Release(kept []uintptr)
}

// Domain is the lifetime state of one context: its live handles, its
// lists of open objects, its limbo and its kept event handles.
type Domain struct {
	// Mu guards the fields below, and the Owner's state that must change
	// together with them (its count of Devices, its slabs of events).
	Mu      sync.Mutex
	Live    int     // unfinished handles: Devices, events, streams, wrappers
	Closing bool    // the last Device closed: nothing new; released at Live == 0
	Open    *Handle // open streams (a list head for Link)
	limbo   []*Handle
	kept    keptHandles
	owner   Owner

	flushMu sync.Mutex // one flush at a time; its scratch:
	held    []uintptr  // the words hazard slots hold
	ready   []*Handle  // the handles to destroy
	spare   []*Handle  // the limbo's other backing array
}

// Init sets d's owner and its first live handles (its first Device's).
func (d *Domain) Init(o Owner, live int) {
	d.owner, d.Live = o, live
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

// Limbo is the number of retired handles waiting for a flush.
func (d *Domain) Limbo() int {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	return len(d.limbo)
}

// drop is a finished handle's last step: it leaves its list, and the last
// one of a closing Domain hands the kept handles to the Owner's Release.
func (d *Domain) drop(h *Handle) {
	d.Mu.Lock()
	if h.L != nil {
		d.unlink(h)
	}
	d.Live--
	last := d.Live == 0 && d.Closing
	var kept []uintptr
	if last {
		kept = d.kept.all()
	}
	d.Mu.Unlock()
	if last {
		d.owner.Release(kept)
	}
}

// destroy is a retired handle's end, once no hazard slot holds it.
func (d *Domain) destroy(h *Handle) error {
	var err error
	if h.Kind != KindDevice {
		err = d.owner.Destroy(h)
	}
	d.drop(h)
	return err
}
