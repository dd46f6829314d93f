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
// wakes when the work completes. A cancellable context is watched by the
// waiter's goroutine, which stays parked on the context's Done channel
// between Waits: a Wait with the same Done channel as the waiter's last
// costs it nothing, one with another wakes it once, to watch the new
// channel. On cancellation the goroutine kicks the Wait out of its read
// (a deadline in the past on the eventfd); the Wait returns ctx.Err() and
// hands the job to the goroutine, which reads the driver's answer when it
// comes, puts the waiter back, and counts the job's call out.

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

// errNoSleeper: the waiter has no thread to sleep in the driver.
var errNoSleeper = errors.New("cuda: the waiter has no sleeper thread")

type waiter struct {
	p     *primary
	s     driver.Stream    // private, non-blocking
	e     driver.Event     // private, CU_EVENT_BLOCKING_SYNC, no timing
	sl    *sleeper.Sleeper // its sleeping thread; nil: none
	ctl   chan waitCtl     // to its goroutine; closed when the waiter is destroyed
	armed <-chan struct{}  // the Done channel its goroutine watches, as the Waits know it

	mu      sync.Mutex
	state   uint32          // of the current job: jobIdle, jobRunning, jobAbandoned
	jobDone <-chan struct{} // the Done channel of the running job's Wait
}

// waitCtl is a message to a waiter's goroutine: watch done; or, with r
// set, finish an abandoned job on ev (read its answer, put the waiter back,
// count r's call out).
type waitCtl struct {
	done <-chan struct{}
	ev   driver.Event
	r    *handle
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
	w := &waiter{p: p, s: s, e: e, ctl: make(chan waitCtl, 2)}
	w.sl, _ = sleeper.New(sleepFns.sync, sleepFns.setCurrent) // none: w.sync sleeps on a Go thread
	go w.watch()
	return w, nil
}

// putWaiter keeps w for the next long Wait, or destroys it if p keeps
// enough. Its private event is complete (its Wait saw it complete, the
// driver's cuEventSynchronize on it returned, or it was not recorded), and
// its job idle. The caller still holds a call on an object of p: the last
// drop (device.go) destroys the kept waiters before the context's release.
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
	close(w.ctl)
	if w.sl != nil {
		w.sl.Close()
	}
	_ = driver.EventDestroyCtx(w.p.ctx, w.e)
	_ = driver.StreamDestroyCtx(w.p.ctx, w.s)
}

// watch is w's goroutine: it watches the Done channel of the Waits'
// contexts, and kicks the running job's Wait when it closes; it finishes
// the jobs their Waits abandoned. It never panics.
func (w *waiter) watch() {
	var done <-chan struct{}
	for {
		select {
		case c, ok := <-w.ctl:
			if !ok {
				return
			}
			if c.r != nil {
				w.finish(c.ev, c.r)
			} else {
				done = c.done
			}
		case <-done:
			w.mu.Lock()
			if w.state == jobRunning && w.jobDone == done {
				w.state = jobAbandoned
				w.sl.Kick()
			}
			w.mu.Unlock()
			done = nil // closed for good: the Waits see ctx.Err()
		}
	}
}

// finish ends a job its Wait abandoned: it waits for the driver's answer
// (w.sl kicked or not, or w.sl gone: then on this thread, on ev), puts w
// back, and counts r's call out.
func (w *waiter) finish(ev driver.Event, r *handle) {
	if w.sl != nil {
		w.sl.Unkick()
		if _, err := w.sl.Await(); err != nil {
			// The thread could not be reached: it may still be in the
			// driver, so w leaves it (leaked, never closed) and sleeps here.
			w.sl = nil
			_ = eventSynchronize(w.p.ctx, ev)
		}
	} else {
		_ = eventSynchronize(w.p.ctx, ev)
	}
	w.mu.Lock()
	w.state = jobIdle
	w.mu.Unlock()
	w.p.putWaiter(w)
	r.exit()
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

// syncCtx is sync for a Wait whose ctx can be cancelled (done, its Done
// channel), holding a call of its own on r for the job (which it counts
// out when the job ends). On cancellation it returns ctx.Err() and leaves
// the job, r's call and w to w's goroutine; otherwise it puts w back.
// w has its thread (w.sl): should it fail, the Wait polls.
func (w *waiter) syncCtx(ctx context.Context, ev driver.Event, e *Event) error {
	const op = "wait for event"
	p := w.p
	done := ctx.Done()
	if w.armed != done {
		w.armed = done
		w.ctl <- waitCtl{done: done}
	}
	w.mu.Lock()
	w.state, w.jobDone = jobRunning, done
	w.mu.Unlock()
	if !w.sl.Start(uintptr(p.ctx), uintptr(ev)) {
		// The thread could not be reached: no job runs. w leaves it.
		w.mu.Lock()
		w.sl, w.state = nil, jobIdle
		w.mu.Unlock()
		p.putWaiter(w)
		e.r.exit()
		return e.pollWait(ctx)
	}
	if ctx.Err() != nil {
		// Cancelled before the job ran, perhaps before the goroutine
		// watched this ctx, which then kicks nothing.
		w.mu.Lock()
		w.state = jobAbandoned
		w.mu.Unlock()
		w.ctl <- waitCtl{ev: ev, r: e.r}
		return ctx.Err()
	}
	res, err := w.sl.Await()
	w.mu.Lock()
	if err == nil {
		// The answer came: the Wait takes it, even if its ctx was cancelled
		// meanwhile (then the goroutine kicked the read, for nothing).
		if w.state == jobAbandoned {
			w.sl.Unkick()
		}
		w.state = jobIdle
		w.mu.Unlock()
		p.putWaiter(w)
		e.r.exit()
		return driverErr(op, driver.Result(res).Err())
	}
	if w.state != jobAbandoned {
		// Not kicked: the thread could not be reached, and may still be in
		// the driver. w leaves it; the goroutine waits for ev on a Go
		// thread, and this Wait polls.
		w.sl, w.state = nil, jobAbandoned
		w.mu.Unlock()
		w.ctl <- waitCtl{ev: ev, r: e.r}
		return e.pollWait(ctx)
	}
	w.mu.Unlock()
	w.ctl <- waitCtl{ev: ev, r: e.r}
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
