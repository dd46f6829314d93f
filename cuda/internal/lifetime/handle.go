package lifetime

import (
	"runtime"
	"sync/atomic"
)

// The state word: the count of counted calls in flight in the low 32 bits,
// then the flags (Closing, NoReuse and Recorded, which the C side reads or
// sets, are in hazard.go).
const (
	CountMask      = int64(1)<<32 - 1
	ClosedByDevice = int64(1) << 32 // closed because its device closed
	Finished       = int64(1) << 34 // retired (waiting for a flush, or destroyed)
	Waiting        = int64(1) << 37 // retired, and a flush found a call holding it
)

// Kind is what a Handle's object is, which decides how it is retired.
type Kind uint8

const (
	KindDevice  Kind = iota // a Device value: destroyed at once, never held by a hazard call
	KindEvent               // flushed in batches; its driver handle may be kept (Reuse)
	KindStream              // flushed at once
	KindAdopted             // a wrapper of a foreign event or stream: its Owner destroys nothing
)

// Handle is the lifetime state of one object. Streams and adopted wrappers
// allocate theirs apart from the Go object (NewHandle), so that a list of
// open objects does not keep the object from the garbage collector; the
// cuda package keeps events' in slabs.
type Handle struct {
	State *atomic.Int64 // in C memory (Words): hazard calls hold it
	D     *Domain
	H     uintptr // the driver handle: an event or a stream
	Kind  Kind
	reuse bool    // the flush keeps its driver handle: under D.flushMu
	Flags uint32  // an event's creation flags: its class for Reuse
	L     *Link   // its place in a list of open objects; nil if in none
	next  *Handle // retired: the next in its Domain's stack or backlog
}

// Link places a Handle in a list of open objects (Domain.Link). The list's
// head is a field of the Owner's, under the Domain's Mu.
type Link struct {
	List       **Handle
	prev, next *Handle
}

// Next is the next Handle of h's list (nil at its end). Under h.D.Mu.
func (h *Handle) Next() *Handle { return h.L.next }

// NewHandle makes a Handle in d with a state word of its own in C memory,
// freed with the Handle; nil if out of memory. list, if not nil, is the
// list that d.Link puts it in.
func NewHandle(d *Domain, h uintptr, k Kind, list **Handle) *Handle {
	ws := Words(1)
	if ws == nil {
		return nil
	}
	r := &Handle{State: &ws[0].Int64, D: d, H: h, Kind: k}
	if list != nil {
		r.L = &Link{List: list}
	}
	runtime.AddCleanup(r, FreeWords, ws)
	return r
}

// Word is the state word's address, as hazard calls hold it.
func (h *Handle) Word() uintptr { return Addr(h.State) }

// Enter counts a call in; it fails once the object is closing.
func (h *Handle) Enter() bool {
	return h.State.Add(1)&Closing == 0 || h.refused()
}

// refused takes back the count of a refused Enter, which may be the last
// of a closing object: then it retires it. It returns false. (Not inlined,
// so that Enter is.)
//
//go:noinline
func (h *Handle) refused() bool {
	h.Exit()
	return false
}

// Exit counts a call out; the last one out of a closing object retires it.
func (h *Handle) Exit() {
	if h.State.Add(-1)&Closing != 0 {
		h.Finish()
	}
}

// Hold counts one more call in on h, which the caller holds a call on
// already (so h cannot have finished): unlike Enter, it succeeds after a
// Close, which then retires h when the last call goes out.
func (h *Handle) Hold() { h.State.Add(1) }

// RecordExit counts a record out of its event, marked Recorded first (its
// driver handle is then kept only if the driver says it is complete).
func (h *Handle) RecordExit() {
	if h.State.Load()&Recorded == 0 {
		h.State.Or(Recorded)
	}
	h.Exit()
}

// Set sets flags (NoReuse) in the state word.
func (h *Handle) Set(flags int64) {
	if h.State.Load()&flags != flags {
		h.State.Or(flags)
	}
}

// Closed reports whether Close has begun.
func (h *Handle) Closed() bool { return h.State.Load()&Closing != 0 }

// ByDevice reports whether it was closed by its device's Close.
func (h *Handle) ByDevice() bool { return h.State.Load()&ClosedByDevice != 0 }

// Mark sets the closing bit without retiring the object (a Device, whose
// handle its Close finishes after closing its objects); false if it was set
// already.
func (h *Handle) Mark() bool {
	for {
		s := h.State.Load()
		if s&Closing != 0 {
			return false
		}
		if h.State.CompareAndSwap(s, s|Closing) {
			return true
		}
	}
}

// waits reports whether a flush found a call holding the retired h.
func (h *Handle) waits() bool { return h.State.Load()&Waiting != 0 }

// Close marks the object closing and retires it if no counted call is in
// flight (else the last call out does). It reports whether this call closed
// it. It never blocks, flushes or calls the Owner: a retired handle waits
// for a flush (the flusher's, or a create's). A Close by the device
// (byDevice) leaves asking for the flush to the device's Close.
func (h *Handle) Close(byDevice bool) bool {
	bits := Closing
	if byDevice {
		bits |= ClosedByDevice
	}
	for {
		s := h.State.Load()
		if s&Closing != 0 {
			return false
		}
		if s&CountMask != 0 { // the last call out retires it
			if h.State.CompareAndSwap(s, s|bits) {
				return true
			}
			continue
		}
		// No counted call in flight: closing and retiring in one step.
		if h.State.CompareAndSwap(s, s|bits|Finished) {
			h.retire(!byDevice)
			return true
		}
	}
}

// Finish retires the object once it is closing with no counted call in
// flight. Of all the callers that see that state, one wins.
func (h *Handle) Finish() {
	for {
		s := h.State.Load()
		if s&CountMask != 0 || s&(Closing|Finished) != Closing {
			return
		}
		if h.State.CompareAndSwap(s, s|Finished) {
			h.retire(true)
			return
		}
	}
}

// retire hands a finished handle to its Domain's retired handles, without
// a lock, and (if ask) asks the flusher to flush them when h is no event,
// AskEvents events wait, or the Domain is closing. A Device's handle,
// never held by a hazard call, is dropped at once.
func (h *Handle) retire(ask bool) {
	d := h.D
	if h.Kind == KindDevice {
		d.drop(h)
		return
	}
	n := d.push(h)
	if ask && (h.Kind != KindEvent || n >= AskEvents || d.closed.Load()) {
		d.Ask()
	}
}
