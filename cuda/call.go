package cuda

import (
	"context"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// The two-tier call. Record, Query, Sync, Sub and Wait on an event, and a
// stream's Wait, Sync and Query, each make their hazard call first (tier
// one, in the method: one cgo crossing holding the objects' state words,
// lifetime.go), and return at once where it answers success. Everything else
// is call.run, written once: the flush the hazard call asks for, its other
// answers (not ready, refused because an object is closing), and where it
// did not answer (no hazard slot, a default stream, a driver error: the
// driver is asked again with the context current) tier two, the counted
// call: the objects counted in, the checks, the driver call, the objects
// counted out.

// operand is an object a call holds: its handle, its context, and how
// errors name it.
type operand struct {
	r    *handle   // nil for a nil or zero object
	p    *ctxState // its context (set where enterPair needs it)
	name string    // "event", "start event", "stream", "device"
	// viaDevice: the object is closed only by its device's Close (a
	// default stream, which shares its Device's handle).
	viaDevice bool
}

// enter counts a call in on o; the error says why it cannot.
func (o operand) enter(op string) error {
	// Handle.Enter's count, here so that enter inlines: the counted
	// calls' path.
	if o.r != nil && o.r.State.Add(1)&closing == 0 {
		return nil
	}
	return o.enterErr(op)
}

// enterErr is the error of a failed enter: a nil or zero object, or a
// closed one (then it takes back the count enter took, Handle.Exit).
func (o operand) enterErr(op string) error {
	if o.r == nil {
		return invalidErr(op, o.name)
	}
	o.r.Exit()
	return o.unusable(op)
}

// enterPair enters a call's receiver recv, then its argument arg, for op
// (recv.r.Exit and arg.r.Exit end them): two objects that must be of one
// context, whose operands hold it in p (a stream's, a graph's and a graph
// exec's do). A nil or zero arg is refused first; where either cannot be
// entered, or they are of two contexts (ErrWrongDevice, naming arg first,
// with fix saying how to mend it), it returns the error with neither
// entered.
func enterPair(op string, recv, arg operand, fix string) error {
	if arg.r == nil {
		return invalidErr(op, arg.name)
	}
	if err := recv.enter(op); err != nil {
		return err
	}
	if err := arg.enter(op); err != nil {
		recv.r.Exit()
		return err
	}
	if recv.p != arg.p && recv.p.ctx != arg.p.ctx {
		arg.r.Exit()
		recv.r.Exit()
		return &Error{Op: op, Detail: whose("the "+arg.name, arg.p, "the "+recv.name, recv.p), Fix: fix, Err: ErrWrongDevice}
	}
	return nil
}

// unusable is the error of a call on o once it is closed.
func (o operand) unusable(op string) error {
	if o.viaDevice || o.r.ByDevice() {
		return closedErr(op, o.name+"'s device")
	}
	return closedErr(op, o.name)
}

// opWait is Event.Wait's counted call: the wait of wait.go.
const opWait = lifetime.OpTest + 1

// call is one two-tier call past its hazard call.
type call struct {
	op   int    // a hazard Op, or opWait: which driver call
	name string // the operation, for errors
	e    *Event // the event (Sub's end event)
	e2   *Event // Sub's start event
	s    *Stream
	f    uint32          // record or wait flags
	ctx  context.Context // Wait's
	ms   float32         // Sub's answer
}

// operands are the call's objects in the order they are counted in and
// named when refused: the event before the stream for a record, the
// stream before the event for a stream's wait, the end event before the
// start event for Sub.
func (c *call) operands() (a, b operand) {
	switch c.op {
	case lifetime.OpRecord, lifetime.OpRecordFlags:
		return c.e.operand("event"), c.s.operand("stream")
	case lifetime.OpElapsed:
		return c.e.operand("end event"), c.e2.operand("start event")
	case lifetime.OpStreamWait:
		return c.s.operand("stream"), c.e.operand("event")
	case lifetime.OpStreamQuery, lifetime.OpStreamSync:
		return c.s.operand("stream"), operand{}
	}
	return c.e.operand("event"), operand{}
}

// run is the call past its hazard call's result r (noHot where none was
// made). It returns 0 or notReady (for a query), or the error.
func (c *call) run(r int32) (int32, error) {
	a, b := c.operands()
	if r != noHot {
		switch res := lifetime.Settle(r, a.r, b.r); {
		case res == 0:
			return 0, nil
		case res == notReady && (c.op == lifetime.OpQuery || c.op == lifetime.OpStreamQuery):
			return notReady, nil
		case res == notReady && c.op == lifetime.OpElapsed:
			return notReady, c.notReady()
		case res == lifetime.Refused:
			if b.r == nil || a.r.Closed() {
				return 0, a.unusable(c.name)
			}
			return 0, b.unusable(c.name)
		}
		// No slot, or an error: the counted call, which makes the
		// context current where the driver needs it.
	}
	if err := a.enter(c.name); err != nil {
		return 0, err
	}
	if b.name != "" {
		if err := b.enter(c.name); err != nil {
			a.r.Exit()
			return 0, err
		}
	}
	err := c.check()
	res := int32(0)
	if err == nil {
		res, err = c.counted()
	}
	if b.r != nil {
		b.r.Exit()
	}
	if c.op == lifetime.OpRecord || c.op == lifetime.OpRecordFlags {
		a.r.RecordExit() // marked recorded even if it failed: its reuse asks the driver
	} else {
		a.r.Exit()
	}
	return res, err
}

// check is what the counted call checks with its objects held.
func (c *call) check() error {
	e, s, start := c.e, c.s, c.e2
	switch c.op {
	case lifetime.OpRecord, lifetime.OpRecordFlags:
		if s.p != e.p && s.p.ctx != e.p.ctx {
			return &Error{Op: c.name, Detail: whose("the event", e.p, "the stream", s.p),
				Fix: "create the event in the stream's context (on its Device), or use Stream.Wait to order work across devices and contexts", Err: ErrWrongDevice}
		}
	case lifetime.OpElapsed:
		if !start.opts.Timing || !e.opts.Timing || start.p != e.p && start.p.ctx != e.p.ctx || !start.recorded.Load() || !e.recorded.Load() {
			return e.timingErr(c.name, start)
		}
	}
	return nil
}

// counted is the driver call of tier two (hotcalls.go: without making the
// context current, and with it where the driver refuses).
func (c *call) counted() (int32, error) {
	if c.f != 0 {
		// The only flags taken (RecordExternal, WaitExternal) make, during
		// capture, a graph node that records or waits on the event's
		// handle at every launch, uncounted: never reuse it.
		c.e.r.Set(noReuse)
	}
	if c.op == opWait {
		return 0, c.e.wait(c.ctx)
	}
	ms, err := countedCalls[c.op](c.e, c.e2, c.s, c.f)
	c.ms = ms
	if err == driver.ErrorNotReady && c.op == lifetime.OpElapsed {
		return notReady, c.notReady()
	}
	if err == driver.ErrorNotReady && (c.op == lifetime.OpQuery || c.op == lifetime.OpStreamQuery) {
		return notReady, nil
	}
	return 0, driverErr(c.name, err)
}

// countedCalls are the driver calls of tier two, by hazard Op. They take
// the call's fields, never the call: what a function value takes escapes,
// and the call lives on its method's stack.
var countedCalls = [...]func(e, e2 *Event, s *Stream, f uint32) (float32, error){
	lifetime.OpRecord: func(e, _ *Event, s *Stream, _ uint32) (float32, error) { return 0, eventRecord(e.p.ctx, e.h, s.h) },
	lifetime.OpRecordFlags: func(e, _ *Event, s *Stream, f uint32) (float32, error) {
		return 0, eventRecordWithFlags(e.p.ctx, e.h, s.h, driver.EventRecordFlags(f))
	},
	lifetime.OpQuery: func(e, _ *Event, _ *Stream, _ uint32) (float32, error) { return 0, eventQuery(e.p.ctx, e.h) },
	lifetime.OpSync:  func(e, _ *Event, _ *Stream, _ uint32) (float32, error) { return 0, eventSynchronize(e.p.ctx, e.h) },
	lifetime.OpElapsed: func(e, start *Event, _ *Stream, _ uint32) (float32, error) {
		return eventElapsedTime(e.p.ctx, start.h, e.h)
	},
	lifetime.OpStreamWait: func(e, _ *Event, s *Stream, f uint32) (float32, error) {
		return 0, streamWaitEvent(s.p.ctx, s.h, e.h, driver.EventWaitFlags(f))
	},
	lifetime.OpStreamQuery: func(_, _ *Event, s *Stream, _ uint32) (float32, error) { return 0, streamQuery(s.p.ctx, s.h) },
	lifetime.OpStreamSync:  func(_, _ *Event, s *Stream, _ uint32) (float32, error) { return 0, streamSynchronize(s.p.ctx, s.h) },
}

// notReady is Sub's error for work not complete.
func (c *call) notReady() error {
	return &Error{Op: c.name, Detail: "one or both events have not completed",
		Fix: "call Sync or Wait on the end event first", Err: ErrNotReady}
}

// elapsed is Sub's answer in milliseconds as a Duration.
func elapsedTime(ms float32) time.Duration {
	return time.Duration(float64(ms) * float64(time.Millisecond))
}
