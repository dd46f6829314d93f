//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

func TestWaitContext(t *testing.T) {
	dev := gpu(t)
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprintf("blocking=%v", blocking), func(t *testing.T) {
			s := must[*cuda.Stream](t)(dev.NewStream())
			defer s.Close()
			e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{BlockingSync: blocking}))
			defer e.Close()
			ok(t, s.Spin(time.Second))
			ok(t, s.Record(e))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			err := e.Wait(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("cancelled wait: %v", err)
			}
			if done, _ := e.Query(); done {
				t.Fatal("the work finished before the deadline; the test proves nothing")
			}
			// Already cancelled: returns at once with ctx.Err().
			cctx, ccancel := context.WithCancel(context.Background())
			ccancel()
			if err := e.Wait(cctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("wait with a cancelled context: %v", err)
			}
			select {
			case err := <-e.WaitChan(context.Background()):
				ok(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("WaitChan never delivered")
			}
			if done, _ := e.Query(); !done {
				t.Fatal("wait returned before completion")
			}
		})
	}
}

// GPU work that runs long, cancelled out of Wait(ctx): then Close of the
// event, the stream and the device return promptly, without spinning.
func TestLayerSpinCancelThenClose(t *testing.T) {
	gpu(t).Close()
	released(t)
	before := readCounters()
	for _, opts := range []cuda.EventOptions{{}, {BlockingSync: true}} {
		dev := onlyDevice(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		e := must[*cuda.Event](t)(dev.NewEvent(opts))
		// A short spin synchronised first: the context's setup and the
		// previous case's work (its device closed, not waited for) are
		// behind, so that the long spin starts when queued says.
		ok(t, s.Spin(time.Millisecond))
		ok(t, s.Sync())
		end := queued(t, s, 2*time.Second)
		ok(t, s.Record(e))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		t0 := time.Now()
		err := e.Wait(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%+v: Wait returned %v after %v, want context.DeadlineExceeded", opts, err, time.Since(t0))
		}
		// An order: the cancelled Wait returned with its work pending.
		if done, _ := e.Query(); done {
			t.Fatalf("%+v: the cancelled Wait returned after its work (2s) completed (%v after the call)", opts, time.Since(t0))
		}
		ok(t, prompt(t, fmt.Sprintf("%+v: Event.Close", opts), end, e.Close))
		ok(t, prompt(t, fmt.Sprintf("%+v: Stream.Close", opts), end, s.Close))
		ok(t, prompt(t, fmt.Sprintf("%+v: Device.Close", opts), end, dev.Close))
	}
	// The BlockingSync event's driver wait ends with the spin: then the
	// event is destroyed and the context released, with no call on it.
	settle(t, before)
}

// Cancellable long Waits, one after another on the same event, with their
// contexts' Done channels the same, new, or closed between Waits (each
// Wait selects on its own ctx.Done() and its job's channel; jobs and
// waiters are reused): each returns nil once the work is done, or its
// ctx's error on cancellation with the work still pending, never another
// Wait's; and the work
// a cancelled Wait left still completes for the next.
func TestLayerWaitCancelAcrossContexts(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	for _, opts := range []cuda.EventOptions{{}, {BlockingSync: true}} {
		e := must[*cuda.Event](t)(dev.NewEvent(opts))
		long := func(d time.Duration) {
			t.Helper()
			ok(t, s.Spin(d))
			ok(t, s.Record(e))
		}
		cancelled := func(ctx context.Context, what string, want error) {
			t.Helper()
			t0 := time.Now()
			err := e.Wait(ctx)
			if !errors.Is(err, want) {
				t.Fatalf("%+v: %s: Wait returned %v after %v, want %v", opts, what, err, time.Since(t0), want)
			}
			// An order: it returned with the work (a second) pending.
			if done, _ := e.Query(); done {
				t.Fatalf("%+v: %s: Wait returned only after the work completed (%v after the call)", opts, what, time.Since(t0))
			}
		}
		a, cancelA := context.WithCancel(context.Background())
		long(5 * time.Millisecond)
		ok(t, e.Wait(a)) // a new Done channel
		long(5 * time.Millisecond)
		ok(t, e.Wait(a)) // the same channel again
		cancelA()        // closed between Waits
		long(time.Second)
		cancelled(a, "a context cancelled before the Wait", context.Canceled)
		b, cancelB := context.WithTimeout(context.Background(), 30*time.Millisecond)
		cancelled(b, "a new context, cancelled during the Wait", context.DeadlineExceeded)
		cancelB()
		// The left work completes for a Wait that does not cancel.
		c, cancelC := context.WithTimeout(context.Background(), time.Minute)
		ok(t, e.Wait(c))
		if done, err := e.Query(); !done || err != nil {
			t.Fatalf("%+v: Wait returned before the work completed (%v, %v)", opts, done, err)
		}
		// Cancelled during Waits, again and again, on work that goes on.
		long(time.Second)
		for i := range 5 {
			d, cancelD := context.WithCancel(c)
			go func() {
				time.Sleep(5 * time.Millisecond)
				cancelD()
			}()
			cancelled(d, fmt.Sprintf("cancel %d during the Wait", i), context.Canceled)
		}
		ok(t, e.Wait(c))
		cancelC()
		ok(t, e.Close())
	}
}
