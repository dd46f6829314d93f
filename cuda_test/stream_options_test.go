//go:build cgo

package gputest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/internal/ptx"
)

// TestStreamPriority: work on a high-priority stream overtakes work queued
// before it on a low-priority one. A low-priority stream runs one kernel
// whose blocks fill every SM for about 400ms (waves of 1ms blocks, 64 blocks
// per SM each wave, more than an SM holds); once it runs, a short kernel is
// launched on a high-priority stream. The block scheduler starts the
// high-priority stream's pending blocks before the low one's as slots free,
// so the short kernel ends within a few block times of its launch, long
// before the low kernel does; without priorities it would wait for the
// low kernel's last wave to be dispatched (the same streams with equal
// priorities show that, logged for comparison). Measured on the GPU's
// clock, with events: the short kernel's end must come in the first half
// of the low kernel.
func TestStreamPriority(t *testing.T) {
	dev := gpu(t)
	least, greatest, err := dev.StreamPriorityRange()
	ok(t, err)
	if least == greatest {
		t.Skipf("skipping: the GPU has no stream priorities (range %d..%d)", least, greatest)
	}
	ctx := dev.Context()
	ordinal := must[driver.Device](t)(driver.DeviceGet(int32(dev.Ordinal())))
	sms := must[int32](t)(driver.DeviceGetAttributeCtx(ctx, driver.DeviceAttributeMultiprocessorCount, ordinal))
	// Spin's kernel over a grid: every block (one thread) busy-waits the
	// given nanoseconds, so a grid of many blocks per SM keeps every SM full
	// for a known time, and a block slot frees only when a block ends.
	img := []byte(ptx.Spin)
	mod := must[driver.Module](t)(driver.ModuleLoadDataCtx(ctx, img))
	defer driver.ModuleUnloadCtx(ctx, mod)
	fn := must[driver.Function](t)(driver.ModuleGetFunctionCtx(ctx, mod, ptx.SpinEntry))
	const block = time.Millisecond
	const waves = 400
	grid := uint32(sms) * 64 * waves
	launch := func(s *cuda.Stream, blocks uint32, d time.Duration) {
		ns := uint64(d)
		var pin runtime.Pinner // a Go pointer inside the parameter array
		pin.Pin(&ns)
		defer pin.Unpin()
		params := [1]unsafe.Pointer{unsafe.Pointer(&ns)}
		ok(t, driver.LaunchKernelCtx(ctx, fn, blocks, 1, 1, 1, 1, 1, 0, s.Handle(), params[:], nil))
	}
	// run returns where the short kernel's end falls in the long kernel, as
	// a fraction of its length.
	run := func(lowPrio, highPrio int) float64 {
		low := must[*cuda.Stream](t)(dev.NewStream(cuda.StreamOptions{Priority: lowPrio}))
		defer low.Close()
		high := must[*cuda.Stream](t)(dev.NewStream(cuda.StreamOptions{Priority: highPrio}))
		defer high.Close()
		timing := cuda.EventOptions{Timing: true}
		lowStart := must[*cuda.Event](t)(dev.NewEvent(timing))
		lowEnd := must[*cuda.Event](t)(dev.NewEvent(timing))
		highEnd := must[*cuda.Event](t)(dev.NewEvent(timing))
		for _, e := range []*cuda.Event{lowStart, lowEnd, highEnd} {
			defer e.Close()
		}
		ok(t, low.Record(lowStart))
		launch(low, grid, block)
		ok(t, low.Record(lowEnd))
		ok(t, lowStart.Sync()) // the long kernel is running
		time.Sleep(20 * time.Millisecond)
		launch(high, 1, 10*time.Microsecond)
		ok(t, high.Record(highEnd))
		ok(t, highEnd.Sync())
		ok(t, lowEnd.Sync())
		long := must[time.Duration](t)(lowEnd.Sub(lowStart))
		at := must[time.Duration](t)(highEnd.Sub(lowStart))
		t.Logf("priorities low %d, high %d: the long kernel took %v; the short one ended %v after it started", lowPrio, highPrio, long, at)
		if long < waves*block/2 {
			t.Fatalf("the long kernel took %v, expected about %v: the GPU was not full", long, waves*block)
		}
		return float64(at) / float64(long)
	}
	if f := run(least, greatest); f > 0.5 {
		t.Errorf("the high-priority stream's kernel ended at %.0f%% of the low-priority kernel queued before it, want the first half", 100*f)
	}
	f := run(least, least)
	t.Logf("with equal priorities the short kernel ends at %.0f%% of the long one", 100*f)
}

// Streams with options: every priority of the range, reported back; one
// outside refused before anything is created; blocking or not.
func TestLayerStreamOptions(t *testing.T) {
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
			flags := must[uint32](t)(driver.StreamGetFlagsCtx(dev.Context(), s.Handle()))
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
