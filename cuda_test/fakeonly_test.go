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

// fakeOnly is gpu for the tests that need the fake driver's own knobs (it
// opens IPC handles in the exporting process, FAKECUDA_IPC_OPEN, and has two
// devices): TestGoLayerOnFakeDriver runs them against it.
func fakeOnly(t *testing.T) *cuda.Device {
	t.Helper()
	dev := gpu(t)
	if _, fake := fakeCounter("fakecuda_live_handles"); !fake {
		t.Skip("skipping: needs the fake driver (TestGoLayerOnFakeDriver runs it there); on a GPU, TestIPC and TestStreamPriority cover the same ground")
	}
	return dev
}

func liveHandles(t *testing.T) int64 {
	t.Helper()
	n, _ := fakeCounter("fakecuda_live_handles")
	return n
}

// IPC round trips with options: an imported event has the exporter's
// options and re-exports the handle it was opened with, unchanged (the
// driver, like the fake, refuses to export an imported event: IPCHandle
// must not ask it); version 1 handles still open, without options, and
// pass on as version 1; a future version is refused before the driver is
// called.
func TestIPCReexportOnFake(t *testing.T) {
	dev := fakeOnly(t)
	t.Setenv("FAKECUDA_IPC_OPEN", "1") // the fake stands for a second process
	for _, blocking := range []bool{true, false} {
		opts := cuda.EventOptions{IPC: true, BlockingSync: blocking}
		e := must[*cuda.Event](t)(dev.NewEvent(opts))
		h, err := e.IPCHandle()
		ok(t, err)
		if h.Options() != opts {
			t.Errorf("exported handle's options %+v, want %+v", h.Options(), opts)
		}
		forms := map[string]func() (cuda.IPCEventHandle, string){
			"text": func() (cuda.IPCEventHandle, string) {
				var x cuda.IPCEventHandle
				ok(t, x.UnmarshalText([]byte(h.String())))
				return x, h.String()
			},
			"binary": func() (cuda.IPCEventHandle, string) {
				b, err := h.MarshalBinary()
				ok(t, err)
				var x cuda.IPCEventHandle
				ok(t, x.UnmarshalBinary(b))
				return x, string(b)
			},
		}
		for name, decode := range forms {
			x, sent := decode()
			imp, err := dev.OpenIPCEvent(x)
			ok(t, err)
			if imp.Options() != opts || imp.BlockingSync() != blocking || imp.TimingEnabled() || !imp.IPCEnabled() {
				t.Errorf("%s: imported event's options %+v, want the exporter's %+v", name, imp.Options(), opts)
			}
			again, err := imp.IPCHandle()
			if err != nil {
				t.Fatalf("%s: re-export of an imported event: %v", name, err)
			}
			if again != x || again != h {
				t.Errorf("%s: re-exported %v, imported %v", name, again, x)
			}
			if b, _ := again.MarshalBinary(); name == "binary" && string(b) != sent {
				t.Errorf("binary: re-exported bytes %x, imported %x", b, sent)
			}
			if name == "text" && again.String() != sent {
				t.Errorf("text: re-exported %s, imported %s", again, sent)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			ok(t, imp.Wait(ctx))
			cancel()
			ok(t, imp.Close())
			// Closed, it says so rather than re-exporting.
			if _, err := imp.IPCHandle(); !errors.Is(err, cuda.ErrClosed) {
				t.Errorf("%s: IPCHandle after Close: %v", name, err)
			}
		}
		// Version 1: the driver's bytes alone, which hold no options.
		dh := h.Driver()
		var v1 cuda.IPCEventHandle
		ok(t, v1.UnmarshalBinary(dh[:]))
		imp, err := dev.OpenIPCEvent(v1)
		ok(t, err)
		if imp.Options() != (cuda.EventOptions{IPC: true}) {
			t.Errorf("version 1 import's options %+v, want IPC alone", imp.Options())
		}
		again, err := imp.IPCHandle()
		ok(t, err)
		if b, _ := again.MarshalBinary(); string(b) != string(dh[:]) || !strings.HasPrefix(again.String(), "cuipcev1:") {
			t.Errorf("version 1 import re-exported as %s", again)
		}
		ok(t, imp.Close())
		ok(t, e.Close())
	}
	// A future version never reaches the driver.
	var f cuda.IPCEventHandle
	err := f.UnmarshalText([]byte("cuipcev3:" + strings.Repeat("A", 90)))
	if !errors.Is(err, cuda.ErrMalformedHandle) || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("future version: %v", err)
	}
}

// Streams with options: every priority of the range, reported back; one
// outside refused before anything is created; blocking or not.
func TestStreamOptionsOnFake(t *testing.T) {
	dev := fakeOnly(t)
	least, greatest, err := dev.StreamPriorityRange()
	ok(t, err)
	if least != 0 || greatest != -5 {
		t.Fatalf("the fake's priority range: %d..%d, want 0..-5", least, greatest)
	}
	for p := least; p >= greatest; p-- {
		for _, blocking := range []bool{false, true} {
			s := must[*cuda.Stream](t)(dev.NewStream(cuda.StreamOptions{Priority: p, Blocking: blocking}))
			if got, err := s.Priority(); err != nil || got != p {
				t.Errorf("stream of priority %d: Priority %d, %v", p, got, err)
			}
			var flags uint32
			ok(t, driver.StreamGetFlagsCtx(dev.Context(), s.Handle(), &flags))
			if want := map[bool]uint32{false: uint32(driver.StreamNonBlocking), true: uint32(driver.StreamDefault)}[blocking]; flags != want {
				t.Errorf("stream of Blocking %v: flags %#x, want %#x", blocking, flags, want)
			}
			ok(t, s.Close())
			if _, err := s.Priority(); !errors.Is(err, cuda.ErrClosed) {
				t.Errorf("Priority after Close: %v", err)
			}
		}
	}
	before := liveHandles(t)
	for _, p := range []int{least + 1, greatest - 1, 1 << 20, -1 << 20} {
		s, err := dev.NewStream(cuda.StreamOptions{Priority: p})
		if !errors.Is(err, cuda.ErrInvalidOptions) || s != nil || !strings.Contains(err.Error(), fmt.Sprintf("priority %d is outside the device's range, 0 (least, the default) to -5 (greatest)", p)) {
			t.Errorf("priority %d: %v, %v", p, s, err)
		}
	}
	if _, err := dev.NewStream(cuda.StreamOptions{}, cuda.StreamOptions{}); !errors.Is(err, cuda.ErrInvalidOptions) {
		t.Errorf("two StreamOptions: %v", err)
	}
	// Refused streams add no handle (handles closed before may still be
	// destroyed meanwhile, lowering the count).
	if n := liveHandles(t); n > before {
		t.Errorf("refused streams left %d driver handles", n-before)
	}
	// The defaults: NewStream() is non-blocking, of the least priority.
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	if p, err := s.Priority(); err != nil || p != least {
		t.Errorf("NewStream(): priority %d, %v", p, err)
	}
	if p, err := dev.DefaultStream().Priority(); err != nil || p != 0 {
		t.Errorf("default stream: priority %d, %v", p, err)
	}
}

// The smaller guarantees: a stream of a closed Device whose context another
// Device keeps open works alike for Record, RecordEvent and WaitStream, and
// all three refuse once the last Device closes; a nil *Error prints; a
// stream of another context is refused at adoption, naming both; a Put of
// an event idle in its pool is refused.
func TestSmallFixesOnFake(t *testing.T) {
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

	// The pool: a Put of an event idle in it is refused; a Put after Get
	// is its holder's.
	pool := must[*cuda.EventPool](t)(d0.NewEventPool(cuda.EventOptions{}, 0))
	defer pool.Close()
	pe := must[*cuda.Event](t)(pool.Get())
	ok(t, pool.Put(pe))
	if err := pool.Put(pe); !errors.Is(err, cuda.ErrInvalid) || pool.Len() != 1 {
		t.Errorf("second Put of an idle event: %v (pool of %d)", err, pool.Len())
	}
	if got := must[*cuda.Event](t)(pool.Get()); got != pe || pool.Len() != 0 {
		t.Errorf("Get after Put: another event, or the pool kept it (%d)", pool.Len())
	}
	ok(t, pool.Put(pe))
}
