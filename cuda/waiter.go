package cuda

import (
	"context"
	"errors"
	"sync"

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
// The sleeping call itself runs on a C thread of the waiter's
// (internal/sleeper), which wakes the Go side through an eventfd in the
// runtime's netpoller: a Go thread blocked in a cgo call would keep the
// runtime's monitor waking every 20 µs to 10 ms, about 1 % of a core on 10
// ms of work on the GPU machine (BenchmarkWaitStrategy: "blocking" against
// "cthread"). Where no such thread can be had, the call runs on the Go
// thread, and a Wait with a cancellable context polls.
//
// The Wait itself reads the eventfd, whatever its context: one goroutine
// wakes when the work completes. A cancellable context gets the waiter's
// kick registered with context.AfterFunc for the Wait, which no goroutine
// or thread wakes for (a waiter goroutine woken to watch each new context
// cost about 0.8 % of a core more on 10 ms of work,
// BenchmarkWaitLong10msCtxPerWait): a few allocations, and the
// registration is stopped when the Wait ends, so that the context's
// cancellation later starts nothing. Once two Waits in a row on the waiter
// had the same Done channel, it stays registered between Waits, and the
// next ones with it allocate nothing. On cancellation the kick ends the
// Wait's read (a deadline in the past on the eventfd); the Wait returns
// ctx.Err() and leaves the job to a goroutine, which reads the driver's
// answer when it comes, puts the waiter back, and counts the job's call
// out.

// waitersMax bounds the idle waiters a context keeps (so up to that many
// long Waits at once allocate nothing); waitersBusyMax bounds those in use,
// each a driver stream and event and a thread (asleep in the driver while
// its job runs, on after a cancelled Wait until the work completes): past
// it, Wait polls.
const (
	waitersMax     = 16
	waitersBusyMax = 256
)

// errWaitersBusy: the context has waitersBusyMax waiters in use.
var errWaitersBusy = errors.New("cuda: every waiter of the context is in use")

// errNoSleeper: the waiter has no thread to sleep in the driver.
var errNoSleeper = errors.New("cuda: the waiter has no sleeper thread")

type waiter struct {
	p     *primary
	s     driver.Stream    // private, non-blocking
	e     driver.Event     // private, CU_EVENT_BLOCKING_SYNC, no timing
	sl    *sleeper.Sleeper // its sleeping thread; nil: none
	armed <-chan struct{}  // the Done channel of the last cancellable Wait's ctx
	unarm func() bool      // stops the kick's registration with it; nil: none
	keep  bool             // keep the registration between Waits (armed came twice in a row)
	lost  bool             // its thread was abandoned (sleepers.lost): never destroy nor keep it

	mu      sync.Mutex
	state   uint32          // of the current job: jobIdle, jobRunning, jobAbandoned
	jobDone <-chan struct{} // the Done channel of the running job's Wait
}

const (
	jobIdle uint32 = iota
	jobRunning
	jobAbandoned
)

// getWaiter takes an idle waiter of p, or makes one; errWaitersBusy if p
// has waitersBusyMax in use. The caller holds a call in flight on an object
// of p, which keeps the context, and gives the waiter back with putWaiter.
func (p *primary) getWaiter() (*waiter, error) {
	p.mu.Lock()
	if p.waitersBusy >= waitersBusyMax {
		p.mu.Unlock()
		return nil, errWaitersBusy
	}
	p.waitersBusy++
	if n := len(p.waiters); n > 0 {
		w := p.waiters[n-1]
		p.waiters = p.waiters[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	s, err := driver.StreamCreateCtx(p.ctx, driver.StreamNonBlocking)
	if err != nil {
		p.notBusy()
		return nil, err
	}
	e, err := driver.EventCreateCtx(p.ctx, driver.EventBlockingSync|driver.EventDisableTiming)
	if err != nil {
		_ = driver.StreamDestroyCtx(p.ctx, s)
		p.notBusy()
		return nil, err
	}
	w := &waiter{p: p, s: s, e: e}
	w.sl, _ = sleeper.New(sleepFns.sync, sleepFns.setCurrent) // none: w.sync sleeps on a Go thread
	return w, nil
}

// putWaiter keeps w for the next long Wait, or destroys it if p keeps
// enough. Its job is idle, and its private event complete (its Wait saw it
// complete, the driver's cuEventSynchronize on it returned, or it was not
// recorded) or at least no longer waited for by its thread (a Wait
// cancelled before its job started; the driver destroys a pending event
// without waiting). The caller still holds a call on an object of p: the last
// drop (device.go) destroys the kept waiters before the context's release.
//
// A waiter without a thread is destroyed, so that the next long Wait makes
// one, with a thread if it can; one whose thread was abandoned is left as
// it is (its thread may still be in the driver, on its event).
func (p *primary) putWaiter(w *waiter) {
	p.mu.Lock()
	p.waitersBusy--
	if w.lost {
		p.mu.Unlock()
		if w.unarm != nil {
			w.unarm()
		}
		return
	}
	if len(p.waiters) < waitersMax && w.sl != nil {
		p.waiters = append(p.waiters, w)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	w.destroy()
}

// notBusy takes back the count of a getWaiter that made no waiter.
func (p *primary) notBusy() {
	p.mu.Lock()
	p.waitersBusy--
	p.mu.Unlock()
}

// takeWaiters empties p's idle waiters, for their destroy with the context.
// Under p.mu.
func (p *primary) takeWaiters() []*waiter {
	ws := p.waiters
	p.waiters = nil
	return ws
}

// destroy ends w's thread and its kick's registration, and destroys its
// stream and event (complete, so the destroys do not wait).
func (w *waiter) destroy() {
	if w.unarm != nil {
		w.unarm()
	}
	if w.sl != nil {
		w.sl.Close()
	}
	_ = driver.EventDestroyCtx(w.p.ctx, w.e)
	_ = driver.StreamDestroyCtx(w.p.ctx, w.s)
}

// arm registers w's kick with ctx, whose Done channel is done, unless it
// is registered with that channel already (a registration that has run
// stays: its channel is closed for good, and a Wait with it sees
// ctx.Err()). A channel that comes twice in a row stays registered after
// its Wait (keep).
func (w *waiter) arm(ctx context.Context, done <-chan struct{}) {
	if w.armed == done && w.unarm != nil {
		return
	}
	w.keep = w.armed == done
	if w.unarm != nil {
		w.unarm()
	}
	w.armed = done
	w.unarm = context.AfterFunc(ctx, func() { w.kick(done) })
}

// disarm, when a Wait ends, stops the kick's registration unless it is
// kept: a context made for one Wait then starts nothing when it is
// cancelled afterwards.
func (w *waiter) disarm() {
	if !w.keep && w.unarm != nil {
		w.unarm()
		w.unarm = nil
	}
}

// sleepers.lost keeps the sleepers whose thread could not be reached: it
// may still be in the driver and write its eventfd when it returns, so
// their files must never be closed (an *os.File's finalizer would close
// the descriptor, which a later file could then reuse).
var sleepers struct {
	sync.Mutex
	lost []*sleeper.Sleeper
}

// abandon leaves w's thread, which could not be reached, for good: w then
// sleeps on a Go thread, and is never kept nor destroyed. Under w.mu where
// a kick may run.
func (w *waiter) abandon() {
	sleepers.Lock()
	sleepers.lost = append(sleepers.lost, w.sl)
	sleepers.Unlock()
	w.sl, w.lost = nil, true
}

// kick ends the read of the running job's Wait if its ctx's Done channel
// is done, which has closed. It runs on a goroutine of context.AfterFunc's.
func (w *waiter) kick(done <-chan struct{}) {
	w.mu.Lock()
	if w.state == jobRunning && w.jobDone == done {
		w.state = jobAbandoned
		w.sl.Kick()
	}
	w.mu.Unlock()
}

// finish ends a job its Wait abandoned, on a goroutine of its own: it waits
// for the driver's answer (w.sl kicked or not, or w.sl gone: then on this
// thread, on ev), puts w back, and counts r's call out. It never panics.
func (w *waiter) finish(ev driver.Event, r *handle) {
	if w.sl != nil {
		w.sl.Unkick()
		if _, err := w.sl.Await(); err != nil {
			// The thread could not be reached: it may still be in the
			// driver, so w leaves it and sleeps here, on a Go thread that
			// no cancellation ends (bounded by waitersBusyMax).
			w.mu.Lock()
			w.abandon()
			w.mu.Unlock()
			_ = eventSynchronize(w.p.ctx, ev)
		}
	} else {
		_ = eventSynchronize(w.p.ctx, ev)
	}
	w.release(r)
}

// sync sleeps in cuEventSynchronize(ev) on w's thread (or, without one,
// on this one), and returns its answer.
func (w *waiter) sync(ev driver.Event) error {
	if w.sl != nil {
		if r := w.sl.Sync(uintptr(w.p.ctx), uintptr(ev)); r >= 0 {
			return driver.Result(r).Err()
		}
		// The thread could not be reached (an eventfd failed): it may still
		// be in the driver, so w leaves it and sleeps here.
		w.mu.Lock()
		w.abandon()
		w.mu.Unlock()
	}
	return eventSynchronize(w.p.ctx, ev)
}

// release ends a job: one whose Wait took its answer, one that never
// started, or (from finish) one its Wait abandoned, once the answer came:
// w idle (the deadline a kick set on its read cleared), its registration
// stopped unless kept, w put back, and the job's call on r counted out.
func (w *waiter) release(r *handle) {
	w.mu.Lock()
	if w.state == jobAbandoned && w.sl != nil {
		w.sl.Unkick()
	}
	w.state = jobIdle
	w.mu.Unlock()
	w.disarm()
	w.p.putWaiter(w)
	r.exit()
}

// syncCtx is sync for a Wait whose ctx can be cancelled (done, its Done
// channel), holding a call of its own on r for the job (which it counts
// out when the job ends). On cancellation it returns ctx.Err() and leaves
// the job, r's call and w to a goroutine (finish); otherwise it puts w back.
// w has its thread (w.sl): should it fail, the Wait polls.
func (w *waiter) syncCtx(ctx context.Context, ev driver.Event, e *Event) error {
	const op = "wait for event"
	p := w.p
	done := ctx.Done()
	w.arm(ctx, done)
	w.mu.Lock()
	w.state, w.jobDone = jobRunning, done
	w.mu.Unlock()
	// A cancellation the kick saw before the job ran (it kicked nothing)
	// ends the Wait here, with no job started; one after this kicks.
	if ctx.Err() != nil {
		w.release(e.r)
		return ctx.Err()
	}
	if !w.sl.Start(uintptr(p.ctx), uintptr(ev)) {
		// The thread could not be reached: no job runs. w leaves it.
		w.mu.Lock()
		w.abandon()
		w.mu.Unlock()
		w.release(e.r)
		return e.pollWait(ctx)
	}
	res, err := w.sl.Await()
	if err == nil {
		// The answer came: the Wait takes it, even if its ctx was cancelled
		// meanwhile (then the kick ended a read that had ended).
		w.release(e.r)
		return driverErr(op, driver.Result(res).Err())
	}
	w.mu.Lock()
	if w.state != jobAbandoned {
		// Not kicked: the thread could not be reached, and may still be in
		// the driver. w leaves it; finish waits for ev on a Go thread,
		// and this Wait polls.
		w.abandon()
		w.state = jobAbandoned
		w.mu.Unlock()
		go w.finish(ev, e.r)
		return e.pollWait(ctx)
	}
	w.mu.Unlock()
	go w.finish(ev, e.r)
	return ctx.Err()
}

// sleepFns are the entry points a waiter's thread calls, resolved with the
// hot calls' (handlecall.go).
var sleepFns struct{ sync, setCurrent uintptr }

// behind makes w's private event complete only after ev's latest record:
// w's stream waits for ev, then records w's event.
func (w *waiter) behind(ev driver.Event) error {
	if err := streamWaitEvent(w.p.ctx, w.s, ev, 0); err != nil {
		return err
	}
	return eventRecord(w.p.ctx, w.e, w.s)
}
