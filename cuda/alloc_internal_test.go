package cuda

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/hazard"
)

// Creating and closing an event allocates nothing per event: events and
// their handles come slabSize at a time, with one garbage-collection
// backstop per slab, and the closed event's driver handle (never recorded)
// is kept for the next event. No GPU needed: newEvent makes no driver call
// while the primary is open, nor does the destroy of a handle it keeps.
func TestNewEventAllocations(t *testing.T) {
	d := &Device{p: &primary{live: 1, devices: 1}}
	var keep *Event // the current slab stays reachable, as a program's latest event keeps it
	reused := 0
	n := testing.AllocsPerRun(slabSize*10, func() {
		e, err := newEvent(d, driver.Event(1), EventOptions{}, false, "create event")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		// Closed events wait in the limbo for a flush, one per limboBatch
		// closes; then their handles are kept. NewEvent would pop one here.
		d.p.mu.Lock()
		if h := d.p.reuse(driver.EventDisableTiming); h == 1 {
			reused++
		} else if h != 0 {
			t.Fatalf("kept handle %d, want 1", h)
		}
		d.p.mu.Unlock()
		keep = e
	})
	t.Logf("%v allocations per create+close", n)
	if n != 0 {
		t.Errorf("create+close allocates %v times per event, want 0 (amortised over a slab of %d)", n, slabSize)
	}
	if runs := slabSize*10 + 1; reused < runs-limboBatch {
		t.Errorf("%d of %d closed never-recorded events were kept for reuse, want all but the last batch (%d)", reused, runs, limboBatch)
	}
	d.p.flush(nil)
	d.p.mu.Lock()
	n0 := len(d.p.events.free[driver.EventDisableTiming%flagSets])
	d.p.mu.Unlock()
	if reused+n0 != slabSize*10+1 {
		t.Errorf("after a flush, %d reused and %d kept of %d closed", reused, n0, slabSize*10+1)
	}
	if d.p.open != nil || d.p.live != 1 || keep == nil {
		t.Errorf("the primary's list was not emptied: live %d", d.p.live)
	}
}

// Which closed events keep their driver handle for reuse: only those known
// complete. No GPU needed: a kept handle is no driver call; the others'
// destroy fails without a driver (the error is not the point here), and
// the handle is not kept.
func TestReuseOnlyComplete(t *testing.T) {
	p := &primary{live: 1, devices: 1}
	d := &Device{p: p}
	open := func(opts EventOptions) *Event {
		e, err := newEvent(d, driver.Event(7), opts, false, "create event")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	kept := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for i := range p.events.free {
			if len(p.events.free[i]) > 0 {
				p.events.free[i] = p.events.free[i][:0]
				return true
			}
		}
		return false
	}
	record := func(e *Event) { // what Record does around its driver call
		if !e.r.enter() {
			t.Fatal("enter refused")
		}
		e.r.recordExit()
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
		p.flush(nil)
		if got := kept(); got != c.want {
			t.Errorf("%s: handle kept %v, want %v", c.name, got, c.want)
		}
	}
	if p.open != nil || p.live != 1 {
		t.Errorf("the primary's list was not emptied: live %d", p.live)
	}
}

// The handle's life: Close with a call in flight returns at once and
// leaves the destroy to the call's exit; the destroy happens exactly once
// whoever sees the object closing and idle, also with Close racing with
// enters and exits. No driver needed: a device handle's destroy only drops
// its primary's live count (and the primary is not closing, so nothing is
// released).
func TestHandleFinishesOnce(t *testing.T) {
	p := &primary{live: 1}
	h := &handle{p: p, kind: kindDevice, state: new(atomic.Int64)}
	if !h.enter() {
		t.Fatal("enter on an open handle failed")
	}
	if closed, err := h.close(false); !closed || err != nil {
		t.Fatalf("close: %v %v", closed, err)
	}
	if p.live != 1 {
		t.Fatal("destroyed under a call in flight")
	}
	if h.enter() {
		t.Fatal("enter on a closed handle succeeded")
	}
	if closed, _ := h.close(false); closed {
		t.Fatal("closed twice")
	}
	h.exit()
	if p.live != 0 {
		t.Fatalf("the last exit did not destroy: live %d", p.live)
	}

	for round := 0; round < 200; round++ {
		p := &primary{live: 1}
		h := &handle{p: p, kind: kindDevice, state: new(atomic.Int64)}
		var wg sync.WaitGroup
		var closes atomic.Int32
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					if h.enter() {
						h.exit()
					}
					if i == 100+g+round%50 {
						if closed, _ := h.close(false); closed {
							closes.Add(1)
						}
					}
				}
			}()
		}
		wg.Wait()
		if closes.Load() != 1 || p.live != 0 || h.state.Load()&(finished|countMask) != finished {
			t.Fatalf("round %d: %d closes, live %d, state %#x", round, closes.Load(), p.live, h.state.Load())
		}
	}
}

// A flush leaves in the limbo a closed event that a hazard call holds and
// marks the call late, so the call says to flush when it returns: that
// flush finishes it (here: keeps its driver handle). A call on the closed
// event is refused, and says to flush too (a scan may have seen its slot).
// No driver needed: the held call is hazard.SpinFn.
func TestFlushKeepsHeldEvents(t *testing.T) {
	if !hazard.Setup() {
		t.Skip("skipping: hazard calls need cgo")
	}
	hazard.SetFn(hazard.OpTest, hazard.SpinFn())
	p := &primary{live: 1, devices: 1}
	d := &Device{p: p}
	e, err := newEvent(d, driver.Event(5), EventOptions{}, false, "create event")
	if err != nil {
		t.Fatal(err)
	}
	arg := hazard.Words(3) // SpinFn's counter, hold flag, spinning flag
	defer hazard.FreeWords(arg)
	arg[1].Store(1)
	done := make(chan int32)
	go func() { done <- hazard.Call1(hazard.OpTest, e.r.word(), hazard.Addr(&arg[0].Int64)) }()
	for arg[2].Load() == 0 {
		runtime.Gosched()
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	limbo := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.limbo)
	}
	p.flush(nil)
	if n := limbo(); n != 1 || p.live != 2 {
		t.Fatalf("held by a call, the closed event must stay in the limbo: %d in it, live %d", n, p.live)
	}
	if r, flush := hazard.Split(hazard.Call1(hazard.OpTest, e.r.word(), hazard.Addr(&arg[0].Int64))); r != hazard.Refused || !flush {
		t.Fatalf("a call on the closed event: %d, flush %v; want refused, flush", r, flush)
	}
	arg[1].Store(0)
	if r, flush := hazard.Split(<-done); r != 0 || !flush {
		t.Fatalf("the call the event was closed under: %d, flush %v; want 0, flush", r, flush)
	}
	p.flush(nil)
	p.mu.Lock()
	kept := p.reuse(driver.EventDisableTiming)
	p.mu.Unlock()
	if n := limbo(); n != 0 || p.live != 1 || kept != 5 {
		t.Fatalf("after the call returned and flushed: %d in the limbo, live %d, kept handle %d (want 0, 1, 5)", n, p.live, kept)
	}
}

// Wait's spin adapts to how long the context's latest Wait slept.
func TestWaitSpinAdapts(t *testing.T) {
	p := &primary{}
	if p.longWaits.Load() {
		t.Fatal("a new context starts with long waits")
	}
	p.sleptFor(waitLongSlept)
	if !p.longWaits.Load() {
		t.Fatalf("after a wait that slept %v: the spin stays long", waitLongSlept)
	}
	p.sleptFor(waitLongSlept - time.Microsecond)
	if p.longWaits.Load() {
		t.Fatal("after a short sleep: the spin stays short")
	}
}

// A refused call flushes its context only where the limbo holds its
// object: calls on an event closed long ago leave a batch that is not full
// alone. No driver needed.
func TestRefusedFlushesOnlyItsOwn(t *testing.T) {
	if !hazard.Setup() {
		t.Skip("skipping: hazard calls need cgo")
	}
	p := &primary{live: 1, devices: 1}
	d := &Device{p: p}
	var evs [2]*Event
	for i := range evs {
		e, err := newEvent(d, driver.Event(7+i), EventOptions{}, false, "create event")
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = e
	}
	old, waiting := evs[0], evs[1]
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	p.flush(nil) // old is kept for reuse: out of the limbo
	if err := waiting.Close(); err != nil {
		t.Fatal(err)
	}
	limbo := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.limbo)
	}
	if n := limbo(); n != 1 {
		t.Fatalf("a closed event waits for its batch: %d in the limbo, want 1", n)
	}
	if r := hotResult(hazard.Refused, old.r, nil); r != hazard.Refused || limbo() != 1 {
		t.Fatalf("a refused call on an event no longer in the limbo: %d, %d in the limbo; want refused, 1 (no flush)", r, limbo())
	}
	if _, err := old.Query(); !errors.Is(err, ErrClosed) || limbo() != 1 {
		t.Fatalf("Query on the event closed long ago: %v, %d in the limbo; want ErrClosed, 1", err, limbo())
	}
	if r := hotResult(hazard.Refused, waiting.r, nil); r != hazard.Refused || limbo() != 0 {
		t.Fatalf("a refused call on an event in the limbo: %d, %d in the limbo; want refused, 0 (flushed)", r, limbo())
	}
}
