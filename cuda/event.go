package cuda

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
)

// EventOptions choose what an event can do. The zero value is the cheapest
// event: no timing, spinning synchronisation, no IPC.
type EventOptions struct {
	// Timing makes the event record a timestamp, for Sub. Off by default:
	// events without timing are cheaper to record and wait for.
	Timing bool
	// BlockingSync makes Sync and Wait put the waiting thread to sleep until
	// the event completes instead of spinning on a CPU core
	// (CU_EVENT_BLOCKING_SYNC). Waking takes longer than spinning.
	BlockingSync bool
	// IPC makes the event shareable with other processes (IPCHandle). The
	// driver forbids timing on IPC events.
	IPC bool
}

func (o EventOptions) flags() (driver.EventFlags, error) {
	var f driver.EventFlags
	if !o.Timing {
		f |= driver.EventDisableTiming
	}
	if o.BlockingSync {
		f |= driver.EventBlockingSync
	}
	if o.IPC {
		if o.Timing {
			return 0, &Error{Op: "create event", Detail: "an IPC event cannot record timing (the driver requires CU_EVENT_DISABLE_TIMING with CU_EVENT_INTERPROCESS)",
				Fix: "drop Timing, or drop IPC and time in each process", Err: ErrInvalidOptions}
		}
		f |= driver.EventInterprocess
	}
	return f, nil
}

// Validate reports whether the options can go together.
func (o EventOptions) Validate() error {
	_, err := o.flags()
	return err
}

// Event marks a point in a stream's work, for ordering, waiting and timing.
// It is safe for concurrent use; Close waits for calls in flight on it.
type Event struct {
	dev      *Device
	h        driver.Event
	opts     EventOptions
	imported bool
	recorded atomic.Bool
	g        guard
	flags    driver.EventFlags
	st       *slabState // its slab's backstop state; slot is its index there
	slot     int
}

// NewEvent creates an event on the device. It is created eagerly, so an
// event never recorded is complete (the driver's "empty set of work"). The
// driver handle may be one of an event of the same options closed without
// ever being recorded (see recycle.go).
func (d *Device) NewEvent(opts EventOptions) (*Event, error) {
	const op = "create event"
	f, err := opts.flags()
	if err != nil {
		return nil, err
	}
	if d.closed.Load() {
		return nil, closedErr(op, "device")
	}
	e, st, i, h := d.p.events.take(d.p, f, !opts.IPC)
	if h == 0 {
		if h, err = driver.EventCreateCtx(d.p.ctx, f); err != nil {
			return nil, driverErr(op, err) // the slot stays unused
		}
	}
	e.init(d, h, opts, f, false, st, i)
	return e, nil
}

// newEvent wraps a driver handle already made (an imported IPC event).
func newEvent(d *Device, h driver.Event, opts EventOptions, imported bool) *Event {
	f, _ := opts.flags()
	e, st, i, _ := d.p.events.take(d.p, f, false)
	e.init(d, h, opts, f, imported, st, i)
	return e
}

func (e *Event) init(d *Device, h driver.Event, opts EventOptions, f driver.EventFlags, imported bool, st *slabState, i int) {
	e.dev, e.h, e.opts, e.flags, e.imported, e.st, e.slot = d, h, opts, f, imported, st, i
	if imported {
		e.recorded.Store(true) // recorded by the exporting process
	}
	st.h[i].Store(uintptr(h))
}

// acquire counts a call in flight; it fails once the event is closed or its
// device's context is gone.
func (e *Event) acquire() bool {
	if !e.g.enter() {
		return false
	}
	if !e.dev.p.alive() {
		e.g.exit()
		return false
	}
	return true
}

// unusable is the error of a failed acquire: closed, or its device closed.
func (e *Event) unusable(op, which string) error {
	if !e.g.closed() && !e.dev.p.alive() {
		return closedErr(op, which+"'s device")
	}
	return closedErr(op, which)
}

func (e *Event) release() { e.g.exit() }

// Record captures in e the work queued on s so far. See Stream.Record.
func (e *Event) Record(s *Stream, flags ...RecordFlag) error {
	const op = "record event"
	if err := s.acquire(op); err != nil {
		return err
	}
	defer s.release()
	if s.dev.p != e.dev.p {
		return &Error{Op: op, Detail: fmt.Sprintf("the event belongs to device %d and the stream to device %d", e.dev.p.ordinal, s.dev.p.ordinal),
			Fix: "create the event on the stream's device, or use Stream.Wait to order work across devices", Err: ErrWrongDevice}
	}
	if !e.acquire() {
		return e.unusable(op, "event")
	}
	var err error
	if len(flags) == 0 {
		err = eventRecord(e.dev.p, e.h, s.h)
	} else {
		var f driver.EventRecordFlags
		for _, x := range flags {
			f |= driver.EventRecordFlags(x)
		}
		err = driver.EventRecordWithFlagsCtx(e.dev.p.ctx, e.h, s.h, f)
	}
	e.release()
	if err != nil {
		return driverErr(op, err)
	}
	if !e.recorded.Load() {
		e.recorded.Store(true)
	}
	return nil
}

// Query reports whether the work captured by the latest Record has
// completed: (false, nil) while it is pending. An event never recorded is
// complete.
func (e *Event) Query() (bool, error) {
	if !e.acquire() {
		return false, e.unusable("query event", "event")
	}
	err := eventQuery(e.dev.p, e.h)
	e.release()
	if err == nil {
		return true, nil
	}
	if err == driver.ErrorNotReady {
		return false, nil
	}
	return false, driverErr("query event", err)
}

// Sync blocks until the work captured by the latest Record has completed,
// spinning or sleeping as the event was created (EventOptions.BlockingSync).
// It cannot be cancelled; see Wait.
func (e *Event) Sync() error {
	if !e.acquire() {
		return e.unusable("synchronize event", "event")
	}
	err := eventSync(e.dev.p, e.h)
	e.release()
	if err != nil {
		return driverErr("synchronize event", err)
	}
	return nil
}

// Sub returns the GPU time elapsed from start's record to e's, like
// time.Time.Sub. Both must have been created with Timing, recorded, and have
// completed; errors match ErrTimingDisabled, ErrNotRecorded and ErrNotReady.
// The driver measures with a resolution of about half a microsecond.
func (e *Event) Sub(start *Event) (time.Duration, error) {
	const op = "elapsed time between events"
	if !start.opts.Timing || !e.opts.Timing || start.dev.p != e.dev.p || !start.recorded.Load() || !e.recorded.Load() {
		if err := e.timingErr(op, start); err != nil {
			return 0, err
		}
	}
	if !e.acquire() {
		return 0, e.unusable(op, "end event")
	}
	if !start.g.enter() { // same device as e, whose context acquire found alive
		e.release()
		return 0, start.unusable(op, "start event")
	}
	ms, err := driver.EventElapsedTimeCtx(e.dev.p.ctx, start.h, e.h)
	start.release()
	e.release()
	if err != nil {
		if err == driver.ErrorNotReady {
			return 0, &Error{Op: op, Detail: "one or both events have not completed",
				Fix: "call Sync or Wait on the end event first", Err: ErrNotReady}
		}
		return 0, driverErr(op, err)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// timingErr says why Sub cannot ask the driver: the first of timing
// disabled, another device, or never recorded, start event first. It is nil
// if nothing is wrong by the time it looks.
func (e *Event) timingErr(op string, start *Event) error {
	events := [2]*Event{start, e}
	names := [2]string{"start", "end"}
	for i, x := range events {
		if !x.opts.Timing {
			return &Error{Op: op, Detail: "the " + names[i] + " event was created without timing",
				Fix: "create both events with cuda.EventOptions{Timing: true}", Err: ErrTimingDisabled}
		}
	}
	if start.dev.p != e.dev.p {
		return &Error{Op: op, Detail: fmt.Sprintf("the start event belongs to device %d and the end event to device %d", start.dev.p.ordinal, e.dev.p.ordinal),
			Fix: "time with two events of one device", Err: ErrWrongDevice}
	}
	for i, x := range events {
		if !x.recorded.Load() {
			return &Error{Op: op, Detail: "the " + names[i] + " event was never recorded",
				Fix: "record both events on a stream before calling Sub", Err: ErrNotRecorded}
		}
	}
	return nil
}

// IPCHandle returns a handle another process passes to Device.OpenIPCEvent
// to use this event. The event must have been created with IPC.
func (e *Event) IPCHandle() (IPCEventHandle, error) {
	const op = "get IPC event handle"
	if !e.opts.IPC {
		return IPCEventHandle{}, &Error{Op: op, Detail: "the event was created without IPC",
			Fix: "create it with cuda.EventOptions{IPC: true}", Err: ErrInvalidOptions}
	}
	if !e.acquire() {
		return IPCEventHandle{}, e.unusable(op, "event")
	}
	defer e.release()
	h, err := driver.IPCGetEventHandleCtx(e.dev.p.ctx, e.h)
	if err != nil {
		return IPCEventHandle{}, driverErr(op, err)
	}
	return IPCEventHandle(h), nil
}

// IPCEventHandle is an opaque handle that names an IPC event across
// processes. Send its bytes to the other process.
type IPCEventHandle driver.IPCEventHandle

// OpenIPCEvent opens an event exported by another process. The driver does
// not allow opening a handle in the process that exported it. The event has
// IPC set and no timing; Close releases this process's reference.
func (d *Device) OpenIPCEvent(h IPCEventHandle) (*Event, error) {
	const op = "open IPC event"
	if d.closed.Load() {
		return nil, closedErr(op, "device")
	}
	dh := driver.IPCEventHandle(h)
	ev, err := driver.IPCOpenEventHandleCtx(d.p.ctx, &dh)
	if err == driver.ErrorInvalidContext {
		return nil, &Error{Op: op, Detail: "the driver refused the handle, as it does for a handle exported by this same process",
			Fix: "open it in another process, or use the exported event itself here", Err: err}
	}
	if err != nil {
		return nil, driverErr(op, err)
	}
	return newEvent(d, ev, EventOptions{IPC: true}, true), nil
}

// Close destroys the event. It is idempotent and does not wait for pending
// work: the driver releases the event once that work completes. It waits
// for calls on the event in flight in other goroutines (such as Sync) to
// return. Use after Close returns errors matching ErrClosed.
func (e *Event) Close() error {
	if !e.g.close() {
		return nil
	}
	if e.st.h[e.slot].Swap(0) == 0 {
		return nil // released by its slab's backstop: cannot happen while e is reachable
	}
	p := e.dev.p
	if !p.alive() {
		return nil // the context, and its events, are gone
	}
	// Never recorded: no work, so the handle is as good as a new one.
	if !e.recorded.Load() && !e.imported && !e.opts.IPC && p.events.keep(e.flags, e.h) {
		return nil
	}
	return driverErr("destroy event", driver.EventDestroyCtx(p.ctx, e.h))
}

// TimingEnabled reports whether the event records timestamps.
func (e *Event) TimingEnabled() bool { return e.opts.Timing }

// BlockingSync reports whether waits on the event sleep rather than spin.
func (e *Event) BlockingSync() bool { return e.opts.BlockingSync }

// IPCEnabled reports whether the event can be shared with other processes.
func (e *Event) IPCEnabled() bool { return e.opts.IPC }

// Options returns the options the event was created with.
func (e *Event) Options() EventOptions { return e.opts }

// Device is the event's device.
func (e *Event) Device() *Device { return e.dev }

// Handle is the driver handle.
func (e *Event) Handle() driver.Event { return e.h }

// Recorded reports whether the event has been recorded (or was imported).
func (e *Event) Recorded() bool { return e.recorded.Load() }

// String describes the event.
func (e *Event) String() string {
	return fmt.Sprintf("event %#x of device %d (timing %v, blocking sync %v, IPC %v)", uintptr(e.h), e.dev.p.ordinal, e.opts.Timing, e.opts.BlockingSync, e.opts.IPC)
}
