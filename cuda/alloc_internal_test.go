package cuda

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Creating an event's Go side (the Event, and its garbage-collection
// backstop) costs three allocations; a capturing or generic cleanup function
// would add one. No GPU needed: newEvent makes no driver call.
func TestNewEventAllocations(t *testing.T) {
	d := &Device{p: &primary{}}
	n := testing.AllocsPerRun(1000, func() {
		e := newEvent(d, driver.Event(1), EventOptions{}, false)
		e.cleanup.Stop()
	})
	if n > 3 {
		t.Errorf("newEvent allocates %v times, want at most 3", n)
	}
}
