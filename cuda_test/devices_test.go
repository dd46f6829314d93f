//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

func TestSeveralDevices(t *testing.T) {
	dev := gpu(t)
	n, err := cuda.DeviceCount()
	ok(t, err)
	if _, err := cuda.GetDevice(n); !errors.Is(err, cuda.ErrInvalidDevice) || !strings.Contains(err.Error(), fmt.Sprintf("no device %d", n)) {
		t.Fatalf("device %d of %d: %v", n, n, err)
	}
	if n < 2 {
		t.Skipf("skipping the cross-device checks: this machine has %d GPU (they run on a machine with 2 or more)", n)
	}
	dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
	defer dev1.Close()
	s1 := must[*cuda.Stream](t)(dev1.NewStream())
	defer s1.Close()
	e0 := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer e0.Close()
	err = s1.Record(e0)
	if !errors.Is(err, cuda.ErrWrongDevice) || !strings.Contains(err.Error(), "device 0") || !strings.Contains(err.Error(), "device 1") {
		t.Fatalf("cross-device record: %v", err)
	}
	t.Log(err)
	// A stream may wait for an event of another device.
	s0 := must[*cuda.Stream](t)(dev.NewStream())
	defer s0.Close()
	ok(t, s0.Spin(10*time.Millisecond))
	ok(t, s0.Record(e0))
	ok(t, s1.Wait(e0))
	e1 := must[*cuda.Event](t)(dev1.NewEvent(cuda.EventOptions{Timing: true}))
	defer e1.Close()
	ok(t, s1.Record(e1))
	ok(t, e1.Sync())
	if done, _ := e0.Query(); !done {
		t.Fatal("device 1 did not wait for device 0")
	}
	if _, err := e1.Sub(e0); !errors.Is(err, cuda.ErrWrongDevice) {
		t.Fatalf("cross-device Sub: %v", err)
	}
}

// With the device closed, its objects say so.
func TestLayerDeviceClosed(t *testing.T) {
	gpu(t)
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Close())
	ok(t, e.Close())
	ok(t, dev.Close())
	if _, err := dev.NewEvent(cuda.EventOptions{}); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("NewEvent on a closed device: %v", err)
	}
	if _, err := dev.NewStream(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("NewStream on a closed device: %v", err)
	}
	if err := dev.DefaultStream().Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("default stream of a closed device: %v", err)
	}
}

// Once the last Device of an ordinal is closed, its context is gone: its
// events and streams say so instead of reaching the driver.
func TestLayerLastDeviceClosed(t *testing.T) {
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	dev := must[*cuda.Device](t)(cuda.GetDevice(0)) // the only open Device here
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	ok(t, s.Record(e))
	ok(t, dev.Close())
	for name, err := range map[string]error{
		"Query":       func() error { _, err := e.Query(); return err }(),
		"Sync":        e.Sync(),
		"Wait":        e.Wait(context.Background()),
		"Sub":         func() error { _, err := e.Sub(e); return err }(),
		"Record":      s.Record(e),
		"Stream.Sync": s.Sync(),
	} {
		if !errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), "device") {
			t.Errorf("%s after the device closed: %v", name, err)
		}
	}
	ok(t, e.Close()) // nothing to destroy: the context took it
	ok(t, s.Close())
}

// The smaller guarantees: a stream of a closed Device whose context another
// Device keeps open works alike for Record, RecordEvent and WaitStream, and
// all three refuse once the last Device closes; a nil *Error prints; a
// stream of another context is refused at adoption, naming both.
func TestLayerSmallGuarantees(t *testing.T) {
	d2 := fakeOnly(t) // the test's only other Device of device 0
	d1 := must[*cuda.Device](t)(cuda.GetDevice(0))
	s := must[*cuda.Stream](t)(d1.NewStream())
	other := must[*cuda.Stream](t)(d1.NewStream())
	e := must[*cuda.Event](t)(d2.NewEvent(cuda.EventOptions{}))
	ok(t, d1.Close()) // not the last: d2 keeps the context
	ok(t, s.Record(e))
	re, err := s.RecordEvent(cuda.EventOptions{Timing: true})
	if err != nil {
		t.Errorf("RecordEvent on a stream whose Device closed, its context open: %v (Record works)", err)
	} else {
		ok(t, re.Sync())
		ok(t, re.Close())
	}
	if err := s.WaitStream(other); err != nil {
		t.Errorf("WaitStream on a stream whose Device closed, its context open: %v (Record works)", err)
	}
	ok(t, s.Sync())
	ok(t, d2.Close()) // the last: every stream of the context closes
	if err := s.Record(e); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Record after the last Device closed: %v", err)
	}
	if _, err := s.RecordEvent(cuda.EventOptions{}); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("RecordEvent after the last Device closed: %v", err)
	}
	if err := s.WaitStream(other); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("WaitStream after the last Device closed: %v", err)
	}

	// A nil *Error, as an error too.
	var ne *cuda.Error
	var asErr error = ne
	noPanic(t, "nil *Error", func() {
		if msg := asErr.Error(); !strings.HasPrefix(msg, "cuda: ") || fmt.Sprint(asErr) != msg || errors.Unwrap(ne) != nil {
			t.Errorf("nil *Error prints %q", msg)
		}
	})

	// A stream of another context (device 1's) adopted on device 0.
	d0 := must[*cuda.Device](t)(cuda.GetDevice(0))
	defer d0.Close()
	dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
	defer dev1.Close()
	raw, err := driver.StreamCreateCtx(dev1.Context(), driver.StreamNonBlocking)
	ok(t, err)
	defer driver.StreamDestroyCtx(dev1.Context(), raw)
	as, err := d0.AdoptStream(raw)
	want := fmt.Sprintf("belongs to context %#x, and device 0's Device is of context %#x", uintptr(dev1.Context()), uintptr(d0.Context()))
	if !errors.Is(err, cuda.ErrWrongDevice) || as != nil || !strings.Contains(err.Error(), want) {
		t.Errorf("adopt a stream of another context: %v, %v; want ErrWrongDevice saying %q", as, err, want)
	}
	as, err = dev1.AdoptStream(raw)
	ok(t, err)
	ok(t, as.Close())
}
