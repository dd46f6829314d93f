package cuda

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
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
// It is safe for concurrent use, Close included. The zero value and a nil
// *Event are not usable: methods that return an error return one matching
// ErrInvalid, the accessors return zero values.
type Event struct {
	// What the hot calls read first, on one cache line: an Event is 64
	// bytes, and a slab of 64 of them (4096 bytes, recycle.go) is allocated
	// page-aligned by the runtime's size classes.
	w        *atomic.Int64 // the state word (r.State), in C memory
	h        driver.Event  // the driver handle
	p        *ctxState     // its context
	recorded atomic.Bool
	r        *handle
	dev      *Device
	opts     EventOptions
	imported bool
	ipc      *IPCEventHandle // an imported event's: what IPCHandle returns
}

// An Event is one cache line.
var (
	_ [64 - unsafe.Sizeof(Event{})]byte
	_ [unsafe.Sizeof(Event{}) - 64]byte
)

// NewEvent creates an event on the device. It is created eagerly, so an
// event never recorded is complete (the driver's "empty set of work"). Its
// driver handle may be one kept from a closed event of the same options
// that was complete when it was retired (never recorded, or the driver's
// query said so): see recycle.go. So code that creates and closes an event
// per step (per kernel, per request) pays, in steady state, no driver call
// and no allocation for it, and needs no pool of its own.
func (d *Device) NewEvent(opts EventOptions) (*Event, error) {
	const op = "create event"
	f, err := opts.flags()
	if err != nil {
		return nil, err
	}
	if d == nil || d.p == nil {
		return nil, invalidErr(op, "device")
	}
	// A kept handle needs no driver call, so no call in flight on d: the
	// checks under the context's lock order it with d's Close, which marks
	// d before it takes the lock to close the context's objects.
	if e, err := d.p.reuseEvent(d, operand{r: &d.h, name: "device"}, opts, f, op); e != nil || err != nil {
		return e, err
	}
	if err := d.enter(op); err != nil { // the driver call keeps the context
		return nil, err
	}
	defer d.h.Exit()
	return d.p.createEvent(d, opts, f, op)
}

// reuseEvent is NewEvent's reuse of a kept driver handle (recycle.go), if
// there is one (nil, nil if not): hold is the object the caller creates
// through (its Device, or a stream for Stream.RecordEvent); closed, it
// refuses. Where none is kept and a batch of closed events waits for a
// flush, it flushes that batch first (lifetime's Help, if no flush is in
// progress), so that creating and closing in a loop costs no driver call.
func (p *ctxState) reuseEvent(d *Device, hold operand, opts EventOptions, f driver.EventFlags, op string) (*Event, error) {
	for try := 0; ; try++ {
		// No defer: this is create + close's hot path.
		p.life.Mu.Lock()
		if hold.r.Closed() || p.life.Closing {
			p.life.Mu.Unlock()
			return nil, hold.unusable(op)
		}
		var h uintptr
		if !opts.IPC { // never kept: another process may hold them
			h = p.life.Reuse(uint32(f))
		}
		var e *Event
		if h != 0 {
			if e = p.linkEvent(d, driver.Event(h), opts, f, false); e == nil {
				p.life.Keep(uint32(f), h) // popped just now: there is room
				p.life.Mu.Unlock()
				return nil, hostMemErr(op)
			}
		}
		p.life.Mu.Unlock()
		if e != nil || opts.IPC || try > 0 || !p.life.Help() {
			return e, nil
		}
	}
}

// createEvent is NewEvent's driver create, with a call in flight (on d or
// on a stream of p) keeping the context.
func (p *ctxState) createEvent(d *Device, opts EventOptions, f driver.EventFlags, op string) (*Event, error) {
	p.life.Throttle()
	h, err := driver.EventCreateCtx(p.ctx, f)
	if err != nil {
		return nil, driverErr(op, err)
	}
	return newEvent(d, h, opts, false, op)
}

// newEvent wraps a driver event opened by the caller (an imported IPC
// event), which holds a call in flight on d. If d's context is closing, it
// destroys h and returns ErrClosed.
func newEvent(d *Device, h driver.Event, opts EventOptions, imported bool, op string) (*Event, error) {
	f, _ := opts.flags()
	p := d.p
	p.life.Mu.Lock()
	if p.life.Closing {
		p.life.Mu.Unlock()
		_ = driver.EventDestroyCtx(p.ctx, h)
		return nil, closedErr(op, "device")
	}
	e := p.linkEvent(d, h, opts, f, imported)
	p.life.Mu.Unlock()
	if e == nil {
		_ = driver.EventDestroyCtx(p.ctx, h)
		return nil, hostMemErr(op)
	}
	return e, nil
}

// operand is e as an object of a call (call.go), named which in errors.
func (e *Event) operand(which string) operand {
	if e == nil || e.r == nil {
		return operand{name: which}
	}
	return operand{r: e.r, name: which}
}

// enter counts a call on the event in; e.r.Exit ends it.
func (e *Event) enter(op string) error { return e.operand("event").enter(op) }

// Record captures in e the work queued on s so far. See Stream.Record.
func (e *Event) Record(s *Stream, flags ...RecordFlag) error {
	// The hot path first: a hazard call (lifetime.go), which marks the event
	// recorded inside it; everything else in record.
	if len(flags) == 0 && e != nil && s != nil && e.w != nil && s.w != nil && s.p == e.p {
		// recorded is read before the driver call, which is likely to
		// evict e's line: once recorded, a record touches it no more.
		was := e.recorded.Load()
		r := lifetime.RecordEvent(lifetime.Addr(e.w), lifetime.Addr(s.w), uintptr(e.h), uintptr(s.h))
		if r == 0 {
			if !was {
				e.recorded.Store(true)
			}
			return nil
		}
		return e.record(s, r, nil)
	}
	return e.record(s, noHot, flags)
}

// noHot stands for the result of a hazard call not made.
const noHot = int32(-100)

// record is Record past a hot call that did not answer success: r is that
// call's result, or noHot where none was made.
func (e *Event) record(s *Stream, r int32, flags []RecordFlag) error {
	c := call{op: lifetime.OpRecord, name: "record event", e: e, s: s}
	var f driver.EventRecordFlags
	for _, x := range flags {
		f |= driver.EventRecordFlags(x)
	}
	if f&^driver.EventRecordFlags(RecordExternal) != 0 {
		return &Error{Op: c.name, Detail: fmt.Sprintf("unknown record flags %#x", uint32(f&^driver.EventRecordFlags(RecordExternal))),
			Fix: "pass only cuda.RecordExternal, or no flag", Err: ErrInvalidOptions}
	}
	if len(flags) > 0 {
		c.op, c.f = lifetime.OpRecordFlags, uint32(f)
	}
	if e == nil || e.r == nil {
		return invalidErr(c.name, "event")
	}
	if r == noHot && s != nil && s.w != nil && (s.p == e.p || s.p.ctx == e.p.ctx) {
		// The hazard call, made here with flags or across two primaries
		// of one context: it marks the event recorded inside it.
		if len(flags) == 0 {
			r = lifetime.RecordEvent(lifetime.Addr(e.w), lifetime.Addr(s.w), uintptr(e.h), uintptr(s.h))
		} else {
			if f&driver.EventRecordExternal != 0 {
				e.r.Set(noReuse) // see call.counted
			}
			r = lifetime.RecordU(lifetime.OpRecordFlags, lifetime.Addr(e.w), lifetime.Addr(s.w), uintptr(e.h), uintptr(s.h), uint32(f))
		}
	}
	if _, err := c.run(r); err != nil {
		return err
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
	// The hot path first: one hazard call (lifetime.go); the rest in call.run.
	r := noHot
	if e != nil && e.w != nil {
		// Pending work answers here too: a query right after a record
		// usually finds it pending (record + query).
		switch r = lifetime.Query(lifetime.Addr(e.w), uintptr(e.h)); r {
		case 0:
			return true, nil
		case notReady:
			return false, nil
		}
	}
	res, err := (&call{op: lifetime.OpQuery, name: "query event", e: e}).run(r)
	return res == 0 && err == nil, err
}

// Sync blocks until the work captured by the latest Record has completed,
// spinning or sleeping as the event was created (EventOptions.BlockingSync).
// It cannot be cancelled; see Wait.
func (e *Event) Sync() error {
	// The hot path first: a hazard query (lifetime.go), which the driver
	// answers for complete work about 20 ns sooner than its sync (on an
	// H100, docs/performance.md); the driver's sync, which spins or sleeps as the
	// event asks, only where the work is pending. The rest in call.run: a
	// query's answer other than not-ready (an error, a refusal, no slot)
	// reaches the counted sync, which reports the driver's own answer.
	r := noHot
	if e != nil && e.w != nil {
		if r = lifetime.Query(lifetime.Addr(e.w), uintptr(e.h)); r == 0 {
			return nil
		}
		if res, flush := lifetime.Split(r); res == notReady {
			if flush {
				lifetime.Settle(r, e.r, nil) // the flush the query asked for
			}
			if r = lifetime.Sync(lifetime.Addr(e.w), uintptr(e.h)); r == 0 {
				return nil
			}
		}
	}
	_, err := (&call{op: lifetime.OpSync, name: "synchronize event", e: e}).run(r)
	return err
}

// Sub returns the GPU time elapsed from start's record to e's, like
// time.Time.Sub. Both must have been created with Timing, recorded, and have
// completed; errors match ErrTimingDisabled, ErrNotRecorded and ErrNotReady.
// The driver measures with a resolution of about half a microsecond. With
// the 13.0 bindings on a driver from 12.8 it calls cuEventElapsedTime_v2,
// otherwise the original cuEventElapsedTime, which may also report an
// asynchronous error of earlier work where _v2 leaves that to Query and
// Sync (see hotcalls.go).
func (e *Event) Sub(start *Event) (time.Duration, error) {
	r, ms := noHot, float32(0)
	if e != nil && e.w != nil && start != nil && start.w != nil && start.opts.Timing && e.opts.Timing &&
		(start.p == e.p || start.p.ctx == e.p.ctx) && start.recorded.Load() && e.recorded.Load() {
		if ms, r = lifetime.Elapsed(lifetime.OpElapsed, lifetime.Addr(e.w), lifetime.Addr(start.w), uintptr(start.h), uintptr(e.h)); r == 0 {
			return elapsedTime(ms), nil
		}
	}
	c := call{op: lifetime.OpElapsed, name: "elapsed time between events", e: e, e2: start, ms: ms}
	if _, err := c.run(r); err != nil {
		return 0, err
	}
	return elapsedTime(c.ms), nil
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
	if start.dev.p.ctx != e.dev.p.ctx {
		return &Error{Op: op, Detail: whose("the start event", start.dev.p, "the end event", e.dev.p),
			Fix: "time with two events of one context (of one Device)", Err: ErrWrongDevice}
	}
	for i, x := range events {
		if !x.recorded.Load() {
			return &Error{Op: op, Detail: "the " + names[i] + " event was never recorded",
				Fix: "record both events on a stream before calling Sub", Err: ErrNotRecorded}
		}
	}
	return nil
}

// whose says where two objects of different contexts belong: by device, and
// where both are of one device (a primary context and an adopted one, or
// two adopted ones), by context too.
func whose(a string, pa *ctxState, b string, pb *ctxState) string {
	if pa.ordinal != pb.ordinal {
		return fmt.Sprintf("%s belongs to device %d and %s to device %d", a, pa.ordinal, b, pb.ordinal)
	}
	return fmt.Sprintf("%s belongs to device %d (context %#x) and %s to device %d (context %#x)",
		a, pa.ordinal, uintptr(pa.ctx), b, pb.ordinal, uintptr(pb.ctx))
}

// IPCHandle returns a handle another process passes to Device.OpenIPCEvent
// to use this event; it holds the event's options (BlockingSync). The
// event must have been created with IPC. For an event opened with
// OpenIPCEvent it returns the handle the event was opened with, unchanged
// (the driver cannot export an imported event), so that a process can pass
// on what it imported.
func (e *Event) IPCHandle() (IPCEventHandle, error) {
	const op = "get IPC event handle"
	if err := e.enter(op); err != nil {
		return IPCEventHandle{}, err
	}
	defer e.r.Exit()
	if !e.opts.IPC {
		return IPCEventHandle{}, &Error{Op: op, Detail: "the event was created without IPC",
			Fix: "create it with cuda.EventOptions{IPC: true}", Err: ErrInvalidOptions}
	}
	if e.ipc != nil {
		return *e.ipc, nil
	}
	h, err := driver.IPCGetEventHandleCtx(e.dev.p.ctx, e.h)
	if err != nil {
		return IPCEventHandle{}, driverErr(op, err)
	}
	return NewIPCEventHandle(h, e.opts), nil
}

// OpenIPCEvent opens an event exported by another process. The driver does
// not allow opening a handle in the process that exported it. The event
// reports the options the handle holds (Options and BlockingSync: IPC,
// the exporter's BlockingSync, no timing), and IPCHandle returns h, for
// passing it on. The driver opens it as an event without timing or
// blocking sync whatever the exporter chose (cuIpcOpenEventHandle), so Sync
// waits as the driver does for such an event (spinning), and Wait sleeps
// on a blocking event of its own after its first polls, as for any event
// without BlockingSync. Close releases this process's reference. If the exporting process exits before
// the event completes, the event never
// completes here (seen with driver 580): Wait with a deadline returns the
// context's error, Sync and a stream waiting on the event wait forever, and
// Close and Device.Close still return at once (the context's release then
// stays blocked in the driver, on a goroutine of its own). The zero
// IPCEventHandle is refused with ErrInvalid before the driver is called.
func (d *Device) OpenIPCEvent(h IPCEventHandle) (*Event, error) {
	const op = "open IPC event"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	if h == (IPCEventHandle{}) {
		d.h.Exit()
		return nil, &Error{Op: op, Detail: "the IPC handle is the zero value (64 zero bytes), which no event has",
			Fix: "pass the handle another process's Event.IPCHandle returned (decoded with UnmarshalText or UnmarshalBinary)", Err: ErrInvalid}
	}
	defer d.h.Exit()
	d.p.life.Throttle()
	dh := h.h
	ev, err := driver.IPCOpenEventHandleCtx(d.p.ctx, &dh)
	if err == driver.ErrorInvalidContext {
		return nil, &Error{Op: op, Detail: "the driver refused the handle, as it does for a handle exported by this same process",
			Fix: "open it in another process, or use the exported event itself here", Err: err}
	}
	if err != nil {
		return nil, driverErr(op, err)
	}
	// The driver's event is what cuIpcOpenEventHandle makes ("a locally
	// created event with CU_EVENT_DISABLE_TIMING"), whatever the exporter
	// chose: e.opts says so, for Wait's way of sleeping; Options and
	// BlockingSync report the exporter's choice, from the handle.
	e, err := newEvent(d, ev, EventOptions{IPC: true}, true, op)
	if err != nil {
		return nil, err
	}
	e.ipc = &h // before e is shared: read-only from now on
	return e, nil
}

// Close closes the event (for an adopted event, AdoptEvent, it releases
// only the wrapper, never the driver's event). It never blocks, never waits
// for another goroutine and calls the driver for nothing, and is idempotent
// (a second Close returns nil). It does not wait for pending work: the
// driver releases the event once that work completes. Calls on the event
// in flight in other goroutines (a Sync, a Wait) finish normally. The
// driver event is destroyed, or kept for a later NewEvent if it is known
// complete (recycle.go), once no call holds it, by a flush of the
// context's closed events, off the caller's path: the next NewEvent of the
// context that finds no kept handle once 64 closed events wait, or the
// package's flusher goroutine once 128 wait, a stream is closed, a call
// that held the event returns, or the context's last Device is closed
// (internal/lifetime). Close returns nil (a destroy's error, later, has no
// caller). Use after Close returns errors matching ErrClosed. A nil Event
// returns an error matching ErrInvalid.
func (e *Event) Close() error {
	if e == nil || e.r == nil {
		return invalidErr("destroy event", "event")
	}
	e.r.Close(false)
	return nil
}

// TimingEnabled reports whether the event records timestamps.
func (e *Event) TimingEnabled() bool { return e != nil && e.opts.Timing }

// BlockingSync reports whether waits on the event sleep rather than spin:
// whether it was created with BlockingSync, or for an imported event
// (OpenIPCEvent) whether its exporter's was.
func (e *Event) BlockingSync() bool { return e.Options().BlockingSync }

// IPCEnabled reports whether the event can be shared with other processes.
func (e *Event) IPCEnabled() bool { return e != nil && e.opts.IPC }

// Options returns the options the event was created with; for an imported
// event (OpenIPCEvent), the exporter's, as its handle holds them.
func (e *Event) Options() EventOptions {
	if e == nil {
		return EventOptions{}
	}
	if e.ipc != nil {
		return e.ipc.Options()
	}
	return e.opts
}

// Device is the event's device (the Device it was created from; nil for a
// nil Event).
func (e *Event) Device() *Device { return nilOr(e, func(e *Event) *Device { return e.dev }) }

// Handle is the driver handle (0 for a nil Event). It is valid until the
// event is closed. Work recorded through it is unknown to this package, so
// an event whose Handle was taken is destroyed by Close, never kept for
// reuse (recycle.go).
func (e *Event) Handle() driver.Event {
	if e == nil {
		return 0
	}
	if e.r != nil {
		e.r.Set(noReuse)
	}
	return e.h
}

// Recorded reports whether the event has been recorded (or was imported).
func (e *Event) Recorded() bool { return e != nil && e.recorded.Load() }

// String describes the event.
func (e *Event) String() string {
	if e == nil || e.r == nil {
		return "cuda event <invalid>"
	}
	o := e.Options()
	return fmt.Sprintf("event %#x of device %d (timing %v, blocking sync %v, IPC %v)", uintptr(e.h), e.dev.p.ordinal, o.Timing, o.BlockingSync, o.IPC)
}
