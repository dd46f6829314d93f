//go:build cgo

package gputest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// TestLayerWaitersEndWithContext: the waiters that long Waits use (a private
// stream and event each) go with their context, and the goroutine that
// hands the waiter threads' answers over ends: after
// four concurrent cancellable long Waits and the last Device's Close, the
// process has no more goroutines than before (and, on the fake driver, no
// more live driver handles or retains: settle).
func TestLayerWaitersEndWithContext(t *testing.T) {
	gpu(t).Close()
	released(t)
	before := readCounters()
	g0 := runtime.NumGoroutine()
	dev := onlyDevice(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ctx, cancel := context.WithCancel(context.Background())
	ok(t, s.Spin(20*time.Millisecond))
	ok(t, s.Record(e))
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- e.Wait(ctx) }()
	}
	for range 4 {
		ok(t, <-errs)
	}
	cancel()
	ok(t, e.Close())
	ok(t, s.Close())
	ok(t, dev.Close())
	n := runtime.NumGoroutine()
	for i := 0; i < 500 && n > g0; i++ { // the context's release runs on a goroutine of its own
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > g0 {
		t.Errorf("%d goroutines after the Device closed, %d before its long Waits", n, g0)
	}
	settle(t, before)
}

// Event.Sync asks the driver's query first, which answers complete work
// sooner than its sync: complete work costs no cuEventSynchronize, pending
// work waits in the driver's sync (which spins or sleeps as the event asks)
// and is complete when Sync returns. The fake counts the syncs.
func TestLayerSyncQueriesFirst(t *testing.T) {
	// One thread, so that the fake's wants-current mode finds the context
	// current for every call and counts one driver sync per Sync.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev := gpu(t)
	defer dev.Close()
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	for _, opts := range []cuda.EventOptions{{}, {BlockingSync: true}} {
		e := must[*cuda.Event](t)(dev.NewEvent(opts))
		ok(t, s.Record(e))
		ok(t, e.Sync()) // complete, or waited for once
		syncs, fake := fakeCounter("fakecuda_event_syncs")
		for range 3 {
			ok(t, e.Sync())
		}
		if n, _ := fakeCounter("fakecuda_event_syncs"); fake && n != syncs {
			t.Errorf("%+v: 3 Syncs of complete work made %d cuEventSynchronize calls, want 0", opts, n-syncs)
		}
		ok(t, s.Spin(300*time.Millisecond))
		ok(t, s.Record(e))
		if done, err := e.Query(); err != nil || done {
			t.Fatalf("%+v: Query behind a 300ms spin: %v, %v; want pending", opts, done, err)
		}
		ok(t, e.Sync())
		if n, _ := fakeCounter("fakecuda_event_syncs"); fake && n != syncs+1 {
			t.Errorf("%+v: a Sync of pending work made %d cuEventSynchronize calls, want 1", opts, n-syncs)
		}
		if done, err := e.Query(); err != nil || !done {
			t.Fatalf("%+v: Query after Sync returned: %v, %v; want complete", opts, done, err)
		}
		ok(t, e.Close())
	}
}
