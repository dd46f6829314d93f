package cuda

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

var (
	initOnce sync.Once
	initErr  error
)

// initDriver loads the driver and calls cuInit once.
func initDriver() error {
	initOnce.Do(func() {
		if err := driver.Init(0); err != nil {
			initErr = driverErr("initialise the CUDA driver", err)
			return
		}
		setupHot()
	})
	return initErr
}

// DriverVersion is the CUDA version the installed driver supports (13000 for
// 13.0). Without a driver it returns an error matching ErrNoDriver.
func DriverVersion() (int, error) {
	v, err := driver.DriverVersion()
	return v, driverErr("driver version", err)
}

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	if err := initDriver(); err != nil {
		return 0, err
	}
	n, err := driver.DeviceGetCount()
	return int(n), driverErr("count devices", err)
}

// ctxState is the state of one context: one retain of a device's primary
// context, shared by the Device values of that ordinal opened while it is
// alive, or (foreign) a context adopted with AdoptContext, which this
// package never releases. Its parts, by concern: the context itself (here);
// its objects' lifetime (life: lifetime.go, internal/lifetime), released
// when its live count drops to zero after the last Device closed; its event
// slabs (events: recycle.go); its long Waits' waiters and spin (waits:
// waiter.go, wait.go).
type ctxState struct {
	ordinal int
	dev     driver.Device
	ctx     driver.Context
	foreign bool // adopted (AdoptContext): its creator destroys it

	// life.Mu guards life, devices and events, which change together: a
	// Device's Close closes what is open once devices drops to zero.
	life    lifetime.Domain
	devices int           // open Device values
	events  eventAlloc    // recycle.go
	waits   waitState     // waiter.go; its own lock
	slow    slowCalls     // lifetime.go: the calls that may wait for GPU work; its own lock
	staging stagingPool   // memory.go: page-locked memory of asynchronous copies; its own lock
	peers   sync.Map      // peer.go: the contexts (weak.Pointer[ctxState]) this one has peer access to
	done    chan struct{} // closed once released (Device.Done)
}

// newCtxState makes the state of a context with its first Device.
func newCtxState(ordinal int, dev driver.Device, ctx driver.Context, foreign bool) *ctxState {
	p := &ctxState{ordinal: ordinal, dev: dev, ctx: ctx, foreign: foreign, devices: 1, done: make(chan struct{})}
	p.life.Init(p, 1)
	return p
}

// openDevice counts one more Device of p; false once its last one closed.
func (p *ctxState) openDevice() bool {
	p.life.Mu.Lock()
	defer p.life.Mu.Unlock()
	if p.life.Closing {
		return false
	}
	p.devices++
	p.life.Live++
	return true
}

// add registers a new stream or adopted wrapper; false once the last
// Device closed. An adopted wrapper (in its Device's list) is refused once
// that Device is closing.
func (p *ctxState) add(h *handle, d *Device) bool {
	p.life.Mu.Lock()
	defer p.life.Mu.Unlock()
	if p.life.Closing {
		return false
	}
	if h.Kind == lifetime.KindAdopted && d.h.Closed() { // marked before Device.Close takes the lock
		return false
	}
	p.life.Link(h)
	return true
}

var (
	primariesMu sync.Mutex
	primaries   = map[int]*ctxState{}
)

// Device is one CUDA device with its primary context retained. It is safe
// for concurrent use. Close releases it. The zero value and a nil *Device are
// not usable: their methods return errors matching ErrInvalid.
type Device struct {
	p       *ctxState
	h       handle  // calls in flight on the device and its default streams
	def     Stream  // the legacy default stream
	pts     Stream  // the per-thread default stream (perthread.go)
	adopted *handle // open streams and events adopted through it, under p.mu
}

// GetDevice returns device ordinal, retaining its primary context; Close
// releases it. Errors match ErrNoDriver, ErrNoDevice or ErrInvalidDevice
// (also for an ordinal out of the driver's int32 range).
func GetDevice(ordinal int) (*Device, error) {
	const op = "get device"
	if ordinal < 0 || ordinal > math.MaxInt32 {
		return nil, &Error{Op: op, Detail: fmt.Sprintf("no device %d: an ordinal is a non-negative int32", ordinal),
			Fix: "use an ordinal from 0 to cuda.DeviceCount()-1", Err: ErrInvalidDevice}
	}
	if err := initDriver(); err != nil {
		return nil, err
	}
	primariesMu.Lock()
	defer primariesMu.Unlock()
	if p := primaries[ordinal]; p != nil && p.openDevice() {
		return newDevice(p), nil
	}
	dev, err := driver.DeviceGet(int32(ordinal))
	if err != nil {
		n, _ := driver.DeviceGetCount()
		return nil, &Error{Op: op, Detail: fmt.Sprintf("no device %d (the driver sees %d)", ordinal, n),
			Fix: "use an ordinal below cuda.DeviceCount()", Err: err}
	}
	ctx, err := driver.DevicePrimaryCtxRetain(dev)
	if err != nil {
		return nil, driverErr(fmt.Sprintf("retain the primary context of device %d", ordinal), err)
	}
	p := newCtxState(ordinal, dev, ctx, false)
	primaries[ordinal] = p
	return newDevice(p), nil
}

func newDevice(p *ctxState) *Device {
	d := &Device{p: p}
	d.h.D, d.h.Kind, d.h.State = &p.life, lifetime.KindDevice, new(atomic.Int64) // never held by a hazard call

	d.initStreams()
	return d
}

// Close closes the device: its default streams and the streams and events
// adopted through it (AdoptStream, AdoptEvent) at once, and when it is the
// last open Device of its context, every event and stream of the device
// (as if each were closed). It never blocks, never waits for another
// goroutine and never calls the driver, and is idempotent: it marks the
// objects closed and returns; the package's flusher goroutine destroys them
// once the calls in flight on them have returned, and then releases the
// primary context, on a goroutine of its own, because the driver's release
// waits for the context's pending GPU work (forever, for work waiting on an
// IPC event whose exporter died). A Device of an adopted context
// (AdoptContext) never releases or destroys the context. It returns nil; a
// nil Device returns an error matching ErrInvalid.
func (d *Device) Close() error {
	if d == nil || d.p == nil {
		return invalidErr("close device", "device")
	}
	if !d.h.Mark() {
		return nil
	}
	p := d.p
	// Marking the objects closed needs no driver call and no lock but the
	// context's, which no one holds across a driver call: each retires
	// without a lock (internal/lifetime), and the flusher, asked once,
	// destroys them.
	p.life.Mu.Lock()
	p.devices--
	closed := false
	for h := d.adopted; h != nil; h = h.Next() {
		closed = h.Close(true) || closed
	}
	last := p.devices == 0
	if last {
		p.life.CloseLocked()
		for h := p.life.Open; h != nil; h = h.Next() {
			closed = h.Close(true) || closed
		}
		closed = p.closeEvents() || closed
	}
	p.life.Mu.Unlock()
	d.h.Finish()
	if closed || last {
		p.life.Ask()
	}
	return nil
}

// closedChan is Done's answer for a nil or zero Device.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel that is closed once this package is done with the
// device's context: every Device of the context closed, every event and
// stream of the package destroyed (the calls in flight on them returned),
// and a primary context released. Close returns at once and leaves that
// work to the package's goroutines (see Close): a program that must know
// it is over waits for Done, such as the creator of a context adopted with
// AdoptContext before it destroys the context. It is not closed while a
// Device of the context is open, nor, for a primary context, while the
// driver's release waits for pending GPU work (forever for work waiting on
// an IPC event whose exporter died). For a nil or zero Device the channel
// is closed.
func (d *Device) Done() <-chan struct{} {
	if d == nil || d.p == nil {
		return closedChan
	}
	return d.p.done
}

// enter counts a call on the device in; d.h.Exit ends it.
func (d *Device) enter(op string) error {
	if d == nil || d.p == nil {
		return invalidErr(op, "device")
	}
	return operand{r: &d.h, name: "device"}.enter(op)
}

// Ordinal is the device's index (-1 for a nil or zero Device).
func (d *Device) Ordinal() int {
	if d == nil || d.p == nil {
		return -1
	}
	return d.p.ordinal
}

// Context is the driver handle of the device's primary context (0 for a nil
// or zero Device). It stays valid until the device is closed.
func (d *Device) Context() driver.Context {
	if d == nil || d.p == nil {
		return 0
	}
	return d.p.ctx
}

// Name is the device's name, such as "NVIDIA H200".
func (d *Device) Name() (string, error) {
	const op = "device name"
	if err := d.enter(op); err != nil {
		return "", err
	}
	defer d.h.Exit()
	s, err := driver.DeviceGetName(d.p.dev)
	return s, driverErr(op, err)
}

// Sync waits for all work on the device to complete.
func (d *Device) Sync() error {
	const op = "synchronize device"
	if err := d.enter(op); err != nil {
		return err
	}
	defer d.h.Exit()
	return driverErr(op, driver.CtxSynchronizeCtx(d.p.ctx))
}

// String describes the device.
func (d *Device) String() string {
	if d == nil || d.p == nil {
		return "cuda device <invalid>"
	}
	return fmt.Sprintf("cuda device %d", d.p.ordinal)
}

// DefaultStream is the device's legacy default (NULL) stream, which
// synchronises with every other blocking stream of the context: work queued
// on it starts after all work queued before on the context's blocking streams
// (StreamOptions.Blocking, PerThreadStream) and work queued on those afterwards
// waits for it; non-blocking streams (NewStream's default) do not take part. It needs
// no Close, and is closed with the device. See PerThreadStream for the
// stream that does not wait. For a nil or zero Device it returns nil.
func (d *Device) DefaultStream() *Stream {
	if d == nil || d.p == nil {
		return nil
	}
	return &d.def
}

// StreamOptions choose what a stream does. The zero value is a
// non-blocking stream of the default priority, what NewStream() makes.
type StreamOptions struct {
	// Blocking makes the stream synchronise with the legacy default stream
	// (DefaultStream), as cuStreamCreate's default flag does. Off, the
	// stream is non-blocking (CU_STREAM_NON_BLOCKING): work on it never
	// waits for the default stream's, nor the default stream's for it.
	Blocking bool
	// Priority is the stream's scheduling priority: lower numbers are
	// higher priority, from Device.StreamPriorityRange's least (0, the
	// default) down to its greatest (-5 on recent GPUs). The GPU's scheduler
	// starts pending work of a higher-priority stream before pending work of
	// lower-priority ones; it does not preempt work already running. A
	// priority outside the range is refused with ErrInvalidOptions.
	Priority int
}

// NewStream creates a stream with opts (at most one: none is the zero
// StreamOptions, a non-blocking stream of the default priority). Close
// destroys it. A priority outside StreamPriorityRange, or more than one
// StreamOptions, is refused with ErrInvalidOptions before the driver is
// called to create anything.
func (d *Device) NewStream(opts ...StreamOptions) (*Stream, error) {
	const op = "create stream"
	var o StreamOptions
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		return nil, &Error{Op: op, Detail: fmt.Sprintf("%d StreamOptions given", len(opts)),
			Fix: "pass one StreamOptions with every option set in it", Err: ErrInvalidOptions}
	}
	flags := driver.StreamNonBlocking
	if o.Blocking {
		flags = driver.StreamDefault
	}
	return d.newStream(flags, o.Priority)
}

// NewBlockingStream creates a stream that synchronises with the legacy
// default stream.
//
// Deprecated: use NewStream(cuda.StreamOptions{Blocking: true}), which also
// takes a priority.
func (d *Device) NewBlockingStream() (*Stream, error) {
	return d.newStream(driver.StreamDefault, 0)
}

// StreamPriorityRange returns the stream priorities the device's context
// allows (cuCtxGetStreamPriorityRange): least is the lowest priority and
// the default (0), greatest the highest (a negative number on GPUs with
// priorities, -5 on recent ones; 0 where the GPU has none). Lower numbers
// are higher priorities; StreamOptions.Priority takes any value from
// greatest to least.
func (d *Device) StreamPriorityRange() (least, greatest int, err error) {
	const op = "stream priority range"
	if err := d.enter(op); err != nil {
		return 0, 0, err
	}
	defer d.h.Exit()
	l, g, err := driver.CtxGetStreamPriorityRangeCtx(d.p.ctx)
	if err != nil {
		return 0, 0, driverErr(op, err)
	}
	return int(l), int(g), nil
}

func (d *Device) newStream(flags driver.StreamFlags, priority int) (*Stream, error) {
	const op = "create stream"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	d.p.life.Throttle()
	var h driver.Stream
	var err error
	if priority == 0 {
		h, err = driver.StreamCreateCtx(d.p.ctx, flags)
	} else {
		// The driver clamps a priority out of range: it is refused here
		// instead, so that a stream never silently gets another priority.
		least, greatest, rerr := driver.CtxGetStreamPriorityRangeCtx(d.p.ctx)
		if rerr != nil {
			return nil, driverErr(op+": get the stream priority range", rerr)
		}
		if priority > int(least) || priority < int(greatest) {
			return nil, &Error{Op: op, Detail: fmt.Sprintf("priority %d is outside the device's range, %d (least, the default) to %d (greatest)", priority, least, greatest),
				Fix: "pass a priority from Device.StreamPriorityRange (lower numbers are higher priorities)", Err: ErrInvalidOptions}
		}
		h, err = driver.StreamCreateWithPriorityCtx(d.p.ctx, uint32(flags), int32(priority))
	}
	if err != nil {
		return nil, driverErr(op, err)
	}
	r, err := d.register(op, "device", uintptr(h), lifetime.KindStream, func() { _ = driver.StreamDestroyCtx(d.p.ctx, h) })
	if err != nil {
		return nil, err
	}
	s := newStream(d, h, r, true)
	s.cleanup = backstop(s, r)
	return s, nil
}
