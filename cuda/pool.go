package cuda

import (
	"sync"
)

// EventPool recycles events of one device and one set of options, so that
// code that creates and drops an event per step (per kernel, per request)
// pays a driver create and destroy, and a garbage-collection registration,
// only when the pool is empty. It is safe for concurrent use.
//
// An event from Get is not recorded (Sub returns ErrNotRecorded until it is)
// and complete (Query reports true): Get never hands out an event whose last
// recorded work is still pending.
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
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if max <= 0 {
		max = 1024
	}
	return &EventPool{dev: d, opts: opts, max: max}, nil
}

// Get returns an idle event of the pool, or a new one.
func (p *EventPool) Get() (*Event, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, closedErr("get event from pool", "pool")
	}
	for i := len(p.free) - 1; i >= 0; i-- {
		e := p.free[i]
		if e.recorded.Load() {
			if done, err := e.Query(); err != nil || !done {
				continue // its work is pending: leave it for later
			}
		}
		p.free = append(p.free[:i], p.free[i+1:]...)
		p.mu.Unlock()
		e.recorded.Store(false)
		return e, nil
	}
	p.mu.Unlock()
	return p.dev.NewEvent(p.opts)
}

// Put returns an event to the pool. Events of another device or other
// options, closed events, and events beyond the pool's size are closed or
// dropped instead. The caller must not use e after Put.
func (p *EventPool) Put(e *Event) {
	if e == nil || e.dev.p != p.dev.p || e.opts != p.opts || e.imported {
		if e != nil {
			e.Close()
		}
		return
	}
	p.mu.Lock()
	if p.closed || len(p.free) >= p.max || e.g.closed() {
		p.mu.Unlock()
		e.Close()
		return
	}
	p.free = append(p.free, e)
	p.mu.Unlock()
}

// Len is the number of idle events in the pool.
func (p *EventPool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// Close destroys the idle events; events handed out stay valid and are
// closed when Put back. It is idempotent.
func (p *EventPool) Close() error {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	var first error
	for _, e := range free {
		if err := e.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
