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
func fakeAdoptedDevice() *Device { return fakeAdoptedDeviceCtx(0xc0) }

func fakeAdoptedDeviceCtx(ctx driver.Context) *Device {
	// AdoptStream asks the driver for a stream's context: here, the stream
	// handles these tests adopt belong to the Device's context, except
	// foreignStream's.
	streamContext = func(ctx driver.Context, s driver.Stream) (driver.Context, error) {
		if s == foreignStream {
			return 0xf0, nil
		}
		return ctx, nil
	}
	return newDevice(newCtxState(3, 0, ctx, true))
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

// foreignStream is a stream handle of context 0xf0 (fakeAdoptedDeviceCtx).
const foreignStream = driver.Stream(0xf000)

// AdoptStream refuses a stream of another context than its Device's,
// naming both, rather than leaving every record on it to fail with the
// driver's CUDA_ERROR_INVALID_HANDLE.
func TestAdoptStreamOfAnotherContext(t *testing.T) {
	d := fakeAdoptedDeviceCtx(0xc0)
	s, err := d.AdoptStream(foreignStream)
	wantErr(t, "adopt a stream of another context", err, ErrWrongDevice)
	if s != nil {
		t.Error("a stream of another context was adopted")
	}
	if want := "the stream 0xf000 belongs to context 0xf0, and device 3's Device is of context 0xc0"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("message %v lacks %q", err, want)
	}
	// The default streams' handles name the current context's: no check.
	for _, h := range []driver.Stream{0, 1, 2} {
		s, err := d.AdoptStream(h)
		if err != nil {
			t.Errorf("adopt default stream %d: %v", h, err)
			continue
		}
		s.Close()
	}
}

// The wrong-device check applies between an adopted context and another.
func TestAdoptedWrongDevice(t *testing.T) {
	a, b := fakeAdoptedDeviceCtx(0xc0), fakeAdoptedDeviceCtx(0xd0)
	s, _ := a.AdoptStream(driver.Stream(0x5000))
	e, _ := b.AdoptEvent(driver.Event(0x6000), EventOptions{})
	err := s.Record(e)
	wantErr(t, "record an event of another context", err, ErrWrongDevice)
	// Both contexts are of device 3: the message names them.
	if want := "the event belongs to device 3 (context 0xd0) and the stream to device 3 (context 0xc0)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("message %v lacks %q", err, want)
	}
	start, _ := a.AdoptEvent(driver.Event(0x7000), EventOptions{Timing: true})
	end, _ := b.AdoptEvent(driver.Event(0x8000), EventOptions{Timing: true})
	_, err = end.Sub(start)
	wantErr(t, "time events of two contexts", err, ErrWrongDevice)
	if want := "(context 0xc0) and the end event to device 3 (context 0xd0)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("message %v lacks %q", err, want)
	}
	// Two Devices of one context (two ctxStates of it) mix: the
	// driver sees one context.
	c := fakeAdoptedDeviceCtx(0xc0)
	ce, _ := c.AdoptEvent(driver.Event(0x9000), EventOptions{Timing: true})
	if _, err := ce.Sub(start); errors.Is(err, ErrWrongDevice) {
		t.Errorf("two Devices of one context: %v", err)
	}
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
	for _, d := range []*Device{nilDev, {}} {
		_, err := d.AdoptStream(driver.Stream(1))
		wantErr(t, "adopt a stream on a nil or zero device", err, ErrInvalid)
		_, err = d.AdoptEvent(driver.Event(1), EventOptions{})
		wantErr(t, "adopt an event on a nil or zero device", err, ErrInvalid)
		_, err = d.AdoptEvent(driver.Event(1), EventOptions{IPC: true, Timing: true})
		wantErr(t, "adopt an event with IPC and timing on a nil or zero device", err, ErrInvalid)
		if d.PerThreadStream() != nil {
			t.Error("nil or zero device has a per-thread stream")
		}
	}
	var nilHandle *IPCEventHandle
	wantErr(t, "decode text into a nil handle", nilHandle.UnmarshalText([]byte(ipcMagic+"2:")), ErrInvalid)
	wantErr(t, "decode bytes into a nil handle", nilHandle.UnmarshalBinary(make([]byte, 64)), ErrInvalid)
	var err error
	d := fakeAdoptedDevice()
	_, err = d.AdoptEvent(0, EventOptions{})
	wantErr(t, "adopt a nil event", err, ErrInvalidHandle)
	wantErr(t, "adopt a nil event", err, ErrInvalid)
	_, err = d.AdoptEvent(driver.Event(1), EventOptions{IPC: true, Timing: true})
	wantErr(t, "adopt with IPC and timing", err, ErrInvalidOptions)
	_, err = AdoptContext(0)
	wantErr(t, "adopt a nil context", err, driver.ErrorInvalidContext)
	wantErr(t, "adopt a nil context", err, ErrInvalid)
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
	for _, s := range []*Stream{pts, def} {
		if err := s.enter("test"); err != nil {
			t.Errorf("%v unusable after Close: %v", s, err)
		} else {
			s.r.Exit()
		}
	}
}

// An adopted wrapper closes with the Device that adopted it, even while
// another Device of the context stays open; a call in flight on it delays
// only its own finish; nothing is left in the lists, and the context's last
// reference goes without a release (here any driver call would fail, and
// the release would show as live never reaching zero first).
func TestAdoptedWrappersFollowTheirDevice(t *testing.T) {
	d1 := fakeAdoptedDevice()
	p := d1.p
	p.life.Mu.Lock()
	p.devices++
	p.life.Live++
	p.life.Mu.Unlock()
	d2 := newDevice(p)
	s, err := d1.AdoptStream(driver.Stream(0x5000))
	if err != nil {
		t.Fatal(err)
	}
	e, err := d1.AdoptEvent(driver.Event(0x6000), EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.enter("test"); err != nil { // a call in flight
		t.Fatal(err)
	}
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "adopted event of a closed device", e.Sync(), ErrClosed)
	if err := e.Sync(); err == nil || !strings.Contains(err.Error(), "event's device is closed") {
		t.Errorf("error does not name the device: %v", err)
	}
	if !s.r.Closed() || s.r.State.Load()&finished != 0 {
		t.Errorf("stream with a call in flight: state %#x, want closing and unfinished", s.r.State.Load())
	}
	if err := d2.PerThreadStream().enter("test"); err != nil {
		t.Errorf("the other Device's per-thread stream: %v", err)
	} else {
		d2.h.Exit()
	}
	s.r.Exit()     // the call returns: the wrapper finishes, destroying nothing
	p.life.Flush() // the flusher's work, done here (or waited for)
	p.life.Mu.Lock()
	live, adoptedLeft, open := p.life.Live, d1.adopted, p.life.Open
	p.life.Mu.Unlock()
	if live != 1 || adoptedLeft != nil || open != nil {
		t.Errorf("after d1's Close: live %d (want 1: d2), adopted list %v, open list %v", live, adoptedLeft, open)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	p.life.Flush()
	p.life.Mu.Lock()
	if p.life.Live != 0 || !p.life.Closing {
		t.Errorf("after the last Close: live %d, closing %v", p.life.Live, p.life.Closing)
	}
	p.life.Mu.Unlock()
	if Leaked() != 0 {
		t.Errorf("adopted wrappers counted as leaked: %d", Leaked())
	}
}
