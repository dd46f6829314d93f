package cuda

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Creating an event's Go side allocates nothing per event: events come
// slabSize at a time, with one garbage-collection backstop per slab. No GPU
// needed: newEvent makes no driver call.
func TestNewEventAllocations(t *testing.T) {
	d := &Device{p: &primary{}}
	var keep []*Event // the slabs must stay reachable, or each run makes a new one
	n := testing.AllocsPerRun(slabSize*10, func() {
		keep = append(keep[:0], newEvent(d, driver.Event(1), EventOptions{}, false))
	})
	if n != 0 {
		t.Errorf("newEvent allocates %v times per event, want 0 (amortised over a slab of %d)", n, slabSize)
	}
}

// A slab's backstop releases the handles of its events never closed, and
// only those.
func TestSlabBackstop(t *testing.T) {
	p := &primary{} // not alive: the backstop counts, and calls no driver
	st := &slabState{p: p}
	st.h[3].Store(7)
	st.h[9].Store(8)
	before := Leaked()
	releaseSlab(st)
	if n := Leaked() - before; n != 2 {
		t.Errorf("released %d handles, want 2", n)
	}
	if st.h[3].Load() != 0 || st.h[9].Load() != 0 {
		t.Error("handles still held after release")
	}
}
