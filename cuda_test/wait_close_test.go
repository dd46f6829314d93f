//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// waitMode is one way a long Wait runs, set up on a device for a test.
type waitMode struct {
	name    string
	opts    cuda.EventOptions
	adopted bool // in an adopted context (AdoptContext)
	polled  bool // every waiter thread is busy (MaxBlockedWaits other Waits): Waits are polled
}

var waitModes = []waitMode{
	{name: "blocked, private event", opts: cuda.EventOptions{}},
	{name: "blocked, BlockingSync event", opts: cuda.EventOptions{BlockingSync: true}},
	{name: "polled", opts: cuda.EventOptions{}, polled: true},
	{name: "adopted context", opts: cuda.EventOptions{}, adopted: true},
	{name: "adopted context, BlockingSync event", opts: cuda.EventOptions{BlockingSync: true}, adopted: true},
	{name: "adopted context, polled", opts: cuda.EventOptions{}, adopted: true, polled: true},
}

// modeDevice opens the mode's Device: device 0's primary context
// (GetDevice), or that context adopted (AdoptContext) with no GetDevice
// open, retained through the driver, as another library would hold it. It
// returns the Device and what releases the retain.
func modeDevice(t *testing.T, m waitMode) (*cuda.Device, func()) {
	t.Helper()
	if !m.adopted {
		dev := onlyDevice(t)
		t.Cleanup(func() { dev.Close() }) // should the test fail first
		return dev, func() {}
	}
	gpu(t).Close()
	released(t)
	cudev, err := driver.DeviceGet(0)
	ok(t, err)
	ctx, err := driver.DevicePrimaryCtxRetain(cudev)
	ok(t, err)
	dev, err := cuda.AdoptContext(ctx)
	if err != nil {
		driver.DevicePrimaryCtxRelease(cudev)
		t.Fatal(err)
	}
	var once sync.Once
	unretain := func() {
		once.Do(func() {
			// The creator lets the context go once the package is done
			// with it (Done), as AdoptContext says.
			select {
			case <-dev.Done():
			case <-time.After(time.Minute):
				t.Error("an adopted context's Done was not closed a minute after its last Device closed")
			}
			ok(t, driver.DevicePrimaryCtxRelease(cudev))
		})
	}
	t.Cleanup(func() { // should the test fail first
		dev.Close()
		unretain()
	})
	return dev, unretain
}

// TestLayerWaitCloseRule: a Close during a Wait never ends it, in every mode of
// Wait (blocked on a private event or on a BlockingSync event, polled) and
// in a primary and an adopted context: the Close returns with the work
// still pending, and the Wait returns nil once the work has completed (not
// before), or ctx.Err() when its ctx is cancelled after the Close. The
// Close is the event's, or the Device's (which closes the event). The mode
// each Wait took is checked with the waiter threads' counts. Every check is
// of a state or an order; where a busy machine makes a case prove nothing
// (its Wait reached the waiter threads, or its Close returned, only after
// the work completed), the case runs again with twice the work.
func TestLayerWaitCloseRule(t *testing.T) {
	for _, m := range waitModes {
		for _, closeDev := range []bool{false, true} {
			for _, cancellable := range []bool{false, true} {
				name := fmt.Sprintf("%s/close device %v/cancellable %v", m.name, closeDev, cancellable)
				t.Run(name, func(t *testing.T) {
					for work := 300 * time.Millisecond; !closeDuringWait(t, m, closeDev, cancellable, work); work *= 2 {
						if work >= 5*time.Second {
							t.Fatalf("with up to %v of work, the Close or the Wait returned after the work's end in every run: it waits for the work (or the machine stalls for seconds)", work)
						}
						t.Logf("the machine stalled past the work's end (%v): running the case again with %v", work, 2*work)
					}
				})
			}
		}
	}
}

// closeDuringWait runs one case of TestLayerWaitCloseRule with work of the
// given length; false if the case proved nothing (the machine stalled past
// the work's end before the Wait parked or the Close returned).
func closeDuringWait(t *testing.T, m waitMode, closeDev, cancellable bool, work time.Duration) bool {
	gpu(t).Close()
	released(t)
	before := readCounters()
	dev, unretain := modeDevice(t, m)
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(m.opts))
	holdWork := 3 * work
	holders := make(chan error, cuda.MaxBlockedWaits)
	var holdEnd time.Time
	if m.polled {
		// MaxBlockedWaits Waits with a background ctx, blocked on other
		// work, take every waiter thread.
		s2 := must[*cuda.Stream](t)(dev.NewStream())
		hold := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		holdEnd = queued(t, s2, holdWork)
		ok(t, s2.Record(hold))
		stats := cuda.ReadWaiterStats()
		for range cuda.MaxBlockedWaits {
			go func() { holders <- hold.Wait(context.Background()) }()
		}
		submitted(t, stats, cuda.MaxBlockedWaits, time.Minute)
		ok(t, hold.Close())
		ok(t, s2.Close())
	}
	// The work's end is counted from before it is queued, so that a Wait
	// returning before it really is early.
	end := queued(t, s, work)
	ok(t, s.Record(e))
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if cancellable {
		ctx, cancel = context.WithCancel(context.Background())
	}
	defer cancel()
	stats := cuda.ReadWaiterStats()
	res := make(chan error, 1)
	go func() { res <- e.Wait(ctx) }()
	submitted(t, stats, 1, time.Minute)
	// The case proves nothing if the work (or, polled, the holders' work)
	// completed before the Wait parked.
	retry := func() bool {
		cancel()
		<-res
		if !closeDev {
			e.Close()
			s.Close()
			dev.Close()
		}
		for range cuda.MaxBlockedWaits * btoi(m.polled) {
			<-holders
		}
		time.Sleep(time.Until(holdEnd))
		unretain()
		settle(t, before)
		return false
	}
	if done, _ := e.Query(); done || m.polled && !time.Now().Before(holdEnd) {
		return retry()
	}
	st := cuda.ReadWaiterStats()
	blocked := st.BlockedTotal > stats.BlockedTotal
	// Polled: where no thread may block, and for a cancellable Wait in an
	// adopted context; blocked otherwise.
	if wantBlocked := !m.polled && !(m.adopted && cancellable); blocked != wantBlocked {
		t.Fatalf("the Wait was blocked %v, want %v (%d blocked, %d polled)", blocked, wantBlocked, st.BlockedTotal-stats.BlockedTotal, st.PolledTotal-stats.PolledTotal)
	}
	what, closeFn := "Event.Close during the Wait", e.Close
	if closeDev {
		what, closeFn = "Device.Close during the Wait", dev.Close
	}
	ok(t, closeFn())
	if !time.Now().Before(end) {
		// Returned after the work's end: it waited for it, or the machine
		// stalled; with twice the work, a Close that waits still does.
		t.Logf("%s returned after the work's end", what)
		return retry()
	}
	select {
	case err := <-res:
		t.Fatalf("the Wait returned %v after a Close, before its work (%v) completed", err, work)
	case <-time.After(30 * time.Millisecond):
	}
	if cancellable {
		// Cancelled after the Close: returns ctx.Err(), with the work
		// pending still.
		cancel()
		select {
		case err := <-res:
			if err == nil && !time.Now().Before(end) {
				// The work completed before the cancellation reached the
				// Wait (a busy machine): either answer is right then.
				t.Logf("the cancelled Wait saw its work complete first")
				res <- err // retry receives the Wait's result
				return retry()
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the Wait cancelled after the Close returned %v, want context.Canceled", err)
			}
			if !time.Now().Before(end) {
				t.Logf("the cancelled Wait returned after the work's end")
				res <- err // retry receives the Wait's result
				return retry()
			}
		case <-time.After(time.Minute):
			t.Fatal("the Wait cancelled after the Close did not return in a minute")
		}
	} else {
		select {
		case err := <-res:
			ok(t, err)
			if now := time.Now(); now.Before(end) {
				t.Fatalf("the Wait returned nil %v before its work (%v) could complete", end.Sub(now), work)
			}
		case <-time.After(time.Minute + work):
			t.Fatal("the Wait never returned")
		}
	}
	if m.polled {
		for range cuda.MaxBlockedWaits {
			ok(t, <-holders) // a Close during a Wait does not end it
		}
	}
	if !closeDev {
		ok(t, s.Close())
		ok(t, dev.Close())
	}
	// Done with the context: a cancelled blocked Wait's thread sleeps on
	// until the work completes, holding the event (and so the context).
	time.Sleep(time.Until(end))
	unretain()
	settle(t, before)
	return true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
