package cuda

import (
	"sync"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/sleeper"
)

// Sleeping in the driver for Wait.
//
// Polling wakes the thread again and again; on the GPU machine each wake of
// a sleeping thread costs tens of microseconds of CPU, so a poll that
// sleeps 1ms at a time still used 5% of a core on 10ms of work
// (BenchmarkWaitStrategy). The driver can sleep until an event completes,
// woken by the GPU, but only for an event created with
// CU_EVENT_BLOCKING_SYNC. So a long Wait on any other event makes a private
// stream of the context wait for it (cuStreamWaitEvent), records a private
// blocking event on that stream, and sleeps in cuEventSynchronize on that:
// one wake, when the event's work completes. A waiter is that pair, kept by
// its context for the next long Wait.
//
// The driver's calls run on the C threads of internal/sleeper, never on a
// Go thread: a Go thread blocked in a cgo call would keep the runtime's
// monitor waking every 20 µs to 10 ms, about 1 % of a core on 10 ms of work
// on the GPU machine (BenchmarkWaitStrategy: "blocking" against "cthread").
// They are bounded for the process: up to sleeper.MaxBlockers (16) long
// Waits at once sleep in the driver, each on a thread of its own (a
// "blocked" Wait); the others are "polled": one poller thread queries all
// of their events, sleeping between rounds (from 20 µs to a sixteenth of
// the time waited, at most 1 ms). The answers come back through one
// eventfd, read by one goroutine (while any is owed), which hands each to
// its Wait over a channel.
//
// The Wait itself parks on that channel and on ctx.Done(): cancellation
// returns at once, whatever the number of Waits. A polled Wait cancels its
// job as it returns (the poller never queries its event again). A blocked
// one cannot interrupt the driver's sleep: its job goes on, holding a call
// of its own on the event (so a Close meanwhile returns at once, and the
// event is destroyed, and the context released if its device closed, once
// the driver returns), and then puts the waiter back (abandoned). In an
// adopted context, whose creator may destroy it once its Devices are
// closed, no call of ours may outlive a Wait: a cancellable Wait there is
// always polled.

// waitersMax bounds the idle waiters a context keeps, so that long Waits
// allocate nothing once warm.
const waitersMax = 16

type waiter struct {
	p *ctxState
	s driver.Stream // private, non-blocking
	e driver.Event  // private, CU_EVENT_BLOCKING_SYNC, no timing
}

// jobOwner is what a sleeper job holds for abandoned: the waiter and the
// event call its blocked Wait left.
type jobOwner struct {
	w *waiter
	r *handle
}

func init() { sleeper.Abandoned = abandoned }

// owner is j's jobOwner, made once per job.
func owner(j *sleeper.Job) *jobOwner {
	o, _ := j.Owner.(*jobOwner)
	if o == nil {
		o = &jobOwner{}
		j.Owner = o
	}
	return o
}

// abandoned finishes a blocked job whose Wait was cancelled, once the
// driver's sleep returned: the waiter goes back (its event is complete),
// then the job's call on the event is counted out (the last call out of a
// closed event destroys it; of the context's last object, releases the
// context, after its waiters). It runs on the sleeper's dispatcher
// goroutine, and never panics.
func abandoned(j *sleeper.Job, _ int32) {
	o := owner(j)
	w, r := o.w, o.r
	o.w, o.r = nil, nil
	j.Put()
	if w != nil {
		w.p.putWaiter(w)
	}
	if r != nil {
		r.Exit()
	}
}

// waitState is a context's long-Wait state: its idle waiters, under their
// own lock, and the spin of its next Waits (wait.go).
type waitState struct {
	mu   sync.Mutex
	idle []*waiter
	long atomic.Bool // the latest Wait slept long: the next spin short
}

// getWaiter takes an idle waiter of p, or makes one. The caller holds a
// call in flight on an object of p, which keeps the context, and gives
// the waiter back with putWaiter.
func (p *ctxState) getWaiter() (*waiter, error) {
	ws := &p.waits
	ws.mu.Lock()
	if n := len(ws.idle); n > 0 {
		w := ws.idle[n-1]
		ws.idle = ws.idle[:n-1]
		ws.mu.Unlock()
		return w, nil
	}
	ws.mu.Unlock()
	s, err := driver.StreamCreateCtx(p.ctx, driver.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	e, err := driver.EventCreateCtx(p.ctx, driver.EventBlockingSync|driver.EventDisableTiming)
	if err != nil {
		_ = driver.StreamDestroyCtx(p.ctx, s)
		return nil, err
	}
	return &waiter{p: p, s: s, e: e}, nil
}

// putWaiter keeps w for the next long Wait, or destroys it if p keeps
// enough. Its private event is complete (the driver's sleep on it
// returned) or was not recorded. The caller still holds a call on an
// object of p: the context's Release (lifetime.go) destroys the kept waiters
// before the context's release, after the last call.
func (p *ctxState) putWaiter(w *waiter) {
	ws := &p.waits
	ws.mu.Lock()
	if len(ws.idle) < waitersMax {
		ws.idle = append(ws.idle, w)
		ws.mu.Unlock()
		return
	}
	ws.mu.Unlock()
	w.destroy()
}

// take empties the idle waiters, for their destroy with the context.
func (ws *waitState) take() []*waiter {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	idle := ws.idle
	ws.idle = nil
	return idle
}

// destroy destroys w's stream and event (complete, so the destroys do not
// wait).
func (w *waiter) destroy() {
	_ = driver.EventDestroyCtx(w.p.ctx, w.e)
	_ = driver.StreamDestroyCtx(w.p.ctx, w.s)
}

// behind makes w's private event complete only after ev's latest record:
// w's stream waits for ev, then records w's event.
func (w *waiter) behind(ev driver.Event) error {
	if err := streamWaitEvent(w.p.ctx, w.s, ev, 0); err != nil {
		return err
	}
	return eventRecord(w.p.ctx, w.e, w.s)
}

// sleepFns are the entry points the sleeper's threads call, resolved with
// the hot calls' (hotcalls.go).
var sleepFns struct{ sync, query, setCurrent uintptr }
