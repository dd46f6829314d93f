package cuda

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Creating an event's Go side (the Event, its handle, and its
// garbage-collection backstop) costs four allocations; a capturing or
// generic cleanup function would add one. No GPU needed: newEvent makes no
// driver call while the primary is open.
func TestNewEventAllocations(t *testing.T) {
	d := &Device{p: &primary{live: 1, devices: 1}}
	n := testing.AllocsPerRun(1000, func() {
		e, err := newEvent(d, driver.Event(1), EventOptions{}, false, "create event")
		if err != nil {
			t.Fatal(err)
		}
		e.cleanup.Stop()
		d.p.drop(e.r)
	})
	t.Logf("%v allocations", n)
	if n > 4 {
		t.Errorf("newEvent allocates %v times, want at most 4", n)
	}
	if d.p.open != nil || d.p.live != 1 {
		t.Errorf("the primary's list was not emptied: live %d", d.p.live)
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
	h := &handle{p: p, kind: kindDevice}
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
		h := &handle{p: p, kind: kindDevice}
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
