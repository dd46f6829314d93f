package cuda

import (
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// Creating and closing an event allocates nothing per event: events and
// their handles come slabSize at a time, with one garbage-collection
// backstop per slab, and the closed event's driver handle (never recorded)
// is kept for the next event. No GPU needed: NewEvent's reuse makes no
// driver call, nor does the flush that keeps never-recorded handles; where
// none is kept yet, newEvent stands for the driver's create.
func TestNewEventAllocations(t *testing.T) {
	d := newDevice(newCtxState(0, 0, 0, false))
	f := driver.EventDisableTiming
	var keep *Event // the current slab stays reachable, as a program's latest event keeps it
	reused, runs := 0, 0
	n := testing.AllocsPerRun(slabSize*10, func() {
		runs++
		// NewEvent's first step: a kept handle, after flushing the closed
		// events itself once a batch of them waits.
		e, err := d.p.reuseEvent(d, operand{r: &d.h, name: "device"}, EventOptions{}, f, "create event")
		if err != nil {
			t.Fatal(err)
		}
		if e != nil {
			reused++
			if e.h != 1 {
				t.Fatalf("kept handle %d, want 1", e.h)
			}
		} else if e, err = newEvent(d, driver.Event(1), EventOptions{}, false, "create event"); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		keep = e
	})
	t.Logf("%v allocations per create+close; %d of %d reused a kept handle", n, reused, runs)
	if n != 0 {
		t.Errorf("create+close allocates %v times per event, want 0 (amortised over a slab of %d)", n, slabSize)
	}
	// The first batch is made before a handle is kept; then every create
	// finds one (the create that finds none flushes the batch waiting).
	if reused < runs-lifetime.LimboBatch {
		t.Errorf("%d of %d creates reused a kept handle, want all but the first batch (%d)", reused, runs, lifetime.LimboBatch)
	}
	d.p.life.Flush()
	d.p.life.Mu.Lock()
	n0 := d.p.life.Kept(uint32(f))
	d.p.life.Mu.Unlock()
	if created := runs - reused; n0 != min(created, lifetime.ReuseMax) {
		t.Errorf("after a flush, %d handles kept; %d were created, at most %d are kept", n0, created, lifetime.ReuseMax)
	}
	if d.p.life.Open != nil || d.p.life.Live != 1 || keep == nil {
		t.Errorf("the context's list was not emptied: live %d", d.p.life.Live)
	}
}

// Which closed events keep their driver handle for reuse: only those known
// complete. No GPU needed: a kept handle is no driver call; the others'
// destroy fails without a driver (the error is not the point here), and
// the handle is not kept.
func TestReuseOnlyComplete(t *testing.T) {
	p := newCtxState(0, 0, 0, false)
	d := &Device{p: p}
	open := func(opts EventOptions) *Event {
		e, err := newEvent(d, driver.Event(7), opts, false, "create event")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	kept := func() bool {
		p.life.Mu.Lock()
		defer p.life.Mu.Unlock()
		any := false
		for _, o := range []EventOptions{{}, {IPC: true}} {
			f, _ := o.flags()
			for p.life.Reuse(uint32(f)) != 0 {
				any = true
			}
		}
		return any
	}
	record := func(e *Event) { // what Record does around its driver call
		if !e.r.Enter() {
			t.Fatal("enter refused")
		}
		e.r.RecordExit()
	}
	for _, c := range []struct {
		name string
		use  func(e *Event)
		opts EventOptions
		want bool
	}{
		{"never recorded", func(*Event) {}, EventOptions{}, true},
		// Recorded: the flush asks the driver (cuda_test's TestLayerEventReuse
		// has it answer both ways); here there is none, and a failed query
		// keeps nothing.
		{"recorded, the driver's query failing", record, EventOptions{}, false},
		{"handle taken", func(e *Event) { e.Handle() }, EventOptions{}, false},
		{"IPC", func(*Event) {}, EventOptions{IPC: true}, false},
	} {
		e := open(c.opts)
		c.use(e)
		e.Close()
		p.life.Flush()
		if got := kept(); got != c.want {
			t.Errorf("%s: handle kept %v, want %v", c.name, got, c.want)
		}
	}
	if p.life.Open != nil || p.life.Live != 1 {
		t.Errorf("the context's list was not emptied: live %d", p.life.Live)
	}
}

// Wait's spin adapts to how long the context's latest Wait slept.
func TestWaitSpinAdapts(t *testing.T) {
	p := newCtxState(0, 0, 0, false)
	if p.waits.long.Load() {
		t.Fatal("a new context starts with long waits")
	}
	p.sleptFor(waitLongSlept)
	if !p.waits.long.Load() {
		t.Fatalf("after a wait that slept %v: the spin stays long", waitLongSlept)
	}
	p.sleptFor(waitLongSlept - time.Microsecond)
	if p.waits.long.Load() {
		t.Fatal("after a short sleep: the spin stays short")
	}
}
