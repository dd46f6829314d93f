package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// fakeAdoptedDevice is a Device of an adopted context as AdoptContext makes
// it, without asking a driver: what is tested here makes no driver call
// (CI has no driver, so any call would fail with ErrNoDriver).
func fakeAdoptedDevice() *Device {
	p := &primary{ordinal: 3, ctx: driver.Context(0xc0)}
	p.refs.Add(1)
	d := &Device{p: p, foreign: true}
	d.initStreams()
	return d
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got %v, want an error matching %v", what, err, target)
		return
	}
	if !strings.HasPrefix(err.Error(), "cuda: ") || !strings.Contains(err.Error(), "; ") {
		t.Errorf("%s: message %q lacks the prefix, cause or fix", what, err)
	}
}

// Closing adopted wrappers releases them without a driver call (here any
// driver call fails, so a destroy would surface as an error), and they
// refuse use afterwards.
func TestAdoptedCloseReleasesOnlyTheWrapper(t *testing.T) {
	d := fakeAdoptedDevice()
	s, err := d.AdoptStream(driver.Stream(0x5000))
	if err != nil {
		t.Fatal(err)
	}
	e, err := d.AdoptEvent(driver.Event(0x6000), EventOptions{Timing: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Handle() != 0x5000 || e.Handle() != 0x6000 || s.Device() != d || e.Device() != d || !e.TimingEnabled() || !e.Recorded() {
		t.Fatalf("wrappers: %v, %v", s, e)
	}
	for i := 0; i < 2; i++ { // idempotent
		if err := s.Close(); err != nil {
			t.Errorf("close adopted stream: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close adopted event: %v", err)
		}
	}
	wantErr(t, "sync closed adopted stream", s.Sync(), ErrClosed)
	_, err = s.Query()
	wantErr(t, "query closed adopted stream", err, ErrClosed)
	_, err = e.Query()
	wantErr(t, "query closed adopted event", err, ErrClosed)
	wantErr(t, "sync closed adopted event", e.Sync(), ErrClosed)
	if Leaked() != 0 {
		t.Errorf("adopted wrappers counted as leaked: %d", Leaked())
	}
	if err := d.Close(); err != nil {
		t.Errorf("closing an adopted context's Device made a driver call: %v", err)
	}
}

// The wrong-device check applies between an adopted context and another.
func TestAdoptedWrongDevice(t *testing.T) {
	a, b := fakeAdoptedDevice(), fakeAdoptedDevice()
	s, _ := a.AdoptStream(driver.Stream(0x5000))
	e, _ := b.AdoptEvent(driver.Event(0x6000), EventOptions{})
	err := s.Record(e)
	wantErr(t, "record an event of another context", err, ErrWrongDevice)
	start, _ := a.AdoptEvent(driver.Event(0x7000), EventOptions{Timing: true})
	end, _ := b.AdoptEvent(driver.Event(0x8000), EventOptions{Timing: true})
	_, err = end.Sub(start)
	wantErr(t, "time events of two contexts", err, ErrWrongDevice)
	_, err = e.Sub(start)
	wantErr(t, "time with an event adopted without timing", err, ErrTimingDisabled)
}

// Closing the Device makes its adopted wrappers and default streams refuse
// use; nothing is destroyed.
func TestAdoptedDeviceClosed(t *testing.T) {
	d := fakeAdoptedDevice()
	s, _ := d.AdoptStream(driver.Stream(0x5000))
	e, _ := d.AdoptEvent(driver.Event(0x6000), EventOptions{})
	pts, def := d.PerThreadStream(), d.DefaultStream()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "adopted stream of a closed device", s.Sync(), ErrClosed)
	wantErr(t, "adopted event of a closed device", e.Sync(), ErrClosed)
	wantErr(t, "per-thread stream of a closed device", pts.Sync(), ErrClosed)
	wantErr(t, "default stream of a closed device", def.Sync(), ErrClosed)
	wantErr(t, "record on a closed device", s.Record(e), ErrClosed)
	_, err := d.AdoptStream(driver.Stream(0x5000))
	wantErr(t, "adopt a stream on a closed device", err, ErrClosed)
	_, err = d.AdoptEvent(driver.Event(0x6000), EventOptions{})
	wantErr(t, "adopt an event on a closed device", err, ErrClosed)
	if err := s.Close(); err != nil {
		t.Errorf("closing an adopted stream of a closed device: %v", err)
	}
}

func TestAdoptBadInput(t *testing.T) {
	var nilDev *Device
	_, err := nilDev.AdoptStream(driver.Stream(1))
	wantErr(t, "adopt a stream on a nil device", err, ErrClosed)
	_, err = nilDev.AdoptEvent(driver.Event(1), EventOptions{})
	wantErr(t, "adopt an event on a nil device", err, ErrClosed)
	if nilDev.PerThreadStream() != nil {
		t.Error("nil device has a per-thread stream")
	}
	d := fakeAdoptedDevice()
	_, err = d.AdoptEvent(0, EventOptions{})
	wantErr(t, "adopt a nil event", err, ErrInvalidHandle)
	_, err = d.AdoptEvent(driver.Event(1), EventOptions{IPC: true, Timing: true})
	wantErr(t, "adopt with IPC and timing", err, ErrInvalidOptions)
	_, err = AdoptContext(0)
	wantErr(t, "adopt a nil context", err, driver.ErrorInvalidContext)
}

// An event pool does not take an adopted event: Put releases the wrapper,
// and the pool never hands the foreign event out.
func TestPoolRefusesAdoptedEvent(t *testing.T) {
	d := fakeAdoptedDevice()
	pool, err := d.NewEventPool(EventOptions{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := d.AdoptEvent(driver.Event(0x6000), EventOptions{})
	pool.Put(e)
	if pool.Len() != 0 {
		t.Fatalf("pool took an adopted event")
	}
	_, err = e.Query()
	wantErr(t, "adopted event after Put", err, ErrClosed)
}

// The two default streams: the NULL (legacy) stream and CU_STREAM_PER_THREAD.
func TestDefaultStreams(t *testing.T) {
	d := fakeAdoptedDevice()
	def, pts := d.DefaultStream(), d.PerThreadStream()
	if def.Handle() != 0 || pts.Handle() != 0x2 || pts != d.PerThreadStream() {
		t.Fatalf("handles: default %#x, per-thread %#x", def.Handle(), pts.Handle())
	}
	if pts.String() != "per-thread default stream of device 3" || def.String() != "default stream of device 3" {
		t.Errorf("names: %q, %q", pts, def)
	}
	// Closing them does nothing: they stay usable until the device closes.
	if err := pts.Close(); err != nil {
		t.Fatal(err)
	}
	if err := def.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pts.acquire("test"); err != nil {
		t.Errorf("per-thread stream unusable after Close: %v", err)
	} else {
		pts.release()
	}
}
