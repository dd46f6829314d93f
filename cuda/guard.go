package cuda

import (
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/hazard"
)

// Lifetime of driver objects
//
// Every object that calls the driver (a Device, an Event, a Stream) holds a
// handle: a count of its calls in flight and a closing bit, in one atomic
// word. The hot calls (Record, Query, Sync, Sub, a Wait on complete work,
// and a stream's Wait, Query and Sync, on streams other than the default
// ones) do not count: inside their cgo crossing they hold the word in a
// hazard slot of their thread, without a locked instruction
// (internal/hazard). The others count themselves in and out (two atomic
// adds, no lock). Close sets the closing bit and returns at once. Whichever
// of Close and the last counted call sees the object closing with no
// counted call left retires it, exactly once (the finished bit): it goes to
// its context's limbo, and a flush destroys it once no hazard slot holds
// its word. Nothing waits or spins.
//
// A flush costs a membarrier system call, so events are flushed in batches
// of limboBatch (their driver handles then go to reuse, recycle.go);
// streams and adopted wrappers at once, and everything once the context is
// closing (and a membarrier only while a thread other than the flushing
// one has made hazard calls). A flush that finds a retired object held
// marks the holding thread late, and the call flushes when it returns, so
// a retired object held by a call is destroyed when the call returns (the
// call reads its own thread's mark, not the object's word, which its
// driver call has likely evicted from the cache).
//
// A primary context is released the same way: every Device and every open
// event and stream of it holds a reference (live); closing the last Device
// closes every event and stream of the context, and the finish that drops
// live to zero releases the context. So no call ever runs on a released
// context, and a call in flight (a Sync on pending work, a cancelled Wait's
// driver wait) delays the release, never Close.
//
// Wrappers of foreign streams and events (AdoptStream, AdoptEvent) have a
// handle of their own too, in their Device's list rather than the
// primary's: the Device's Close closes them, and finishing one destroys
// nothing. The default streams share their Device's handle. A context
// adopted with AdoptContext is never released.

// The state word: the count of calls in flight in the low 32 bits, then
// the flags.
const (
	countMask      = int64(1)<<32 - 1
	closedByDevice = int64(1) << 32  // closed because its device closed
	closing        = hazard.Closing  // Close has begun: no new calls
	finished       = int64(1) << 34  // retired (in the limbo, or destroyed)
	noReuse        = hazard.NoReuse  // an event whose driver handle must not be reused
	recorded       = hazard.Recorded // an event recorded at least once (recycle.go)
)

// limboBatch is how many retired events wait for one flush.
const limboBatch = 64

type kind uint8

const (
	kindDevice kind = iota // a Device value; its default stream shares it
	kindEvent
	kindStream
	kindAdopted // a wrapper of a foreign event or stream: never destroyed
)

// handle is the lifetime state of one object: see above. Streams and
// adopted wrappers allocate theirs apart from the Go object, so that the
// list of open objects does not keep the object from the garbage collector;
// events have theirs in their slab's handles, apart from the events
// (recycle.go).
type handle struct {
	state *atomic.Int64 // in C memory (hazard.Words) where hazard calls use it
	p     *primary
	h     uintptr // the driver handle: a driver.Event or driver.Stream
	kind  kind
	reuse bool              // an event's driver handle may be kept: set by a flush, under p.flushMu
	flags driver.EventFlags // an event's creation flags: its reuse class
	l     *listed           // a stream's or adopted wrapper's place in a list (events are listed by slab)
}

// listed places a stream or an adopted wrapper in its list of open objects:
// p's, or for an adopted wrapper its Device's. Under p.mu.
type listed struct {
	dev        *Device // kindAdopted: the Device whose Close closes it
	prev, next *handle
}

// newHandle makes a stream's or adopted wrapper's handle, its state word in
// C memory, freed with the handle; nil if out of memory.
func newHandle(p *primary, h uintptr, k kind, l *listed) *handle {
	ws := hazard.Words(1)
	if ws == nil {
		return nil
	}
	r := &handle{state: &ws[0].Int64, p: p, h: h, kind: k, l: l}
	runtime.AddCleanup(r, hazard.FreeWords, ws)
	return r
}

// word is the state word's address, as hazard calls hold it.
func (h *handle) word() uintptr { return hazard.Addr(h.state) }

// enter counts a call in; it fails once the object is closing.
func (h *handle) enter() bool {
	if h.state.Add(1)&closing != 0 {
		h.refused()
		return false
	}
	return true
}

// refused takes back the count of a refused enter, which may be the last of
// a closing object: then it finishes it.
func (h *handle) refused() {
	if h.state.Add(-1)&closing != 0 {
		h.finish()
	}
}

// exit counts a call out; the last one out of a closing object finishes it.
func (h *handle) exit() {
	if h.state.Add(-1)&closing != 0 {
		h.finish()
	}
}

// closed reports whether Close has begun.
func (h *handle) closed() bool { return h.state.Load()&closing != 0 }

// byDevice reports whether it was closed by its device's Close.
func (h *handle) byDevice() bool { return h.state.Load()&closedByDevice != 0 }

// mark sets the closing bit; false if it was already set.
func (h *handle) mark(byDevice bool) bool {
	bits := closing
	if byDevice {
		bits |= closedByDevice
	}
	for {
		s := h.state.Load()
		if s&closing != 0 {
			return false
		}
		if h.state.CompareAndSwap(s, s|bits) {
			return true
		}
	}
}

// close marks the object closing and finishes it if no call is in flight
// (else the last call out does). It reports whether this call closed it,
// and the error of a destroy it did itself.
func (h *handle) close(byDevice bool) (bool, error) {
	bits := closing
	if byDevice {
		bits |= closedByDevice
	}
	for {
		s := h.state.Load()
		if s&closing != 0 {
			return false, nil
		}
		if s&countMask != 0 { // the last call out finishes it
			if h.state.CompareAndSwap(s, s|bits) {
				return true, nil
			}
			continue
		}
		// No counted call in flight: closing and retiring in one step.
		if h.state.CompareAndSwap(s, s|bits|finished) {
			return true, h.retire(!byDevice)
		}
	}
}

// finish retires the object once it is closing with no counted call in
// flight. Of all the callers that see that state, one wins.
func (h *handle) finish() error {
	for {
		s := h.state.Load()
		if s&countMask != 0 || s&(closing|finished) != closing {
			return nil
		}
		if h.state.CompareAndSwap(s, s|finished) {
			return h.retire(true)
		}
	}
}

// retire hands a finished handle to its context's limbo, and flushes it
// (if flush) when the batch is full, the context closing or h no event.
// A Device's handle, never held by a hazard call, is destroyed at once. It
// returns h's destroy error if this flush destroyed h.
func (h *handle) retire(flush bool) error {
	if h.kind == kindDevice {
		return h.destroy()
	}
	p := h.p
	p.mu.Lock()
	p.limbo = append(p.limbo, h)
	flush = flush && (p.closing || h.kind != kindEvent || len(p.limbo) >= limboBatch)
	p.mu.Unlock()
	if !flush {
		return nil
	}
	return p.flush(h)
}

// flush destroys the retired handles that no hazard slot holds; the others
// stay in the limbo until a later flush (the call holding one flushes when
// it returns). It returns self's destroy error if it destroyed self (with
// self nil, the first error). Flushes run one at a time, the barrier and
// the scan outside p.mu, and allocate nothing in steady state. Should the
// barrier fail (it does not, once registered), nothing held can be told
// apart: the batch goes back to the limbo for the next flush.
func (p *primary) flush(self *handle) error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	return p.flushLocked(self)
}

// flushLocked is flush, under p.flushMu.
func (p *primary) flushLocked(self *handle) error {
	p.mu.Lock()
	batch := p.limbo
	if len(batch) == 0 {
		p.mu.Unlock()
		return nil
	}
	p.limbo = p.spare[:0]
	p.mu.Unlock()
	// Every handle of the batch has its closing bit set: the barrier
	// orders that before the calls' later checks, and their slots before
	// the scan.
	ok := hazard.Barrier()
	if ok {
		p.held = hazard.Held(p.held[:0])
		// Calls that hold a word of the batch are marked late, so that
		// each flushes when it returns (it no longer reads the word
		// then); after a second barrier, a word still held is theirs to
		// flush, one no longer held is free now.
		n := 0
		for _, w := range p.held {
			for _, h := range batch {
				if h.word() == w {
					p.held[n] = w
					n++
					break
				}
			}
		}
		if p.held = p.held[:n]; n > 0 {
			hazard.MarkLate(p.held)
			if ok = hazard.Barrier(); ok {
				p.held = hazard.Held(p.held[:0])
			}
		}
	}
	p.mu.Lock()
	ready := p.ready[:0]
	ask := false
	for _, h := range batch {
		switch {
		case !ok || slices.Contains(p.held, h.word()):
			p.limbo = append(p.limbo, h)
			continue
		case h.kind != kindEvent || p.closing:
			h.reuse = false
		default:
			s := h.state.Load()
			h.reuse = s&(noReuse|closedByDevice) == 0
			// Never recorded: complete, kept at once, unless an event
			// before it waits for the driver's answer (kept in batch
			// order, while there is room).
			if h.reuse && s&recorded == 0 && !ask && p.keepRetired(h) {
				continue
			}
			ask = ask || h.reuse && s&recorded != 0
		}
		ready = append(ready, h)
	}
	clear(batch)
	p.spare = batch[:0]
	p.mu.Unlock()
	if ask {
		// A recorded event's handle is kept only if the driver says it is
		// complete (recycle.go), asked outside p.mu. No call holds it and
		// none can start, so the answer stays true.
		for _, h := range ready {
			h.reuse = h.reuse && h.reusable()
		}
		p.mu.Lock()
		n := 0
		for _, h := range ready {
			if !h.reuse || !p.keepRetired(h) {
				ready[n] = h
				n++
			}
		}
		clear(ready[n:])
		ready = ready[:n]
		p.mu.Unlock()
	}
	var err error
	for i, h := range ready {
		if derr := h.destroy(); h == self || self == nil && err == nil {
			err = derr
		}
		ready[i] = nil
	}
	p.ready = ready[:0]
	return err
}

// reusable reports whether a retired event of this package, never marked
// noReuse nor closed by its device, is complete, so that its driver handle
// may be kept for reuse: never recorded, or the driver says so. A failed
// query answers no.
func (h *handle) reusable() bool {
	return h.state.Load()&recorded == 0 || eventQuery(h.p.ctx, driver.Event(h.h)) == nil
}

// destroy is finish's work, done by the flush that found the handle
// retired and held by no hazard slot.
func (h *handle) destroy() error {
	var err error
	switch h.kind {
	case kindEvent:
		err = driverErr("destroy event", driver.EventDestroyCtx(h.p.ctx, driver.Event(h.h)))
	case kindStream:
		err = driverErr("destroy stream", driver.StreamDestroyCtx(h.p.ctx, driver.Stream(h.h)))
	}
	if rerr := h.p.drop(h); err == nil {
		err = rerr
	}
	return err
}

// keepRetired is destroy for a reusable event (handle.reusable), under
// p.mu: p keeps its driver handle for reuse (recycle.go). It reports whether
// it did so; the others go to destroy. Live stays above zero: the context
// is not closing, so a Device holds it.
func (p *primary) keepRetired(h *handle) bool {
	if p.closing {
		return false
	}
	if !p.keep(h.flags, driver.Event(h.h)) {
		return false
	}
	p.live--
	return true
}

// hotResult is a hazard call's driver result (or hazard.Refused or
// hazard.NoSlot), r, after the flush it asks for, on objects a and b (b nil
// for one): a call marked late flushes its objects' contexts; a refused
// call flushes them only if they hold a or b in their limbo (a flush may
// have seen its slot and kept the object for it), so that calls on an
// object long closed do not flush a batch that is not full.
func hotResult(r int32, a, b *handle) int32 {
	res, flush := hazard.Split(r)
	if !flush {
		return res
	}
	refused := res == hazard.Refused
	a.p.flushIf(refused, a, b)
	if b != nil && b.p != a.p {
		b.p.flushIf(refused, a, b)
	}
	return res
}

// flushIf flushes p's limbo; if only, only where it holds a or b.
func (p *primary) flushIf(only bool, a, b *handle) {
	if !only {
		p.flush(nil)
		return
	}
	// Under flushMu: a flush in progress has put the handles its scan
	// found held back in the limbo by the time it releases it.
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	p.mu.Lock()
	in := false
	for _, h := range p.limbo {
		if h == a || h == b { // limbo handles are never nil
			in = true
			break
		}
	}
	p.mu.Unlock()
	if in {
		p.flushLocked(nil)
	}
}

// recordExit counts a Record out of its event, marked recorded first (its
// driver handle is then reused only if the driver says it is complete).
func (h *handle) recordExit() {
	if h.state.Load()&recorded == 0 {
		h.state.Or(recorded)
	}
	h.exit()
}

var leaked atomic.Int64

// Leaked is the number of events and streams destroyed by the garbage
// collector because they were never closed (nor their device). A growing
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
	if closed, _ := h.close(false); closed && h.kind != kindAdopted {
		leaked.Add(1) // an adopted wrapper's handle is its creator's
	}
}
