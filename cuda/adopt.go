package cuda

import (
	"fmt"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// Adopting handles made elsewhere: by C or C++ code called through cgo,
// another binding, or a framework. Who owns what:
//
//   - AdoptContext's Device, AdoptStream's Stream and AdoptEvent's Event are
//     wrappers. Close releases the wrapper (later calls on it return
//     ErrClosed) and never destroys, releases or pops the handle: its
//     creator does that, after closing the wrappers (a context, once the
//     Device's Done channel is closed).
//   - Streams and events made through an adopted Device (NewStream, NewEvent,
//     RecordEvent) are this package's, as on any Device: their
//     Close destroys them.
//   - The handle must stay valid while its wrapper is in use; using a
//     wrapper of a destroyed handle is what using the handle would be in C.

// adopted holds the state of each context adopted with AdoptContext that is
// not a primary context held by GetDevice, so that Devices adopting one
// context share it (their objects work together). Guarded by primariesMu.
var adopted = map[driver.Context]*ctxState{}

// AdoptContext returns a Device for a context made elsewhere, such as one
// from cuCtxCreate, so that its streams and events can be adopted
// (AdoptStream, AdoptEvent) and new ones made in it. Every call makes the
// context current inside its own cgo call, as for a primary context.
//
// The Device does not own the context: Close closes the Device, its default
// streams and its adopted wrappers at once, and, once the last Device of the
// context is closed, the streams and events made through it (as Close does
// for a primary context), but never releases or destroys the context. The
// context must outlive the Devices, whatever work they queued and the
// package's destroys of its objects, which Close leaves to the package's
// flusher goroutine: destroy it once Done's channel is closed. Devices
// adopting the same context share it, and so does an open Device from GetDevice whose primary context ctx is (that
// primary context is then released, as GetDevice's retain is owed, once its
// last Device of either kind is closed). For a device's primary context
// GetDevice is simpler: adopt streams and events on it with
// Device.AdoptStream and Device.AdoptEvent.
//
// The context is checked by asking the driver for its device. A nil ctx is
// an error matching ErrInvalid and driver.ErrorInvalidContext.
func AdoptContext(ctx driver.Context) (*Device, error) {
	const op = "adopt context"
	if ctx == 0 {
		return nil, &Error{Op: op, Detail: "the context handle is nil",
			Fix: "pass a context from cuCtxCreate (for a device's primary context, use cuda.GetDevice)", Err: nilHandle{driver.ErrorInvalidContext}}
	}
	if err := initDriver(); err != nil {
		return nil, err
	}
	dev, err := driver.CtxGetDeviceCtx(ctx)
	if err != nil {
		return nil, driverErr(op+": ask the context for its device", err)
	}
	ordinal, err := ordinalOf(dev)
	if err != nil {
		return nil, err
	}
	primariesMu.Lock()
	defer primariesMu.Unlock()
	for c, q := range adopted {
		q.life.Mu.Lock()
		if q.life.Closing {
			delete(adopted, c) // its Devices are closed; the handle may be reused
		}
		q.life.Mu.Unlock()
	}
	// Share an open ctxState of this context, GetDevice's or adopted.
	for _, q := range []*ctxState{adopted[ctx], primaries[ordinal]} {
		if q != nil && q.ctx == ctx && q.openDevice() {
			return newDevice(q), nil
		}
	}
	p := newCtxState(ordinal, dev, ctx, true)
	adopted[ctx] = p
	return newDevice(p), nil
}

// streamContext asks the driver for a stream's context (cuStreamGetCtx),
// with ctx current; a variable so that tests without a driver can answer.
var streamContext = driver.StreamGetCtxCtx

// nilHandle is the cause of a nil handle argument (a context, an event):
// it matches both ErrInvalid, as every nil argument does, and the driver's
// result for it (driver.ErrorInvalidContext, ErrInvalidHandle), which is
// what the driver would say.
type nilHandle struct{ r driver.Result }

func (nilHandle) Error() string { return ErrInvalid.Error() }
func (e nilHandle) Is(target error) bool {
	return target == ErrInvalid || target == error(e.r)
}

// ordinalOf finds the ordinal of a driver device handle.
func ordinalOf(dev driver.Device) (int, error) {
	n, err := driver.DeviceGetCount()
	if err != nil {
		return 0, driverErr("adopt context: count devices", err)
	}
	for i := int32(0); i < n; i++ {
		if h, err := driver.DeviceGet(i); err == nil && h == dev {
			return int(i), nil
		}
	}
	return 0, &Error{Op: "adopt context", Detail: fmt.Sprintf("the context's device (handle %d) is none of the driver's %d devices", dev, n),
		Fix: "pass a context of this process's driver", Err: driver.ErrorInvalidDevice}
}

// AdoptStream wraps a stream made elsewhere in d's context, so that it
// records, waits, synchronises, queries and spins like a stream of NewStream
// (with the synchronisation its creator chose). The wrapper does not own the
// stream: Close releases the wrapper and never destroys the stream; it never
// blocks, and calls in flight on the wrapper finish normally. Closing d
// closes the wrapper (later calls return ErrClosed), as for the default
// streams. A wrapper never closed is released by the garbage collector,
// without counting in Leaked.
//
// h must belong to d's context (the driver refuses to record an event of one
// context on a stream of another): AdoptStream asks the driver
// (cuStreamGetCtx), and a stream of another context is an error matching
// ErrWrongDevice naming both contexts. A C library's CUstream, a pointer,
// converts as driver.Stream(uintptr(unsafe.Pointer(cStream))), and a uintptr
// as driver.Stream(p). The special handles 0 (NULL), 0x1 (CU_STREAM_LEGACY)
// and 0x2 (CU_STREAM_PER_THREAD) mean what they mean to the driver; see
// DefaultStream and PerThreadStream. A nil or zero d is an error matching
// ErrInvalid; a closed one, ErrClosed.
func (d *Device) AdoptStream(h driver.Stream) (*Stream, error) {
	const op = "adopt stream"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	if !defaultStream(h) {
		// The driver would refuse every record of d's events on it with
		// CUDA_ERROR_INVALID_HANDLE: say what is wrong now instead.
		ctx, err := streamContext(d.p.ctx, h)
		if err != nil {
			return nil, driverErr(op+": ask the stream for its context", err)
		}
		if ctx != d.p.ctx {
			return nil, &Error{Op: op, Detail: fmt.Sprintf("the stream %#x belongs to context %#x, and device %d's Device is of context %#x", uintptr(h), uintptr(ctx), d.p.ordinal, uintptr(d.p.ctx)),
				Fix: "adopt the stream on a Device of its context (cuda.AdoptContext for a context of its own, cuda.GetDevice for a primary context)", Err: ErrWrongDevice}
		}
	}
	r, err := d.adoptHandle(op, uintptr(h))
	if err != nil {
		return nil, err
	}
	s := newStream(d, h, r, false)
	s.cleanup = backstop(s, r)
	return s, nil
}

// AdoptEvent wraps an event made elsewhere in d's context, so that it
// records, waits, synchronises, queries and times like an event of NewEvent.
// The wrapper does not own the event: Close releases the wrapper and never
// destroys the event; it never blocks, and calls in flight on the wrapper
// finish normally. Closing d closes the wrapper (later calls return
// ErrClosed). A wrapper never closed is released by the garbage collector,
// without counting in Leaked.
//
// opts says how the event was created: Timing for an event created without
// CU_EVENT_DISABLE_TIMING, BlockingSync for CU_EVENT_BLOCKING_SYNC, IPC for
// CU_EVENT_INTERPROCESS. The driver cannot report an event's flags, so opts
// is the caller's word: it decides whether Sub asks the driver (Timing),
// how Wait waits (BlockingSync) and whether IPCHandle asks the driver (IPC).
// Where it is wrong the driver's error says so (CUDA_ERROR_INVALID_HANDLE
// from Sub on an event without timing). The event may have been recorded by
// its creator, so it counts as recorded: Sub on one never recorded returns
// the driver's error rather than ErrNotRecorded.
//
// h converts from a C library's CUevent as
// driver.Event(uintptr(unsafe.Pointer(cEvent))). A nil handle is an error
// matching both ErrInvalid (as every nil argument) and ErrInvalidHandle; a
// nil or zero d, ErrInvalid; a closed one, ErrClosed.
func (d *Device) AdoptEvent(h driver.Event, opts EventOptions) (*Event, error) {
	const op = "adopt event"
	if d == nil || d.p == nil {
		return nil, invalidErr(op, "device")
	}
	if err := opts.Validate(); err != nil {
		return nil, &Error{Op: op, Detail: "no driver event has both IPC and Timing (the driver requires CU_EVENT_DISABLE_TIMING with CU_EVENT_INTERPROCESS)",
			Fix: "pass the options the event was created with", Err: ErrInvalidOptions}
	}
	return adopt(d, op, "event", "an event from cuEventCreate", uintptr(h), func(r *handle) *Event {
		// imported keeps its handle from reuse; the handle's kind keeps its
		// finish from destroying it.
		e := &Event{w: r.State, h: h, p: d.p, dev: d, opts: opts, imported: true, r: r}
		e.recorded.Store(true)
		backstop(e, r) // Close leaves it: run after a Close, it finds the handle closed
		return e
	})
}

// adopt wraps h, a what made elsewhere (from says where such handles come
// from, for the error of a nil one), in d's context: wrap makes the
// wrapper around its lifetime handle (adoptHandle), with a call in flight
// on d. A nil or zero d is an error matching ErrInvalid; a closed one,
// ErrClosed; a nil h, ErrInvalid and ErrInvalidHandle.
func adopt[T any](d *Device, op, what, from string, h uintptr, wrap func(*handle) T) (T, error) {
	var none T
	if d == nil || d.p == nil {
		return none, invalidErr(op, "device")
	}
	if h == 0 {
		return none, &Error{Op: op, Detail: "the " + what + " handle is nil", Fix: "pass " + from, Err: nilHandle{driver.ErrorInvalidHandle}}
	}
	if err := d.enter(op); err != nil {
		return none, err
	}
	defer d.h.Exit()
	r, err := d.adoptHandle(op, h)
	if err != nil {
		return none, err
	}
	return wrap(r), nil
}

// describe is the String of an object of p's context (what, of handle h),
// adopted or not.
func describe(what string, h uintptr, p *ctxState, adopted bool) string {
	if adopted {
		what = "adopted " + what
	}
	return fmt.Sprintf("%s %#x of device %d", what, h, p.ordinal)
}

// adoptHandle makes the lifetime handle of a wrapper of d around the driver
// handle h, which it never destroys, listed in d's adopted objects (Close of
// d closes it). With a call in flight on d.
func (d *Device) adoptHandle(op string, h uintptr) (*handle, error) {
	d.p.life.Throttle()
	return d.register(op, "device", h, lifetime.KindAdopted, func() {}) // the handle is its creator's
}
