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
// (cuda/recycle.go), and whatever it hands out must be what a new event is:
// complete (never recorded), with the options asked for, which the driver
// agrees with (timing works, or is refused); a handle whose latest record
// may be pending is never handed out. Whether a given NewEvent reuses a
// handle depends on when the closed events are flushed, and the driver may
// itself give a new event a destroyed one's address, so on a GPU the
// handles say nothing about reuse: the test asserts the states above, for
// every event handed out while closed ones, pending or complete, are being
// flushed, for each reusable option set. The pending case is checked while
// the work still runs (the stream's Query says so after the checks; if the
// work had completed, the checks prove nothing and run again with longer
// work). On the fake driver, whose handles never recur and which counts
// its creates, it also asserts that the pending handle never comes back,
// and that creating and closing in a loop (recorded and seen complete, or
// never recorded) reaches the driver's create for at most a tenth of the
// events once warm: the reuse the package exists for.
func TestLayerEventReuse(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	// Creates and closes: several batches of the package's flushes of
	// closed events (cuda/internal/lifetime: LimboBatch, 64).
	const batch, churn = 64, 4 * 64
	handleOf := func(e *cuda.Event) string { // "event 0x... of device ...": Handle would mark it not reusable
		return strings.Fields(e.String())[1]
	}
	_, fake := fakeCounter("fakecuda_event_creates")
	asNew := func(what string, e *cuda.Event, opts cuda.EventOptions) {
		t.Helper()
		if done, err := e.Query(); err != nil || !done {
			t.Errorf("%+v, %s: Query = %v, %v; a new event is complete", opts, what, done, err)
		}
		if e.Options() != opts || e.Recorded() {
			t.Errorf("%+v, %s: options %+v, recorded %v; want %+v, not recorded", opts, what, e.Options(), e.Recorded(), opts)
		}
	}
	for _, opts := range []cuda.EventOptions{{}, {Timing: true}, {BlockingSync: true}, {Timing: true, BlockingSync: true}} {
		// Recorded behind work still running, and closed: never handed
		// out, though the creates flush it.
		for work := 300 * time.Millisecond; ; work *= 2 {
			e := must[*cuda.Event](t)(dev.NewEvent(opts))
			ok(t, s.Spin(work))
			ok(t, s.Record(e))
			pending := handleOf(e)
			ok(t, e.Close())
			for range churn {
				n := must[*cuda.Event](t)(dev.NewEvent(opts))
				asNew("a new event while a closed one's work is pending", n, opts)
				if fake && handleOf(n) == pending {
					// Kept, so complete when it was flushed: a bug only if
					// its record is pending still (the last work on s).
					if done, err := s.Query(); err != nil || !done {
						t.Fatalf("%+v: the handle of an event closed with its record pending was handed out while the record was pending", opts)
					}
				}
				ok(t, n.Close())
			}
			done, err := s.Query()
			ok(t, err)
			if !done {
				break // checked while the work ran
			}
			if work >= 5*time.Second {
				t.Fatalf("%+v: the work (%v) completed before %d creates did, every time", opts, work, churn)
			}
			t.Logf("%+v: the work (%v) completed before the checks did: again with longer work", opts, work)
		}
		ok(t, s.Sync())
		// Recorded and seen complete, or never recorded, then closed: what
		// comes back is as good as new, and (on the fake driver) comes
		// back instead of a create.
		creates := func() int64 { n, _ := fakeCounter("fakecuda_event_creates"); return n }
		var warm int64
		for i := range churn {
			if i == batch {
				warm = creates()
			}
			e := must[*cuda.Event](t)(dev.NewEvent(opts))
			asNew("an event created after others were closed", e, opts)
			if i%2 == 0 {
				ok(t, s.Record(e))
				ok(t, e.Sync())
			}
			ok(t, e.Close())
		}
		if n := creates() - warm; fake && n > (churn-batch)/10 {
			t.Errorf("%+v: %d of %d creates and closes, once warm, reached the driver's create; the package keeps closed complete events' handles for the next create", opts, n, churn-batch)
		}
		// The driver agrees with the options of what is handed out: timing
		// works on the events of a Timing set, and is refused on the others.
		for range 2 * batch {
			start := must[*cuda.Event](t)(dev.NewEvent(opts))
			end := must[*cuda.Event](t)(dev.NewEvent(opts))
			ok(t, s.Record(start))
			ok(t, s.Spin(time.Microsecond))
			ok(t, s.Record(end))
			ok(t, end.Sync())
			d, err := end.Sub(start)
			switch {
			case opts.Timing && (err != nil || d < 0):
				t.Fatalf("%+v: Sub on events handed out after others were closed: %v, %v", opts, d, err)
			case !opts.Timing && !errors.Is(err, cuda.ErrTimingDisabled):
				t.Fatalf("%+v: Sub on events without timing: %v, want ErrTimingDisabled", opts, err)
			}
			ok(t, start.Close())
			ok(t, end.Close())
		}
	}
}

// TestLayerEventReuseExternal: an event recorded or waited on with the EXTERNAL
// flags is never reused, even once seen complete: captured in a graph, the
// record or wait happens again at every launch, uncounted; a plain record
// seen complete is. Handles are compared, which is exact only on the fake
// driver (CI), whose handles never recur; the real driver may give a new
// event a destroyed one's address. Each try runs in a context of its own,
// where nothing but the test closes events: the event, then 63 IPC events
// (never kept), then a create of the event's options, which finds no kept
// handle and so flushes the 64 first (cuda/internal/lifetime: Help) and gets
// the event's handle if it was kept. A flush the package's flusher runs
// meanwhile (a call of the test's thread told to ask for one, by a mark a
// flush left on the thread earlier) would keep it too, but the create
// would not wait for it: so a case that wants the handle reused has three
// tries, each in a new context, and one that wants it never reused fails
// at the first reuse.
func TestLayerEventReuseExternal(t *testing.T) {
	if !onFake() {
		t.Skip("skipping: handle identity is exact only on the fake driver (TestGoLayerOnFakeDriver runs this)")
	}
	gpu(t).Close()
	handleOf := func(e *cuda.Event) string { return strings.Fields(e.String())[1] }
	// try runs one case in a context of its own and reports whether the
	// event's handle came back.
	try := func(name string, use func(s, other *cuda.Stream, e *cuda.Event) error) bool {
		released(t)
		dev := must[*cuda.Device](t)(cuda.GetDevice(0))
		defer func() {
			ok(t, dev.Close())
			select {
			case <-dev.Done():
			case <-time.After(time.Minute):
				t.Fatal("the context was not released a minute after its last Device closed")
			}
		}()
		s := must[*cuda.Stream](t)(dev.NewStream())
		defer s.Close()
		other := must[*cuda.Stream](t)(dev.NewStream())
		defer other.Close()
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		// The fake, like some drivers, refuses the EXTERNAL flags outside
		// capture; the event is marked before the driver call either way.
		if err := use(s, other, e); err != nil && !errors.Is(err, driver.ErrorIllegalState) {
			t.Fatalf("%s: %v", name, err)
		}
		ok(t, e.Sync()) // seen complete
		h := handleOf(e)
		ok(t, e.Close())
		for range 63 {
			ok(t, must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{IPC: true})).Close())
		}
		n := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		defer n.Close()
		return handleOf(n) == h
	}
	for name, use := range map[string]func(s, other *cuda.Stream, e *cuda.Event) error{
		"plain record (reused)": func(s, _ *cuda.Stream, e *cuda.Event) error { return s.Record(e) },
		"RecordExternal":        func(s, _ *cuda.Stream, e *cuda.Event) error { return s.Record(e, cuda.RecordExternal) },
		"WaitExternal": func(s, other *cuda.Stream, e *cuda.Event) error {
			if err := s.Record(e); err != nil {
				return err
			}
			return other.Wait(e, cuda.WaitExternal)
		},
	} {
		want := strings.HasSuffix(name, "(reused)")
		tries := 1
		if want {
			tries = 3
		}
		reused := false
		for range tries {
			if reused = try(name, use); reused {
				break
			}
		}
		if reused != want {
			t.Errorf("%s: handle reused %v, want %v", name, reused, want)
		}
	}
}
