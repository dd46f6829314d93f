package cuda

import (
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
