package lifetime

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// owner records what a Domain asks of its Owner.
type owner struct {
	mu        sync.Mutex
	destroyed []uintptr
	complete  bool // Complete's answer
	asked     int
	released  []uintptr
	releases  int
}

func (o *owner) Destroy(h *Handle) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.destroyed = append(o.destroyed, h.H)
	return nil
}

func (o *owner) Complete(*Handle) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked++
	return o.complete
}

func (o *owner) Release(kept []uintptr) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.released = append(o.released, kept...)
	o.releases++
}

// domain is a Domain with one live Device handle, and its owner.
func domain() (*Domain, *owner) {
	o := &owner{}
	d := &Domain{}
	d.Init(o, 1)
	return d, o
}

// event makes an event handle of d, live (as the cuda package's slabs do).
func event(d *Domain, h uintptr, flags uint32) *Handle {
	d.Mu.Lock()
	d.Live++
	d.Mu.Unlock()
	return &Handle{State: &Words(1)[0].Int64, D: d, H: h, Kind: KindEvent, Flags: flags}
}

// Close with a call in flight returns at once and leaves the retire to the
// call's exit; the retire happens exactly once whoever sees the object
// closing and idle, also with Close racing with enters and exits.
func TestHandleFinishesOnce(t *testing.T) {
	d, _ := domain()
	h := &Handle{D: d, Kind: KindDevice, State: new(atomic.Int64)}
	if !h.Enter() {
		t.Fatal("enter on an open handle failed")
	}
	if closed, err := h.Close(false); !closed || err != nil {
		t.Fatalf("close: %v %v", closed, err)
	}
	if d.Live != 1 {
		t.Fatal("retired under a call in flight")
	}
	if h.Enter() {
		t.Fatal("enter on a closed handle succeeded")
	}
	if closed, _ := h.Close(false); closed {
		t.Fatal("closed twice")
	}
	h.Exit()
	if d.Live != 0 {
		t.Fatalf("the last exit did not retire: live %d", d.Live)
	}

	for round := range 200 {
		d, _ := domain()
		h := &Handle{D: d, Kind: KindDevice, State: new(atomic.Int64)}
		var wg sync.WaitGroup
		var closes atomic.Int32
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					if h.Enter() {
						h.Exit()
					}
					if i == 100+g+round%50 {
						if closed, _ := h.Close(false); closed {
							closes.Add(1)
						}
					}
				}
			})
		}
		wg.Wait()
		if closes.Load() != 1 || d.Live != 0 || h.State.Load()&(Finished|CountMask) != Finished {
			t.Fatalf("round %d: %d closes, live %d, state %#x", round, closes.Load(), d.Live, h.State.Load())
		}
	}
}

// Which retired events keep their driver handle: the complete ones (never
// recorded, or recorded and Complete says so), not those marked NoReuse or
// closed by their device, none once the Domain is closing; the others are
// destroyed. The last drop of a closing Domain releases the kept handles.
func TestFlushKeepsCompleteEvents(t *testing.T) {
	for _, c := range []struct {
		name     string
		bits     int64
		complete bool
		byDevice bool
		want     bool // kept
		asks     bool // Complete asked
	}{
		{"never recorded", 0, false, false, true, false},
		{"recorded, complete", Recorded, true, false, true, true},
		{"recorded, pending", Recorded, false, false, false, true},
		{"no reuse", NoReuse, true, false, false, false},
		{"closed by its device", 0, true, true, false, false},
	} {
		d, o := domain()
		o.complete = c.complete
		h := event(d, 7, 2)
		h.State.Or(c.bits)
		if _, err := h.Close(c.byDevice); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(nil); err != nil {
			t.Fatal(err)
		}
		d.Mu.Lock()
		kept, limbo, live := d.Kept(2), len(d.limbo), d.Live
		d.Mu.Unlock()
		if got := kept == 1; got != c.want || limbo != 0 || live != 1 {
			t.Errorf("%s: kept %v (want %v), %d in the limbo, live %d (want 0, 1)", c.name, got, c.want, limbo, live)
		}
		if destroyed := len(o.destroyed) == 1; destroyed == c.want || (o.asked > 0) != c.asks {
			t.Errorf("%s: destroyed %v, Complete asked %d times", c.name, destroyed, o.asked)
		}
		// The last Device goes: the kept handle goes to Release, once.
		d.Mu.Lock()
		d.Closing = true
		d.Mu.Unlock()
		dev := &Handle{D: d, Kind: KindDevice, State: new(atomic.Int64)}
		dev.Close(false)
		if o.releases != 1 || (len(o.released) == 1) != c.want {
			t.Errorf("%s: %d releases with %v kept", c.name, o.releases, o.released)
		}
	}
}

// Closed events wait for a batch of LimboBatch (or the Domain closing);
// a stream is flushed at once.
func TestLimboBatch(t *testing.T) {
	d, o := domain()
	for i := range LimboBatch - 1 {
		event(d, uintptr(i+1), 0).Close(false)
	}
	if n := d.Limbo(); n != LimboBatch-1 {
		t.Fatalf("%d in the limbo before the batch is full, want %d", n, LimboBatch-1)
	}
	s := NewHandle(d, 0x500, KindStream, &d.Open)
	d.Mu.Lock()
	d.Link(s)
	d.Mu.Unlock()
	s.Close(false)
	d.Mu.Lock()
	kept := d.Kept(0)
	d.Mu.Unlock()
	if n := d.Limbo(); n != 0 || kept != LimboBatch-1 || len(o.destroyed) != 1 || o.destroyed[0] != 0x500 || d.Open != nil {
		t.Fatalf("after a stream's close: %d in the limbo, %d kept, destroyed %#x, open list %v", n, kept, o.destroyed, d.Open)
	}
}

// A flush leaves in the limbo a closed event that a hazard call holds and
// marks the call late, so the call says to flush when it returns: that
// flush finishes it (here: keeps its driver handle). A call on the closed
// event is refused, and says to flush too (a scan may have seen its slot).
func TestFlushKeepsHeldEvents(t *testing.T) {
	if !Setup() {
		t.Skip("skipping: hazard calls need cgo on Linux")
	}
	SetFn(OpTest, SpinFn())
	d, _ := domain()
	e := event(d, 5, 2)
	arg := Words(3) // SpinFn's counter, hold flag, spinning flag
	defer FreeWords(arg)
	arg[1].Store(1)
	done := make(chan int32)
	go func() { done <- Call1(OpTest, e.Word(), Addr(&arg[0].Int64)) }()
	for arg[2].Load() == 0 {
		runtime.Gosched()
	}
	if _, err := e.Close(false); err != nil {
		t.Fatal(err)
	}
	d.Flush(nil)
	if n := d.Limbo(); n != 1 || d.Live != 2 {
		t.Fatalf("held by a call, the closed event must stay in the limbo: %d in it, live %d", n, d.Live)
	}
	if r, flush := Split(Call1(OpTest, e.Word(), Addr(&arg[0].Int64))); r != Refused || !flush {
		t.Fatalf("a call on the closed event: %d, flush %v; want refused, flush", r, flush)
	}
	arg[1].Store(0)
	r := <-done
	if res, flush := Split(r); res != 0 || !flush {
		t.Fatalf("the call the event was closed under: %d, flush %v; want 0, flush", res, flush)
	}
	if res := Settle(r, e, nil); res != 0 {
		t.Fatalf("Settle: %d, want 0", res)
	}
	d.Mu.Lock()
	kept := d.Reuse(2)
	d.Mu.Unlock()
	if n := d.Limbo(); n != 0 || d.Live != 1 || kept != 5 {
		t.Fatalf("after the call returned and settled: %d in the limbo, live %d, kept handle %d (want 0, 1, 5)", n, d.Live, kept)
	}
}

// A refused call flushes its Domain only where the limbo holds its object:
// calls on an event closed long ago leave a batch that is not full alone.
func TestRefusedFlushesOnlyItsOwn(t *testing.T) {
	d, _ := domain()
	old, waiting := event(d, 7, 0), event(d, 8, 0)
	old.Close(false)
	d.Flush(nil) // old is kept for reuse: out of the limbo
	waiting.Close(false)
	if n := d.Limbo(); n != 1 {
		t.Fatalf("a closed event waits for its batch: %d in the limbo, want 1", n)
	}
	if r := Settle(Refused, old, nil); r != Refused || d.Limbo() != 1 {
		t.Fatalf("a refused call on an event no longer in the limbo: %d, %d in the limbo; want refused, 1 (no flush)", r, d.Limbo())
	}
	if r := Settle(Refused, waiting, nil); r != Refused || d.Limbo() != 0 {
		t.Fatalf("a refused call on an event in the limbo: %d, %d in the limbo; want refused, 0 (flushed)", r, d.Limbo())
	}
}

// Reuse keeps at most ReuseMax handles per flag set, last in first out.
func TestReuseBound(t *testing.T) {
	d, _ := domain()
	d.Mu.Lock()
	defer d.Mu.Unlock()
	for i := range ReuseMax {
		if !d.Keep(1, uintptr(i+1)) {
			t.Fatalf("keep %d refused below the bound", i)
		}
	}
	if d.Keep(1, 999) || !d.Keep(2, 5) {
		t.Fatal("the bound is per flag set")
	}
	if h := d.Reuse(1); h != ReuseMax || d.Reuse(3) != 0 {
		t.Fatalf("reuse popped %d, want %d", h, ReuseMax)
	}
}
