//go:build cgo

package gputest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// A stream and events made by raw driver calls in a context made with
// cuCtxCreate, as another library would make them, used through the cuda
// package: they record, wait, query, synchronise and time like the
// package's own; the wrong-context and closed checks apply; closing the
// wrappers and the adopted Devices leaves every handle valid for its
// creator, who destroys them.
func TestAdoptForeignContext(t *testing.T) {
	dev := gpu(t)
	cudev, err := driver.DeviceGet(int32(dev.Ordinal()))
	ok(t, err)
	fctx, err := createContext(cudev)
	ok(t, err)
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			destroyContext(fctx)
		}
	})
	if fctx == dev.Context() {
		t.Fatal("cuCtxCreate returned the primary context")
	}

	// The other library's objects, made through the generated layer.
	rawS := must[driver.Stream](t)(driver.StreamCreateCtx(fctx, driver.StreamNonBlocking))
	rawStart := must[driver.Event](t)(driver.EventCreateCtx(fctx, driver.EventDefault)) // timing on
	rawBlk := must[driver.Event](t)(driver.EventCreateCtx(fctx, driver.EventBlockingSync|driver.EventDisableTiming))

	fdev := must[*cuda.Device](t)(cuda.AdoptContext(fctx))
	if fdev.Context() != fctx || fdev.Ordinal() != dev.Ordinal() {
		t.Fatalf("adopted device: context %#x (want %#x), ordinal %d", fdev.Context(), fctx, fdev.Ordinal())
	}
	fdev2 := must[*cuda.Device](t)(cuda.AdoptContext(fctx)) // a second adoption shares the context
	var cStream uintptr = uintptr(rawS)                     // as a C library hands it over
	s := must[*cuda.Stream](t)(fdev.AdoptStream(driver.Stream(cStream)))
	start := must[*cuda.Event](t)(fdev.AdoptEvent(rawStart, cuda.EventOptions{Timing: true}))
	blk := must[*cuda.Event](t)(fdev2.AdoptEvent(rawBlk, cuda.EventOptions{BlockingSync: true}))
	end := must[*cuda.Event](t)(fdev.NewEvent(cuda.EventOptions{Timing: true})) // ours, in the foreign context

	// Record, query, wait, synchronise, time.
	ok(t, s.Record(start))
	ok(t, s.Spin(200*time.Millisecond))
	ok(t, s.Record(end))
	ok(t, s.Record(blk)) // an event adopted through the other Device of the same context
	if done, err := blk.Query(); err != nil || done {
		t.Fatalf("adopted event right after 200ms of queued work: done %v, %v", done, err)
	}
	if done, err := s.Query(); err != nil || done {
		t.Fatalf("adopted stream right after 200ms of queued work: done %v, %v", done, err)
	}
	ok(t, blk.Wait(context.Background())) // BlockingSync: the driver's sleeping wait
	ok(t, end.Sync())
	ok(t, start.Sync())
	d, err := end.Sub(start)
	ok(t, err)
	if d < 150*time.Millisecond || d > 10*time.Second {
		t.Errorf("200ms of GPU work timed as %v", d)
	}
	if done, err := s.Query(); err != nil || !done {
		t.Errorf("adopted stream after its work: done %v, %v", done, err)
	}
	ok(t, s.Sync())
	// A stream of the primary context waits for the foreign context's event.
	ps := must[*cuda.Stream](t)(dev.NewStream())
	defer ps.Close()
	ok(t, s.Spin(20*time.Millisecond))
	ok(t, s.Record(start))
	ok(t, ps.Wait(start))
	ok(t, ps.Sync())
	if done, err := start.Query(); err != nil || !done {
		t.Errorf("primary stream's wait on the adopted event: done %v, %v", done, err)
	}

	// Events and streams of different contexts do not mix.
	pe := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer pe.Close()
	if err := s.Record(pe); !errors.Is(err, cuda.ErrWrongDevice) {
		t.Errorf("primary event on an adopted stream: %v", err)
	}
	if err := ps.Record(start); !errors.Is(err, cuda.ErrWrongDevice) {
		t.Errorf("adopted event on a primary stream: %v", err)
	}

	// Close releases the wrappers only.
	ok(t, s.Close())
	ok(t, start.Close())
	ok(t, blk.Close())
	if err := s.Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("closed adopted stream: %v", err)
	}
	if _, err := start.Query(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("closed adopted event: %v", err)
	}
	ok(t, driver.StreamQueryCtx(fctx, rawS))
	ok(t, driver.EventQueryCtx(fctx, rawStart))
	ok(t, driver.EventQueryCtx(fctx, rawBlk))
	ok(t, driver.EventRecordCtx(fctx, rawStart, rawS))
	ok(t, driver.EventSynchronizeCtx(fctx, rawStart))
	t.Log("after Close of the wrappers, cuStreamQuery and cuEventQuery on the raw handles succeed")

	// Closing the adopted Devices leaves the context to its creator.
	ok(t, end.Close()) // ours: destroyed
	ok(t, fdev.Close())
	if _, err := fdev.NewEvent(cuda.EventOptions{}); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("closed adopted device: %v", err)
	}
	ok(t, fdev2.Close())
	ok(t, driver.CtxSynchronizeCtx(fctx))
	ok(t, driver.StreamQueryCtx(fctx, rawS))
	ok(t, driver.EventQueryCtx(fctx, rawBlk))

	// The creator destroys its handles and its context.
	ok(t, driver.EventDestroyCtx(fctx, rawStart))
	ok(t, driver.EventDestroyCtx(fctx, rawBlk))
	ok(t, driver.StreamDestroyCtx(fctx, rawS))
	ok(t, destroyContext(fctx))
	destroyed = true

	// The primary context still works, from many goroutines, after a
	// context once current on their threads is gone.
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := ps.RecordEvent(cuda.EventOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			defer e.Close()
			if err := e.Sync(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// Adopting on a primary device: the stream and event of another library in
// the same primary context (as torch's would be).
func TestAdoptOnPrimaryContext(t *testing.T) {
	dev := gpu(t)
	ctx := dev.Context()
	rawS := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamDefault))
	rawE := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventDisableTiming))
	defer driver.StreamDestroyCtx(ctx, rawS)
	defer driver.EventDestroyCtx(ctx, rawE)

	// An adopted context that is the primary one shares the Device's state.
	same := must[*cuda.Device](t)(cuda.AdoptContext(ctx))
	s := must[*cuda.Stream](t)(same.AdoptStream(rawS))
	e := must[*cuda.Event](t)(dev.AdoptEvent(rawE, cuda.EventOptions{}))
	ok(t, s.Spin(20*time.Millisecond))
	ok(t, s.Record(e)) // a stream adopted through one Device, an event through the other
	ok(t, e.Wait(context.Background()))
	ok(t, same.Close()) // releases nothing: dev still holds the primary context
	if err := s.Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("adopted stream of a closed device: %v", err)
	}
	ok(t, e.Sync())
	ok(t, e.Close())
	ok(t, driver.EventQueryCtx(ctx, rawE))
	ok(t, driver.StreamQueryCtx(ctx, rawS))
	ok(t, dev.Sync())
}

// The legacy default stream waits for the blocking streams' work; the
// per-thread default stream does not. Ordering is observed with events, on
// work of known duration.
func TestPerThreadVersusLegacyStream(t *testing.T) {
	dev := gpu(t)
	blocking := must[*cuda.Stream](t)(dev.NewStream(cuda.StreamOptions{Blocking: true}))
	defer blocking.Close()
	pts, legacy := dev.PerThreadStream(), dev.DefaultStream()
	if pts.Handle() != 0x2 || legacy.Handle() != 0 {
		t.Fatalf("handles: per-thread %#x, legacy %#x", pts.Handle(), legacy.Handle())
	}

	// Legacy: a mark recorded on it completes only after the blocking
	// stream's earlier work.
	ok(t, blocking.Spin(500*time.Millisecond))
	busy := must[*cuda.Event](t)(blocking.RecordEvent(cuda.EventOptions{}))
	defer busy.Close()
	mark := must[*cuda.Event](t)(legacy.RecordEvent(cuda.EventOptions{}))
	defer mark.Close()
	if done, err := mark.Query(); err != nil || done {
		t.Errorf("legacy-stream mark complete while the blocking stream spins: %v, %v", done, err)
	}
	ok(t, mark.Sync())
	if done, err := busy.Query(); err != nil || !done {
		t.Errorf("legacy-stream mark completed before the blocking stream's work: %v, %v", done, err)
	}

	// Per-thread: a mark recorded on it completes while the blocking
	// stream's work still runs.
	ok(t, blocking.Spin(500*time.Millisecond))
	busy2 := must[*cuda.Event](t)(blocking.RecordEvent(cuda.EventOptions{}))
	defer busy2.Close()
	mark2 := must[*cuda.Event](t)(pts.RecordEvent(cuda.EventOptions{}))
	defer mark2.Close()
	ok(t, mark2.Sync())
	if done, err := busy2.Query(); err != nil || done {
		t.Errorf("per-thread mark waited for the blocking stream's work: %v, %v", done, err)
	}
	ok(t, busy2.Sync())

	// Work on the per-thread stream itself: spin and record in one OS
	// thread's stream, and a stream of ours waits for it.
	ok(t, pts.Spin(20*time.Millisecond))
	ok(t, blocking.WaitStream(pts))
	ok(t, blocking.Sync())
	ok(t, pts.Sync())

	// Closed with the device.
	dev2 := must[*cuda.Device](t)(cuda.GetDevice(dev.Ordinal()))
	p2 := dev2.PerThreadStream()
	ok(t, dev2.Close())
	if err := p2.Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("per-thread stream of a closed device: %v", err)
	}
}
