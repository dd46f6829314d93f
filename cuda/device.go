package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
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
		}
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

// primary is the shared state of one device's primary context, alive while
// any Device for it is open.
type primary struct {
	ordinal int
	dev     driver.Device
	ctx     driver.Context
	refs    atomic.Int64 // open Device values
	events  eventAlloc
}

// alive reports whether the primary context is still retained by us.
func (p *primary) alive() bool { return p.refs.Load() > 0 }

var (
	primariesMu sync.Mutex
	primaries   = map[int]*primary{}
)

// Device is one CUDA device with its primary context retained. It is safe
// for concurrent use. Close releases it.
type Device struct {
	p      *primary
	closed atomic.Bool
	def    Stream
}

// GetDevice returns device ordinal, retaining its primary context; Close
// releases it. Errors match ErrNoDriver, ErrNoDevice or ErrInvalidDevice.
func GetDevice(ordinal int) (*Device, error) {
	if err := initDriver(); err != nil {
		return nil, err
	}
	primariesMu.Lock()
	defer primariesMu.Unlock()
	p := primaries[ordinal]
	if p == nil || !p.alive() {
		dev, err := driver.DeviceGet(int32(ordinal))
		if err != nil {
			n, _ := driver.DeviceGetCount()
			return nil, &Error{Op: "get device", Detail: fmt.Sprintf("no device %d (the driver sees %d)", ordinal, n),
				Fix: "use an ordinal below cuda.DeviceCount()", Err: err}
		}
		ctx, err := driver.DevicePrimaryCtxRetain(dev)
		if err != nil {
			return nil, driverErr(fmt.Sprintf("retain the primary context of device %d", ordinal), err)
		}
		p = &primary{ordinal: ordinal, dev: dev, ctx: ctx}
		primaries[ordinal] = p
	} else {
		// Each Device holds its own retain.
		if _, err := driver.DevicePrimaryCtxRetain(p.dev); err != nil {
			return nil, driverErr(fmt.Sprintf("retain the primary context of device %d", ordinal), err)
		}
	}
	p.refs.Add(1)
	d := &Device{p: p}
	d.def = Stream{dev: d, h: 0, owned: false}
	return d, nil
}

// Close releases the device's primary context. It is idempotent; objects
// created from the device must not be used after the last Device of that
// ordinal is closed.
func (d *Device) Close() error {
	if d == nil || !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	primariesMu.Lock()
	defer primariesMu.Unlock()
	d.p.refs.Add(-1)
	return driverErr(fmt.Sprintf("release the primary context of device %d", d.p.ordinal), driver.DevicePrimaryCtxRelease(d.p.dev))
}

// Ordinal is the device's index.
func (d *Device) Ordinal() int { return d.p.ordinal }

// Context is the driver handle of the device's primary context.
func (d *Device) Context() driver.Context { return d.p.ctx }

// Name is the device's name, such as "NVIDIA H200".
func (d *Device) Name() (string, error) {
	if d.closed.Load() {
		return "", closedErr("device name", "device")
	}
	s, err := driver.DeviceGetName(d.p.dev)
	return s, driverErr("device name", err)
}

// Sync waits for all work on the device to complete.
func (d *Device) Sync() error {
	if d.closed.Load() {
		return closedErr("synchronize device", "device")
	}
	return driverErr("synchronize device", driver.CtxSynchronizeCtx(d.p.ctx))
}

// String describes the device.
func (d *Device) String() string { return fmt.Sprintf("cuda device %d", d.p.ordinal) }

// DefaultStream is the device's legacy default (NULL) stream, which
// synchronises with every other blocking stream of the context. It needs no
// Close.
func (d *Device) DefaultStream() *Stream { return &d.def }

// NewStream creates a non-blocking stream: it does not synchronise with the
// default stream. Close destroys it.
func (d *Device) NewStream() (*Stream, error) {
	return d.newStream(driver.StreamNonBlocking)
}

// NewBlockingStream creates a stream that synchronises with the legacy
// default stream.
func (d *Device) NewBlockingStream() (*Stream, error) {
	return d.newStream(driver.StreamDefault)
}

func (d *Device) newStream(flags driver.StreamFlags) (*Stream, error) {
	if d.closed.Load() {
		return nil, closedErr("create stream", "device")
	}
	h, err := driver.StreamCreateCtx(d.p.ctx, flags)
	if err != nil {
		return nil, driverErr("create stream", err)
	}
	s := &Stream{dev: d, h: h, owned: true}
	s.cleanup = backstop(s, d.p, uintptr(h), true)
	return s, nil
}
