//go:build cgo

package gputest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// The performance levers' semantics (docs/performance.md).

// TestLayerEventReuse: NewEvent may get the driver handle of a closed event
// (cuda/recycle.go), and then the event must be what a new one is: complete
// (never recorded), with the options asked for; a handle whose latest
// record may be pending is never reused. Checked with work pending behind
// the spin kernel, for each reusable option set: the new event must be
// complete while that work still runs (a handle kept with its record pending
// would not be). The handle is read from
// String, because Handle marks it not reusable. CI runs it on the fake
// driver, whose events stay pending behind the spin kernel too.
func TestLayerEventReuse(t *testing.T) {
	dev := gpu(t)
	const retired = 64 // the package's batch of retired events (cuda/guard.go: limboBatch)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	const work = 200 * time.Millisecond
	handleOf := func(e *cuda.Event) string { // "event 0x... of device ..."
		return strings.Fields(e.String())[1]
	}
	complete := func(what string, e *cuda.Event) {
		t.Helper()
		if done, err := e.Query(); err != nil || !done {
			t.Errorf("%s: Query = %v, %v; a new event is complete", what, done, err)
		}
	}
	// A closed event waits in its context's limbo until a batch of closes
	// flushes it (cuda/guard.go): retireBatch closes enough events for one
	// flush, and reusedOf takes the next events NewEvent hands out (up to
	// the handles kept), reporting whether one has handle h.
	retireBatch := func(opts cuda.EventOptions) {
		t.Helper()
		for range retired {
			ok(t, must[*cuda.Event](t)(dev.NewEvent(opts)).Close())
		}
	}
	reusedOf := func(opts cuda.EventOptions, h string) (*cuda.Event, []*cuda.Event) {
		t.Helper()
		var others []*cuda.Event
		for range 2 * retired {
			n := must[*cuda.Event](t)(dev.NewEvent(opts))
			if handleOf(n) == h {
				return n, others
			}
			others = append(others, n)
		}
		return nil, others
	}
	for _, opts := range []cuda.EventOptions{{}, {Timing: true}, {BlockingSync: true}, {Timing: true, BlockingSync: true}} {
		// Recorded behind pending work and closed: never reused.
		e := must[*cuda.Event](t)(dev.NewEvent(opts))
		ok(t, s.Spin(work))
		ok(t, s.Record(e))
		pendingHandle := handleOf(e)
		ok(t, e.Close())
		retireBatch(opts) // flushed with its record pending: destroyed
		for i := range 3 {
			n := must[*cuda.Event](t)(dev.NewEvent(opts))
			// The package never hands out a handle whose record may be
			// pending: a new event is complete while that work still runs.
			// The driver itself may give a new event the address of one
			// destroyed with work pending (seen on the H100 with
			// BlockingSync events); it is then a new, complete event.
			if handleOf(n) == pendingHandle {
				t.Logf("%+v: cuEventCreate gave event %d the address of the destroyed pending event", opts, i)
			}
			complete("a new event while a closed one's work is pending", n)
			defer n.Close() // keep the pending handle out of the next NewEvents
		}
		// Seen complete, then closed: reused, and as good as new.
		ok(t, s.Sync())
		e = must[*cuda.Event](t)(dev.NewEvent(opts))
		ok(t, s.Record(e))
		ok(t, e.Sync())
		h := handleOf(e)
		ok(t, e.Close())
		retireBatch(opts)
		n, others := reusedOf(opts, h)
		for _, o := range others {
			complete("an event from the reuse pool", o)
			ok(t, o.Close())
		}
		if n == nil {
			t.Fatalf("%+v: a closed event seen complete: its handle %s was not reused", opts, h)
		}
		complete("a reused event", n)
		if n.Options() != opts || n.Recorded() {
			t.Errorf("reused event: options %+v, recorded %v; want %+v, not recorded", n.Options(), n.Recorded(), opts)
		}
		// The options are the driver's too: timing works, or is refused.
		start := must[*cuda.Event](t)(dev.NewEvent(opts))
		ok(t, s.Record(start))
		ok(t, s.Spin(time.Millisecond))
		ok(t, s.Record(n))
		ok(t, n.Wait(t.Context()))
		d, err := n.Sub(start)
		switch {
		case opts.Timing && (err != nil || d <= 0):
			t.Errorf("%+v: Sub on a reused timing event: %v, %v", opts, d, err)
		case !opts.Timing && !errors.Is(err, cuda.ErrTimingDisabled):
			t.Errorf("%+v: Sub on a reused event without timing: %v, want ErrTimingDisabled", opts, err)
		}
		// Recorded again after being seen complete: pending, so not reused.
		ok(t, s.Spin(work))
		ok(t, s.Record(n))
		h = handleOf(n)
		ok(t, n.Close())
		ok(t, start.Close())
		retireBatch(opts)
		n, others = reusedOf(opts, h)
		for _, o := range others {
			complete("a new event after a pending one was closed", o)
			ok(t, o.Close())
		}
		if n != nil {
			t.Logf("%+v: cuEventCreate gave a new event the address of the destroyed pending event", opts)
			complete("a new event after a pending one was closed", n)
			ok(t, n.Close())
		}
		ok(t, s.Sync())
		// Recorded and complete, but never asked (the stream was synced):
		// the flush asks the driver, so reused.
		e = must[*cuda.Event](t)(dev.NewEvent(opts))
		ok(t, s.Record(e))
		ok(t, s.Sync())
		h = handleOf(e)
		ok(t, e.Close())
		retireBatch(opts)
		n, others = reusedOf(opts, h)
		for _, o := range others {
			ok(t, o.Close())
		}
		if n == nil {
			t.Fatalf("%+v: a closed event complete (its stream synced): its handle %s was not reused", opts, h)
		}
		complete("a reused event", n)
		ok(t, n.Close())
	}
}

// TestLayerEventReuseExternal: an event recorded or waited on with the EXTERNAL
// flags is never reused, even once seen complete: captured in a graph, the
// record or wait happens again at every launch, uncounted. Handles are
// compared, which is exact only on the fake driver (CI), whose handles never
// recur; the real driver may give a new event a destroyed one's address.
func TestLayerEventReuseExternal(t *testing.T) {
	if !onFake() {
		t.Skip("skipping: handle identity is exact only on the fake driver (TestGoLayerOnFakeDriver runs this)")
	}
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	other := must[*cuda.Stream](t)(dev.NewStream())
	defer other.Close()
	handleOf := func(e *cuda.Event) string { return strings.Fields(e.String())[1] }
	for name, use := range map[string]func(e *cuda.Event) error{
		"plain record (reused)": func(e *cuda.Event) error { return s.Record(e) },
		"RecordExternal":        func(e *cuda.Event) error { return s.Record(e, cuda.RecordExternal) },
		"WaitExternal": func(e *cuda.Event) error {
			if err := s.Record(e); err != nil {
				return err
			}
			return other.Wait(e, cuda.WaitExternal)
		},
	} {
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		// The fake, like some drivers, refuses the EXTERNAL flags outside
		// capture; the event is marked before the driver call either way.
		if err := use(e); err != nil && !errors.Is(err, driver.ErrorIllegalState) {
			t.Fatalf("%s: %v", name, err)
		}
		ok(t, e.Sync()) // seen complete
		h := handleOf(e)
		ok(t, e.Close())
		// A batch of closes flushes the limbo (cuda/guard.go), then the
		// handles kept are handed out again.
		const retired = 64
		for range retired {
			ok(t, must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{})).Close())
		}
		reused := false
		var next []*cuda.Event
		for range 2 * retired {
			n := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
			next = append(next, n)
			reused = reused || handleOf(n) == h
		}
		for _, n := range next {
			ok(t, n.Close())
		}
		if want := strings.HasSuffix(name, "(reused)"); reused != want {
			t.Errorf("%s: handle reused %v, want %v", name, reused, want)
		}
	}
}
