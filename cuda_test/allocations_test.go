//go:build cgo

package gputest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// Steady-state calls allocate nothing (a behaviour, not a timing). Each
// call must succeed: an error return is allowed to allocate.
func TestLayerNoAllocations(t *testing.T) {
	env := newEnv(t, cuda.EventOptions{Timing: true})
	s, a, e := env.s, env.a, env.b
	r := must[*cuda.Event](t)(env.dev.NewEvent(cuda.EventOptions{}))
	defer r.Close()
	ctx := context.Background()
	var failed error
	check := func(err error) {
		if err != nil && failed == nil {
			failed = err
		}
	}
	// In a fixed order; the events timed by Sub are not recorded again.
	steps := []struct {
		name string
		f    func()
	}{
		{"Record", func() { check(s.Record(r)) }},
		{"Query", func() { _, err := e.Query(); check(err) }},
		{"Sub", func() { _, err := e.Sub(a); check(err) }},
		{"Sync", func() { check(e.Sync()) }},
		{"Wait", func() { check(e.Wait(ctx)) }},
		{"Stream.Wait", func() { check(s.Wait(e)) }},
	}
	for _, st := range steps {
		ok(t, s.Sync())
		failed = nil
		n := testing.AllocsPerRun(1000, st.f)
		if failed != nil {
			t.Errorf("%s failed: %v", st.name, failed)
		}
		if n != 0 {
			t.Errorf("%s allocates %v times per call", st.name, n)
		}
	}
	ok(t, s.Sync())
}

// A long Wait, one that sleeps in the driver (on a waiter's private event,
// on a waiter thread, its goroutine parked), allocates nothing of its own
// either once the context has its waiter; and it answers right: nil, with
// the work done.
func TestLayerLongWaitNoAllocations(t *testing.T) {
	env := newEnv(t, cuda.EventOptions{})
	s := env.s
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, opts := range []cuda.EventOptions{{}, {BlockingSync: true}} {
		e := must[*cuda.Event](t)(env.dev.NewEvent(opts))
		for _, c := range []struct {
			name string
			ctx  context.Context
		}{{"cancellable", ctx}, {"background", context.Background()}} {
			var mallocs uint64
			for i := range 105 {
				ok(t, s.Spin(500*time.Microsecond)) // past Wait's 50µs of queries
				ok(t, s.Record(e))
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				err := e.Wait(c.ctx)
				runtime.ReadMemStats(&m1)
				ok(t, err)
				if done, err := e.Query(); !done || err != nil {
					t.Fatalf("%+v, %s: Wait returned before the work completed (%v, %v)", opts, c.name, done, err)
				}
				if i >= 5 { // the first makes the context's waiter; the runtime warms its caches
					mallocs += m1.Mallocs - m0.Mallocs
				}
			}
			// As testing.AllocsPerRun counts: the average per Wait, rounded
			// down. The runtime may allocate a sudog for the select now and
			// then (its caches are emptied at each GC, and Spin allocates);
			// a goroutine or channel per Wait would be 2 or more per Wait.
			t.Logf("%+v, %s: 100 long Waits: %d allocations", opts, c.name, mallocs)
			if mallocs/100 != 0 {
				t.Errorf("%+v, %s: 100 long Waits allocated %d times", opts, c.name, mallocs)
			}
		}
		ok(t, e.Close())
	}
}
