//go:build cgo

package gputest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// TestLayerCloseWhileDestroyHeld: no Close waits for another goroutine.
// The fake driver's destroy gate holds a driver destroy inside the flush of
// another goroutine (the stream closed first); while it is held, every kind
// of Close returns: events (enough to ask for a flush twice over, recorded
// or not), a stream, the wrappers of an
// adopted stream and event, a Device that is not its context's last, and
// the last Device of a context with 2,000 events and 50 streams open. The
// closed objects answer ErrClosed at once, their destroys still pending.
// Only then is the gate opened, and everything is destroyed and the context
// released (Done). The test asserts states, not times: a Close that waited
// for the held destroy would not return until the gate opened, which only a
// watchdog does, after a minute, failing the test.
func TestLayerCloseWhileDestroyHeld(t *testing.T) {
	fakeOnly(t).Close()
	released(t)
	before := readCounters()
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	other := must[*cuda.Device](t)(cuda.GetDevice(0)) // the same context: not the last
	// A retain of the context of our own, as a library that adopted it
	// would hold, so that the raw handles below outlive our Devices.
	cudev := must[driver.Device](t)(driver.DeviceGet(0))
	ctx := must[driver.Context](t)(driver.DevicePrimaryCtxRetain(cudev))
	rawS := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	rawE := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventDisableTiming))
	adoptedS := must[*cuda.Stream](t)(other.AdoptStream(rawS))
	adoptedE := must[*cuda.Event](t)(other.AdoptEvent(rawE, cuda.EventOptions{}))

	s := must[*cuda.Stream](t)(dev.NewStream())
	first := must[*cuda.Stream](t)(dev.NewStream())
	var events []*cuda.Event
	for i := range 300 {
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: i%2 == 0}))
		if i%3 == 0 {
			ok(t, s.Record(e))
		}
		events = append(events, e)
	}
	var got []*cuda.Event
	for range 8 {
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		ok(t, s.Record(e))
		got = append(got, e)
	}
	spare := must[*cuda.Stream](t)(dev.NewStream())
	var open []any // closed by the last Device's Close
	for range 2000 {
		open = append(open, must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{})))
	}
	for range 50 {
		open = append(open, must[*cuda.Stream](t)(dev.NewStream()))
	}
	ok(t, s.Sync())

	// The gate: destroys wait in the driver until it opens. Another
	// goroutine closes a stream; its destroy is then held inside a flush.
	if !fakeSet("fakecuda_gate_destroy", 1) {
		t.Fatal("the fake driver has no destroy gate")
	}
	var opened atomic.Bool
	openGate := func() {
		if opened.CompareAndSwap(false, true) {
			fakeSet("fakecuda_gate_destroy", 0)
		}
	}
	defer openGate()
	var watchdogFired atomic.Bool
	dog := time.AfterFunc(time.Minute, func() { watchdogFired.Store(true); openGate() })
	defer dog.Stop()
	go func() { first.Close() }()
	for n, _ := fakeCounter("fakecuda_gated"); n == 0; n, _ = fakeCounter("fakecuda_gated") {
		if watchdogFired.Load() {
			t.Fatal("the closed stream's destroy never reached the driver")
		}
		time.Sleep(100 * time.Microsecond)
	}

	// Every kind of Close, while that destroy is held.
	closes := []struct {
		what  string
		close func() error
	}{
		{"Stream.Close", spare.Close},
		{"Stream.Close of an adopted stream", adoptedS.Close},
		{"Event.Close of an adopted event", adoptedE.Close},
		{"Device.Close (not the context's last)", other.Close},
	}
	for i, e := range got {
		closes = append(closes, struct {
			what  string
			close func() error
		}{fmt.Sprintf("Event.Close %d of %d recorded ones", i+1, len(got)), e.Close})
	}
	for i, e := range events {
		closes = append(closes, struct {
			what  string
			close func() error
		}{fmt.Sprintf("Event.Close %d of %d", i+1, len(events)), e.Close})
	}
	closes = append(closes, struct {
		what  string
		close func() error
	}{"Device.Close (the context's last, 2,000 events and 52 streams open)", dev.Close})
	for _, c := range closes {
		ok(t, c.close())
		if watchdogFired.Load() {
			t.Fatalf("%s returned only once the watchdog opened the gate: it waited for the held destroy", c.what)
		}
	}
	if n, _ := fakeCounter("fakecuda_gated"); n == 0 || opened.Load() {
		t.Fatalf("the held destroy was let go (%d held, gate opened %v) before the Closes were checked", n, opened.Load())
	}
	// Closed, with their destroys still pending: every call says so.
	is(t, "Query of a closed event", func() error { _, err := events[0].Query(); return err }(), cuda.ErrClosed, "closed")
	is(t, "Sync of a stream closed by its Device", s.Sync(), cuda.ErrClosed, "device is closed")
	is(t, "Record on a closed adopted stream", adoptedS.Record(events[1]), cuda.ErrClosed, "closed")
	is(t, "NewEvent on a closed Device", func() error { _, err := dev.NewEvent(cuda.EventOptions{}); return err }(), cuda.ErrClosed, "device is closed")
	select {
	case <-dev.Done():
		t.Fatal("Done was closed while a destroy of its context was held")
	default:
	}

	// The gate opens: the held destroy goes on, then the rest.
	openGate()
	select {
	case <-dev.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context was not released a minute after the gate opened")
	}
	ok(t, s.Close())
	ok(t, driver.StreamDestroyCtx(ctx, rawS)) // the wrappers never destroyed them
	ok(t, driver.EventDestroyCtx(ctx, rawE))
	ok(t, driver.DevicePrimaryCtxRelease(cudev))
	settle(t, before)
	runtime.KeepAlive(open)
}
