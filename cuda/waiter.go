package cuda

import (
	"errors"
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
// its context for the next long Wait, with a goroutine of its own that runs
// the sleeping call when Wait must also watch a cancellable context.
//
// The sleeping call itself runs on a C thread of the waiter's
// (internal/sleeper), which wakes the Go side through an eventfd in the
// runtime's netpoller: a Go thread blocked in a cgo call would keep the
// runtime's monitor waking every 20 µs to 10 ms, about 1 % of a core on 10
// ms of work on the GPU machine (BenchmarkWaitStrategy: "blocking" against
// "cthread"). Where no such thread can be had, the call runs on the Go
// thread.

// waitersMax bounds the idle waiters a context keeps (so up to that many
// long Waits at once allocate nothing); waitersBusyMax bounds those in use,
// each a driver stream and event and, once it has served a cancellable
// Wait, a goroutine in the driver: past it, Wait polls.
const (
	waitersMax     = 16
	waitersBusyMax = 256
)

// errWaitersBusy: the context has waitersBusyMax waiters in use.
var errWaitersBusy = errors.New("cuda: every waiter of the context is in use")

type waiter struct {
	p     *primary
	s     driver.Stream    // private, non-blocking
	e     driver.Event     // private, CU_EVENT_BLOCKING_SYNC, no timing
	sl    *sleeper.Sleeper // its sleeping thread; nil: none
	jobs  chan waitJob     // to its goroutine; closed when the waiter is destroyed
	done  chan error       // the goroutine's answer, if the job's Wait still waits
	state atomic.Uint32    // of the current job: jobRunning, jobAnswered, jobAbandoned
}

// waitJob: sleep in cuEventSynchronize on ev, holding a call on r (counted
// in by Wait before it hands the job over), then count it out.
type waitJob struct {
	ev driver.Event
	r  *handle
}

const (
	jobRunning uint32 = iota
	jobAnswered
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
	w := &waiter{p: p, s: s, e: e, jobs: make(chan waitJob, 1), done: make(chan error, 1)}
	w.sl, _ = sleeper.New(sleepFns.sync, sleepFns.setCurrent) // none: w.sync sleeps on a Go thread
	go w.loop()
	return w, nil
}

// putWaiter keeps w for the next long Wait, or destroys it if p keeps
// enough. Its private event is complete (its Wait saw it complete, the
// goroutine's cuEventSynchronize returned, or it was not recorded). The caller still holds a call
// on an object of p: the last drop (device.go) destroys the kept waiters
// before the context's release.
func (p *primary) putWaiter(w *waiter) {
	p.mu.Lock()
	p.waitersBusy--
	if len(p.waiters) < waitersMax {
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

// destroy ends w's goroutine and destroys its stream and event (complete,
// so the destroys do not wait).
func (w *waiter) destroy() {
	close(w.jobs)
	if w.sl != nil {
		w.sl.Close()
	}
	_ = driver.EventDestroyCtx(w.p.ctx, w.e)
	_ = driver.StreamDestroyCtx(w.p.ctx, w.s)
}

// loop is w's goroutine: it runs each job's sleeping wait, answers the Wait
// that still waits, or, if that Wait gave up (its context was cancelled),
// puts w back itself; then it counts the job's call out. It never panics.
func (w *waiter) loop() {
	for job := range w.jobs {
		err := w.sync(job.ev)
		if w.state.CompareAndSwap(jobRunning, jobAnswered) {
			w.done <- err // the Wait puts w back
		} else {
			w.p.putWaiter(w)
		}
		job.r.exit()
	}
}

// sync sleeps in cuEventSynchronize(ev) on w's thread (or, without one,
// on this one), and returns its answer.
func (w *waiter) sync(ev driver.Event) error {
	if w.sl != nil {
		if r := w.sl.Sync(uintptr(w.p.ctx), uintptr(ev)); r >= 0 {
			return driver.Result(r).Err()
		}
		// The thread could not be reached (an eventfd failed): it may still
		// be in the driver, so w leaves it (leaked, never closed) and
		// sleeps here from now on.
		w.sl = nil
	}
	return eventSynchronize(w.p.ctx, ev)
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
