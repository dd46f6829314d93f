package cuda

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// Every create of a context whose closed objects wait past
// lifetime.HighWater flushes a batch of them first (doc.go: the backlog is
// bounded). No GPU needed: each create here fails at its driver call (or,
// for the adopted wrappers, needs none), after its Throttle.
func TestCreatesThrottle(t *testing.T) {
	d := newDevice(newCtxState(0, 0, 0, false))
	life := &d.p.life
	for _, c := range []struct {
		name   string
		create func()
	}{
		{"NewEvent", func() { d.NewEvent(EventOptions{IPC: true}) }}, // IPC: never a kept handle
		{"NewStream", func() { d.NewStream() }},
		{"OpenIPCEvent", func() { d.OpenIPCEvent(IPCEventHandle{h: driver.IPCEventHandle{1}}) }},
		{"AdoptStream", func() {
			if s, err := d.AdoptStream(0); err == nil {
				s.r.Close(true) // without asking the flusher
			}
		}},
		{"AdoptEvent", func() {
			if e, err := d.AdoptEvent(1, EventOptions{}); err == nil {
				e.r.Close(true)
			}
		}},
	} {
		// Closed by their Device's Close, which asks the flusher once,
		// after: none asks here, so only the create flushes.
		for range lifetime.HighWater - life.Pending() {
			e, err := newEvent(d, driver.Event(1), EventOptions{}, false, "create event")
			if err != nil {
				t.Fatal(err)
			}
			e.r.Close(true)
		}
		before := life.Pending()
		c.create()
		if after := life.Pending(); after >= before {
			t.Errorf("%s with %d closed objects waiting flushed none (%d wait after it)", c.name, before, after)
		}
	}
}
