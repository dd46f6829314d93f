package cuda

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// RecordFlag changes how Record records an event.
type RecordFlag uint32

// RecordExternal makes Record, during stream capture, create an event record
// node in the graph instead of the default behaviour (CU_EVENT_RECORD_EXTERNAL).
// The driver rejects it outside capture.
const RecordExternal = RecordFlag(driver.EventRecordExternal)

// WaitFlag changes how Stream.Wait waits.
type WaitFlag uint32

// WaitExternal makes Stream.Wait, during stream capture, create an event wait
// node in the graph (CU_EVENT_WAIT_EXTERNAL). The driver rejects it outside
// capture.
const WaitExternal = WaitFlag(driver.EventWaitExternal)

// Stream is a queue of GPU work on one device. It is safe for concurrent
// use, Close included. The zero value and a nil *Stream are not usable:
// methods that return an error return one matching ErrInvalid, the
// accessors return zero values.
type Stream struct {
	// What the hot calls read first, on one cache line.
	w       *atomic.Int64 // r.State if calls on s may be hazard calls, else nil
	h       driver.Stream // the driver handle
	p       *ctxState     // its context
	owned   bool          // created by NewStream: Close destroys it
	foreign bool          // adopted (AdoptStream): Close releases only the wrapper
	r       *handle       // the stream's; the default streams' is their Device's
	dev     *Device
	cleanup runtime.Cleanup
}

// newStream makes a Stream of NewStream (owned) or AdoptStream.
func newStream(d *Device, h driver.Stream, r *handle, owned bool) *Stream {
	s := &Stream{dev: d, h: h, p: d.p, r: r, owned: owned, foreign: !owned}
	if !defaultStream(h) {
		// Not a default stream, which the driver resolves through the
		// current context: hazard calls.
		s.w = r.State
	}
	return s
}

// Device is the stream's device (nil for a nil Stream).
func (s *Stream) Device() *Device { return nilOr(s, func(s *Stream) *Device { return s.dev }) }

// Handle is the driver handle (0 for the default stream and a nil Stream).
func (s *Stream) Handle() driver.Stream {
	return nilOr(s, func(s *Stream) driver.Stream { return s.h })
}

// String describes the stream.
func (s *Stream) String() string {
	if s == nil || s.r == nil {
		return "cuda stream <invalid>"
	}
	switch {
	case s.isDefault() && s.h == streamPerThread:
		return fmt.Sprintf("per-thread default stream of device %d", s.dev.p.ordinal)
	case s.isDefault():
		return fmt.Sprintf("default stream of device %d", s.dev.p.ordinal)
	}
	return describe("stream", uintptr(s.h), s.dev.p, s.foreign)
}

// isDefault reports whether s is one of its Device's default streams
// (DefaultStream, PerThreadStream), which share the Device's handle.
func (s *Stream) isDefault() bool { return !s.owned && !s.foreign }

// operand is s as an object of a call (call.go), named which in errors.
func (s *Stream) operand(which string) operand {
	if s == nil || s.r == nil {
		return operand{name: which}
	}
	return operand{r: s.r, p: s.p, name: which, viaDevice: s.isDefault()}
}

// enter counts a call in flight on the stream; s.r.Exit ends it. It fails
// once the stream or its device is closed.
func (s *Stream) enter(op string) error { return s.operand("stream").enter(op) }

// Record captures in e the work queued on s so far; e completes when that
// work has. Recording again overwrites: Query, Sync, Wait and Sub then refer
// to the latest record. e must belong to s's device. Flags other than
// RecordExternal are refused with ErrInvalidOptions.
func (s *Stream) Record(e *Event, flags ...RecordFlag) error {
	return e.Record(s, flags...) // a nil or zero e: ErrInvalid naming the event
}

// Wait makes all work queued on s from now on wait for e to complete, without
// blocking the host. e may belong to another device. Flags other than
// WaitExternal are refused with ErrInvalidOptions.
func (s *Stream) Wait(e *Event, flags ...WaitFlag) error {
	const op = "stream wait for event"
	var f driver.EventWaitFlags
	for _, x := range flags {
		f |= driver.EventWaitFlags(x)
	}
	if f&^driver.EventWaitFlags(WaitExternal) != 0 {
		return &Error{Op: op, Detail: fmt.Sprintf("unknown wait flags %#x", uint32(f&^driver.EventWaitFlags(WaitExternal))),
			Fix: "pass only cuda.WaitExternal, or no flag", Err: ErrInvalidOptions}
	}
	r := noHot
	if f == 0 && s != nil && s.w != nil && e != nil && e.w != nil {
		if r = lifetime.Call2U(lifetime.OpStreamWait, lifetime.Addr(s.w), lifetime.Addr(e.w), uintptr(s.h), uintptr(e.h), 0); r == 0 {
			return nil // neither line touched after the driver call
		}
	}
	_, err := (&call{op: lifetime.OpStreamWait, name: op, e: e, s: s, f: uint32(f)}).run(r)
	return err
}

// RecordEvent creates an event on s's device with opts and records it on s,
// in one step (MAX's DeviceStream.record_event(), cuda.core's
// Stream.record() without an event). It works as long as s does: also on a
// stream whose Device was closed while another Device of its context is
// open (the event then reports that Device as its own, as s does).
func (s *Stream) RecordEvent(opts EventOptions) (*Event, error) {
	const op = "record a new event"
	f, err := opts.flags()
	if err != nil {
		return nil, err
	}
	if err := s.enter(op); err != nil { // keeps the context
		return nil, err
	}
	e, err := s.p.reuseEvent(s.dev, s.operand("stream"), opts, f, op)
	if e == nil && err == nil {
		e, err = s.p.createEvent(s.dev, opts, f, op)
	}
	s.r.Exit()
	return orClose(e, err, func(e *Event) error { return s.Record(e) })
}

// WaitStream makes all work queued on s from now on wait for the work queued
// on other so far (cuda.core's Stream.wait(stream)): it records a temporary
// event on other and waits for it.
func (s *Stream) WaitStream(other *Stream) error {
	const op = "stream wait for stream"
	if s == nil || s.r == nil {
		return invalidErr(op, "stream")
	}
	if other == nil || other.r == nil {
		return invalidErr(op, "other stream")
	}
	e, err := other.RecordEvent(EventOptions{})
	if err != nil {
		return err
	}
	defer e.Close()
	return s.Wait(e)
}

// Sync blocks until all work queued on s has completed.
func (s *Stream) Sync() error {
	r := noHot
	if s != nil && s.w != nil {
		if r = lifetime.Call1(lifetime.OpStreamSync, lifetime.Addr(s.w), uintptr(s.h)); r == 0 {
			return nil // s's line untouched after the driver call
		}
	}
	_, err := (&call{op: lifetime.OpStreamSync, name: "synchronize stream", s: s}).run(r)
	return err
}

// Query reports whether all work queued on s has completed: (false, nil)
// while work is pending.
func (s *Stream) Query() (bool, error) {
	r := noHot
	if s != nil && s.w != nil {
		switch r = lifetime.Call1(lifetime.OpStreamQuery, lifetime.Addr(s.w), uintptr(s.h)); r {
		case 0:
			return true, nil
		case notReady: // a busy stream's query
			return false, nil
		}
	}
	res, err := (&call{op: lifetime.OpStreamQuery, name: "query stream", s: s}).run(r)
	return res == 0 && err == nil, err
}

// Priority is the stream's scheduling priority (cuStreamGetPriority): what
// StreamOptions.Priority asked for, 0 for the default streams, and for an
// adopted stream what its creator chose. Lower numbers are higher
// priorities (Device.StreamPriorityRange).
func (s *Stream) Priority() (int, error) {
	const op = "stream priority"
	if err := s.enter(op); err != nil {
		return 0, err
	}
	p, err := driver.StreamGetPriorityCtx(s.dev.p.ctx, s.h)
	s.r.Exit()
	if err != nil {
		return 0, driverErr(op, err)
	}
	return int(p), nil
}

// Close destroys the stream. It never blocks, never waits for another
// goroutine and calls the driver for nothing, and is idempotent; work
// already queued still completes. Calls in flight on the stream in other
// goroutines finish normally, and the stream is destroyed by the package's
// flusher goroutine once none of them holds it (soon after Close, or after
// the last of them returns). Closing an adopted stream (AdoptStream)
// releases only the wrapper, never the driver's stream. Closing the
// default streams does nothing (they close with their device). It returns
// nil; a nil Stream returns an error matching ErrInvalid.
func (s *Stream) Close() error {
	if s == nil || s.r == nil {
		return invalidErr("destroy stream", "stream")
	}
	if s.isDefault() {
		return nil
	}
	if s.r.Close(false) {
		s.cleanup.Stop()
	}
	return nil
}
