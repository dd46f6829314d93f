//go:build cgo

package gputest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// Close racing with calls from other goroutines: every call either works or
// returns ErrClosed, and nothing reaches the driver with a destroyed handle.
func TestLayerCloseRacesWithUse(t *testing.T) {
	dev := gpu(t)
	for round := 0; round < 20; round++ {
		s := must[*cuda.Stream](t)(dev.NewStream())
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		var wg sync.WaitGroup
		errs := make(chan error, 400)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					for _, err := range []error{s.Record(e), e.Sync(), s.Wait(e), func() error { _, err := e.Query(); return err }()} {
						if err != nil && !errors.Is(err, cuda.ErrClosed) {
							errs <- err
						}
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		ok(t, e.Close())
		ok(t, s.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

// A stream closed while a call holds it (a Sync on busy work) is destroyed
// once that call returns, asked for by the call itself: no later Close or
// flush is needed. (The flush that found it held marked the call late:
// internal/lifetime; the call asks the flusher when it returns.)
func TestLayerClosedDuringCall(t *testing.T) {
	gpu(t).Close()
	released(t)
	dev := onlyDevice(t)
	defer dev.Close()
	s := must[*cuda.Stream](t)(dev.NewStream())
	end := queued(t, s, pending)
	before := readCounters()
	done := make(chan error, 1)
	go func() { done <- s.Sync() }()
	// Until the Sync waits in the driver, holding the stream: the fake
	// counts its waiting syncs; on a GPU, a pause.
	if _, fake := fakeCounter("fakecuda_stream_syncs_waiting"); fake {
		for n, _ := fakeCounter("fakecuda_stream_syncs_waiting"); n == 0; n, _ = fakeCounter("fakecuda_stream_syncs_waiting") {
			select {
			case err := <-done:
				t.Fatalf("the Sync returned (%v) before it waited in the driver", err)
			case <-time.After(time.Millisecond):
			}
		}
	} else {
		time.Sleep(50 * time.Millisecond)
	}
	ok(t, prompt(t, "Stream.Close during a Sync", end, s.Close))
	if err := <-done; err != nil {
		t.Fatalf("a Sync in flight during Close returned %v, want nil", err)
	}
	if !before.ok {
		t.Log("not on the fake driver: the destroy is counted there (CI)")
		return
	}
	// The Sync asked for the flush as it returned: the stream is destroyed
	// by the flusher, with nothing else asking. A minute without it is a
	// failure, never a figure.
	deadline := time.Now().Add(time.Minute)
	now := readCounters()
	for ; now.live != before.live-1 && time.Now().Before(deadline); now = readCounters() {
		time.Sleep(time.Millisecond)
	}
	if now.live != before.live-1 || now.stale != before.stale {
		t.Fatalf("after the Sync returned: %d events and streams alive (want %d: the closed stream destroyed), %d calls with a destroyed handle (want %d)",
			now.live, before.live-1, now.stale, before.stale)
	}
}
