package cuda

import (
	"slices"
	"sync"

	"github.com/cudagen/cudagen/cuda/driver"
)

// EventPool recycles events of one device and one set of options, so that
// code that creates and drops an event per step (per kernel, per request)
// pays a driver create and destroy, and a garbage-collection registration,
// only when the pool is empty. It is safe for concurrent use.
//
// An event from Get is not recorded (Sub returns ErrNotRecorded until it is)
// and complete (Query reports true): Get never hands out an event whose last
// recorded work is still pending. Get hands an event to one caller at a
// time as long as each caller stops using an event once it has Put it (as
// with sync.Pool): a second Put while the event is idle in the pool is
// refused, but a stale Put made after the pool handed the event out again
// cannot be told from its new holder's Put (both hold the same *Event, and
// handing out a new *Event per Get would cost an allocation per Get, which
// the pool exists to avoid), so the pool takes it back and may hand it out
// to a third caller while the second still uses it. The zero value and a
// nil *EventPool are not usable: their methods return errors matching
// ErrInvalid (Len returns 0).
type EventPool struct {
	dev    *Device
	opts   EventOptions
	mu     sync.Mutex
	free   []*Event
	closed bool
	max    int
}

// NewEventPool creates a pool of events with opts, keeping at most max idle
// events (max <= 0 means 1024).
func (d *Device) NewEventPool(opts EventOptions, max int) (*EventPool, error) {
	const op = "create event pool"
	if d == nil || d.p == nil {
		return nil, invalidErr(op, "device")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if d.h.Closed() {
		return nil, closedErr(op, "device")
	}
	if max <= 0 {
		max = 1024
	}
	return &EventPool{dev: d, opts: opts, max: max}, nil
}

// Get returns an idle event of the pool, or a new one (NewEvent, which
// reuses a kept driver handle where it can: recycle.go). An idle event
// recorded since it was made is handed out only if it is complete, by the
// test the context's reuse of driver handles makes (ctxState.completion),
// asked outside the pool's lock; one still pending goes to the back of the
// pool, and one the driver refuses is closed.
func (p *EventPool) Get() (*Event, error) {
	const op = "get event from pool"
	if p == nil || p.dev == nil {
		return nil, invalidErr(op, "pool")
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, closedErr(op, "pool")
	}
	for tries := len(p.free); tries > 0 && len(p.free) > 0; tries-- {
		e := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		p.mu.Unlock()
		if e.r.Closed() { // closed while idle (by its owner, or its device)
			e.pooled.Store(false)
		} else if !e.recorded.Load() {
			return p.handOut(e), nil
		} else if e.r.Enter() {
			err := e.p.completion(e.h)
			e.r.Exit()
			switch {
			case err == nil:
				return p.handOut(e), nil
			case err != driver.ErrorNotReady: // unusable: drop it
				e.pooled.Store(false)
				e.Close()
			default: // its work is pending: to the back, for later
				p.mu.Lock()
				if !p.closed && len(p.free) < p.max {
					p.free = slices.Insert(p.free, 0, e)
					continue
				}
				p.mu.Unlock()
				e.pooled.Store(false)
				e.Close()
			}
		} else {
			e.pooled.Store(false)
		}
		p.mu.Lock()
	}
	p.mu.Unlock()
	return p.dev.NewEvent(p.opts)
}

// handOut marks an idle event of the pool as handed out, not recorded.
func (p *EventPool) handOut(e *Event) *Event {
	e.recorded.Store(false)
	e.pooled.Store(false)
	return e
}

// Put returns an event to the pool; the caller must not use e after Put,
// nor Put it again (see EventPool: a stale Put after the pool handed e to
// another caller is taken as that caller's). Events of another device or
// other options, imported events, closed events and events beyond the
// pool's size are closed or dropped instead, and Put returns nil. An event
// idle in a pool is left where it is and Put returns an error matching
// ErrInvalid; so does a nil event or pool.
func (p *EventPool) Put(e *Event) error {
	const op = "put event in pool"
	if p == nil || p.dev == nil {
		return invalidErr(op, "pool")
	}
	if e == nil || e.r == nil {
		return invalidErr(op, "event")
	}
	if !e.pooled.CompareAndSwap(false, true) {
		return &Error{Op: op, Detail: "the event is already in a pool (put twice)",
			Fix: "put each event back once, and do not use it after Put", Err: ErrInvalid}
	}
	if e.dev.p != p.dev.p || e.opts != p.opts || e.imported {
		e.pooled.Store(false)
		e.Close()
		return nil
	}
	p.mu.Lock()
	if p.closed || len(p.free) >= p.max || e.r.Closed() {
		p.mu.Unlock()
		e.pooled.Store(false)
		e.Close()
		return nil
	}
	p.free = append(p.free, e)
	p.mu.Unlock()
	return nil
}

// Len is the number of idle events in the pool.
func (p *EventPool) Len() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// Close closes the idle events (see Event.Close); events handed out stay
// valid and are closed when Put back. It is idempotent, never blocks and
// never waits for another goroutine: the pool's lock is never held across
// a driver call.
func (p *EventPool) Close() error {
	if p == nil || p.dev == nil {
		return invalidErr("close event pool", "pool")
	}
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	var first error
	for _, e := range free {
		e.pooled.Store(false)
		if err := e.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
