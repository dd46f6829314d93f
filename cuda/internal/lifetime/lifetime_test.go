package lifetime

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// owner records what a Domain asks of its Owner.
type owner struct {
	mu        sync.Mutex
	destroyed []uintptr
	complete  bool // Complete's answer
	asked     int
	released  []uintptr
	releases  int
	// gate, if set, holds each Destroy until it is closed; inGate says
	// when a Destroy waits at it.
	gate   chan struct{}
	inGate chan struct{}
}

func (o *owner) Destroy(h *Handle) error {
	if o.gate != nil {
		o.inGate <- struct{}{}
		<-o.gate
	}
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

// settled waits until the flusher has served d: nothing of d waits for a
// flush but what calls hold, and no flusher runs. A minute without it is
// a failure, never a figure.
func settled(t *testing.T, d *Domain) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for FlusherRunning() || d.Pending() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the flusher did not serve the Domain: %d retired handles wait", d.Pending())
		}
		time.Sleep(100 * time.Microsecond)
	}
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
	if !h.Close(false) {
		t.Fatal("close of an open handle did not close it")
	}
	if d.Live != 1 {
		t.Fatal("retired under a call in flight")
	}
	if h.Enter() {
		t.Fatal("enter on a closed handle succeeded")
	}
	if h.Close(false) {
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
						if h.Close(false) {
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
		if !h.Close(c.byDevice) {
			t.Fatal("close of an open event did not close it")
		}
		d.Flush()
		d.Mu.Lock()
		kept, live := d.Kept(2), d.Live
		d.Mu.Unlock()
		if got := kept == 1; got != c.want || d.Limbo() != 0 || live != 1 {
			t.Errorf("%s: kept %v (want %v), %d waiting, live %d (want 0, 1)", c.name, got, c.want, d.Limbo(), live)
		}
		o.mu.Lock()
		if destroyed := len(o.destroyed) == 1; destroyed == c.want || (o.asked > 0) != c.asks {
			t.Errorf("%s: destroyed %v, Complete asked %d times", c.name, destroyed, o.asked)
		}
		o.mu.Unlock()
		// The last Device goes: the kept handle goes to Release, once
		// (the flusher's, or this Flush's).
		d.Mu.Lock()
		d.CloseLocked()
		d.Mu.Unlock()
		dev := &Handle{D: d, Kind: KindDevice, State: new(atomic.Int64)}
		dev.Close(false)
		d.Flush()
		d.Flush()
		o.mu.Lock()
		if o.releases != 1 || (len(o.released) == 1) != c.want {
			t.Errorf("%s: %d releases with %v kept", c.name, o.releases, o.released)
		}
		o.mu.Unlock()
	}
}

// The last Device's handle may be finished by a call refused after its
// Close marked it and before that Close closed the Domain: the Domain then
// has no live handle when it closes, and is released all the same.
func TestReleaseWhenClosedEmpty(t *testing.T) {
	d, o := domain()
	dev := &Handle{D: d, Kind: KindDevice, State: new(atomic.Int64)}
	if !dev.Mark() { // Device.Close's first step
		t.Fatal("mark failed")
	}
	if dev.Enter() { // another goroutine's call on the Device, refused: its exit finishes the handle
		t.Fatal("enter on a marked handle succeeded")
	}
	if d.Live != 0 {
		t.Fatalf("the refused call did not finish the marked handle: live %d", d.Live)
	}
	d.Mu.Lock()
	d.CloseLocked() // Device.Close, under the lock
	d.Mu.Unlock()
	dev.Finish() // Device.Close's last step: finished already
	d.Flush()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.releases != 1 {
		t.Fatalf("a Domain closed with no live handle was released %d times, want 1", o.releases)
	}
}

// Closed events wait for AskEvents before the flusher is asked (a create
// flushes them at LimboBatch, Help); a closed stream asks at once, and the
// flusher then flushes everything that waits.
func TestAskThresholds(t *testing.T) {
	d, o := domain()
	for i := range AskEvents - 1 {
		event(d, uintptr(i+1), 0).Close(false)
	}
	if n, asks := d.Pending(), d.asks.Load(); n != AskEvents-1 || asks != 0 {
		t.Fatalf("%d closed events wait and the flusher was asked %d times; want %d and none", n, asks, AskEvents-1)
	}
	s := NewHandle(d, 0x500, KindStream, &d.Open)
	d.Mu.Lock()
	d.Link(s)
	d.Mu.Unlock()
	s.Close(false)
	if d.asks.Load() != 1 {
		t.Fatalf("a closed stream asked the flusher %d times, want 1", d.asks.Load())
	}
	settled(t, d)
	d.Mu.Lock()
	kept, open := d.Kept(0), d.Open
	d.Mu.Unlock()
	o.mu.Lock()
	destroyed := len(o.destroyed)
	o.mu.Unlock()
	// ReuseMax of the never-recorded events are kept, the rest destroyed
	// with the stream.
	if kept != ReuseMax || destroyed != AskEvents-1-ReuseMax+1 || open != nil {
		t.Fatalf("after the flusher served a stream's close: %d kept (want %d), %d destroyed (want %d), open list %v", kept, ReuseMax, destroyed, AskEvents-ReuseMax, open)
	}
	for i := range AskEvents {
		event(d, uintptr(1000+i), 0).Close(false)
	}
	if d.asks.Load() != 2 {
		t.Fatalf("%d closed events asked the flusher %d times in all, want 2", AskEvents, d.asks.Load())
	}
	settled(t, d)
}

// Help flushes a batch on the caller's goroutine once LimboBatch wait, and
// never waits for a flush in progress.
func TestHelp(t *testing.T) {
	d, o := domain()
	for i := range LimboBatch - 1 {
		event(d, uintptr(i+1), 0).Close(false)
	}
	if d.Help() {
		t.Fatal("Help flushed with less than a batch waiting")
	}
	event(d, 100, 0).Close(false)
	if !d.Help() || d.Pending() != 0 {
		t.Fatalf("Help with a batch waiting: %d still wait", d.Pending())
	}
	d.Mu.Lock()
	if d.Kept(0) != LimboBatch {
		t.Errorf("%d kept, want %d", d.Kept(0), LimboBatch)
	}
	d.Mu.Unlock()
	// A flush in progress, held in the driver's destroy: Help returns.
	o.gate, o.inGate = make(chan struct{}), make(chan struct{}, 1)
	rec := event(d, 200, 0)
	rec.State.Or(NoReuse) // destroyed, not kept
	rec.Close(false)
	go d.Flush()
	<-o.inGate
	for i := range LimboBatch {
		event(d, uintptr(300+i), 0).Close(false)
	}
	if d.Help() {
		t.Error("Help flushed while another flush was in progress")
	}
	close(o.gate)
	settled(t, d)
}

// What waits for a flush is bounded: past HighWater, a create's Throttle
// flushes a batch first; below it, it flushes nothing. (The Device's Close
// closes without asking the flusher, as here, so nothing else flushes.)
func TestThrottleBoundsTheBacklog(t *testing.T) {
	d, o := domain()
	for i := range HighWater + 10 {
		event(d, uintptr(i+1), 0).Close(true)
	}
	if n := d.Pending(); n != HighWater+10 || d.asks.Load() != 0 {
		t.Fatalf("%d wait, %d asks; want %d, none", n, d.asks.Load(), HighWater+10)
	}
	d.Throttle()
	if n := d.Pending(); n != HighWater+10-flushMax {
		t.Fatalf("past HighWater, a create's Throttle left %d waiting, want %d (a batch flushed)", n, HighWater+10-flushMax)
	}
	d.Throttle()
	if n := d.Pending(); n != HighWater+10-flushMax {
		t.Fatalf("below HighWater, Throttle flushed: %d wait, want %d", n, HighWater+10-flushMax)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.destroyed) != flushMax { // closed by their device: destroyed, not kept
		t.Fatalf("%d destroyed, want %d", len(o.destroyed), flushMax)
	}
}

// No Close waits for a flush: with the flusher held inside the driver's
// destroy, closing events (enough to ask for a flush, twice over), streams,
// adopted wrappers and the Domain's last Device all return, and the
// Release waits for the held destroy.
func TestCloseNeverWaitsForAFlush(t *testing.T) {
	d, o := domain()
	o.gate, o.inGate = make(chan struct{}), make(chan struct{}, 1)
	stream := func(h uintptr, k Kind) *Handle {
		s := NewHandle(d, h, k, &d.Open)
		d.Mu.Lock()
		d.Link(s)
		d.Mu.Unlock()
		return s
	}
	stream(0x500, KindStream).Close(false)
	<-o.inGate // the flusher waits in the stream's destroy
	for i := range 2*AskEvents + 1 {
		e := event(d, uintptr(i+1), 0)
		if i%3 == 0 {
			e.State.Or(Recorded)
		}
		e.Close(false)
	}
	stream(0x501, KindStream).Close(false)
	stream(0x502, KindAdopted).Close(false)
	open := stream(0x503, KindStream)
	d.Mu.Lock()
	d.CloseLocked()
	open.Close(true)
	d.Mu.Unlock()
	dev := &Handle{D: d, Kind: KindDevice, State: new(atomic.Int64)}
	dev.Close(false) // the Domain's Device (domain's live handle)
	d.Ask()
	o.mu.Lock()
	releases := o.releases
	o.mu.Unlock()
	if releases != 0 || len(o.inGate) != 0 {
		t.Fatalf("with the flusher held in a destroy: %d releases, %d destroys at the gate", releases, len(o.inGate))
	}
	// The held destroy goes on, then the rest: every handle destroyed or
	// kept, and the Domain released once.
	go func() {
		for range o.inGate {
		}
	}()
	close(o.gate)
	settled(t, d)
	d.Flush()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.releases != 1 || d.Live != 0 {
		t.Fatalf("after the destroy went on: %d releases, live %d; want 1, 0", o.releases, d.Live)
	}
}

// A flush leaves a closed event that a hazard call holds waiting, and
// marks the call late, so the call asks for a flush when it returns: that
// flush finishes it (here: keeps its driver handle). A call on the closed
// event is refused, and asks for a flush too (a scan may have seen its
// slot).
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
	e.Close(false)
	d.Flush()
	if n := d.Limbo(); n != 1 || d.Live != 2 || !e.waits() {
		t.Fatalf("held by a call, the closed event must wait for it: %d waiting, live %d, marked %v", n, d.Live, e.waits())
	}
	asks := d.asks.Load()
	r := Call1(OpTest, e.Word(), Addr(&arg[0].Int64))
	if res, flush := Split(r); res != Refused || !flush {
		t.Fatalf("a call on the closed event: %d, flush %v; want refused, flush", res, flush)
	}
	if Settle(r, e, nil) != Refused || d.asks.Load() != asks+1 {
		t.Fatal("a refused call on an event waiting for a call did not ask for a flush")
	}
	settled(t, d)
	arg[1].Store(0)
	r = <-done
	if res, flush := Split(r); res != 0 || !flush {
		t.Fatalf("the call the event was closed under: %d, flush %v; want 0, flush", res, flush)
	}
	if res := Settle(r, e, nil); res != 0 {
		t.Fatalf("Settle: %d, want 0", res)
	}
	settled(t, d)
	d.Flush() // waits for the flusher's flush, if it is still under way
	d.Mu.Lock()
	kept := d.Reuse(2)
	d.Mu.Unlock()
	if n := d.Limbo(); n != 0 || d.Live != 1 || kept != 5 || e.waits() {
		t.Fatalf("after the call returned and settled: %d waiting, live %d, kept handle %d, marked %v (want 0, 1, 5, false)", n, d.Live, kept, e.waits())
	}
}

// A refused call asks for a flush only where its object waits for a call:
// calls on an event closed long ago, or merely waiting for its batch, ask
// for nothing.
func TestRefusedAsksOnlyForItsOwn(t *testing.T) {
	d, _ := domain()
	old, pending := event(d, 7, 0), event(d, 8, 0)
	old.Close(false)
	d.Flush() // old is kept for reuse
	pending.Close(false)
	for _, h := range []*Handle{old, pending} {
		if r := Settle(Refused, h, nil); r != Refused || d.asks.Load() != 0 {
			t.Fatalf("a refused call on an event not waiting for a call: %d, %d asks; want refused, none", r, d.asks.Load())
		}
	}
	pending.Set(Waiting) // as a flush that found a slot holding it leaves it
	if r := Settle(Refused, old, pending); r != Refused || d.asks.Load() != 1 {
		t.Fatalf("a refused call on an event waiting for a call: %d, %d asks; want refused, 1", r, d.asks.Load())
	}
	settled(t, d)
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
