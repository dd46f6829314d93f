package cuda

import (
	"context"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/hazard"
)

// Tuning of Wait. Short waits are served by back-to-back queries for
// waitSpin, so a wait on work that is about to finish costs what Sync costs;
// longer waits sleep in the driver (waiter.go). Should that be refused, they
// poll with sleeps that grow to waitMaxSleep, then to a sixteenth of the
// time waited up to waitLongMaxSleep, checking ctx every waitChunk.
//
// The spin adapts per context: after a Wait that slept waitLongSlept or
// more, the next ones spin only waitSpinShort, until one completes within
// its spin or sleeps less than that. Long waits then pay 10 µs of spinning
// (0.1 % of 10 ms) instead of 50, and a run of short ones keeps the full
// spin: a short wait right after a long one may wake as late as the
// driver's sleep does (60–75 µs on 20 µs of work on the GPU machine).
const (
	waitSpin      = 50 * time.Microsecond
	waitSpinShort = 10 * time.Microsecond
	waitLongSlept = time.Millisecond
	waitMinSleep  = 2 * time.Microsecond
	waitMaxSleep  = 100 * time.Microsecond
	waitChunk     = time.Millisecond
	// Past the first chunk, the longest sleep is the time waited over
	// waitLateShare, between waitMaxSleep and waitLongMaxSleep.
	waitLateShare    = 16
	waitLongMaxSleep = time.Millisecond
)

// Wait blocks until the work captured by the latest Record has completed, or
// ctx is done. It returns nil on completion, ctx.Err() on cancellation, an
// error matching ErrClosed if the event (or its device) was closed before it
// began, and the driver's error otherwise. A nil ctx is refused with
// ErrInvalid.
//
// Design: first it queries the event back to back in one cgo call, for
// 50µs (10µs after a Wait of the context that slept 1ms or more), so a
// short wait wakes as promptly as Sync. Then it sleeps in the driver until
// the GPU completes the work: on the event itself if it was created with
// BlockingSync (and not adopted), else on a private blocking event of the
// context recorded behind it on a private stream (waiter.go), so a long
// wait uses a small share of a core whatever the event's options. The
// sleeping call runs on a C thread of the waiter's, which wakes Wait
// through the runtime's netpoller (internal/sleeper): no Go thread is
// held. Where ctx can be cancelled, a callback registered with it
// (context.AfterFunc) wakes Wait on cancellation; the driver's wait goes
// on, and a goroutine takes it over, holding a call on the event until it
// returns, so a Close meanwhile returns at once and the event is destroyed
// (and its context released, if its device closed) when the driver's wait
// returns. A Close during the sleep does not end it. A cancelled Wait
// leaves the GPU work and the event untouched. Up to 16 long Waits at once
// per context allocate nothing, with a background ctx, or with a
// cancellable one whose Done channel the waiter's last two long Waits had
// too; with another, the Wait registers its kick with ctx (a few
// allocations) and stops the registration when it returns. Wait
// polls instead (see the constants above), checking ctx and Close every
// millisecond, in an adopted context with a cancellable ctx (no call of
// ours may outlive the Wait there: the context's creator may destroy it),
// where 256 waiters of the context are asleep already, or should the
// driver refuse the private stream or event.
func (e *Event) Wait(ctx context.Context) error {
	const op = "wait for event"
	if ctx == nil {
		return &Error{Op: op, Detail: "nil Context", Fix: "pass context.Background() or a context with a deadline", Err: ErrInvalid}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if e != nil && e.w != nil {
		// Work complete already costs one hazard query (guard.go).
		switch e.hotQuery() {
		case 0:
			return nil
		case hazard.Refused:
			return e.unusable(op, "event")
		}
		// Not ready, or an error: the counted wait below.
	}
	if err := e.enter(op, "event"); err != nil {
		return err
	}
	err := e.wait(ctx)
	e.r.exit()
	return err
}

// wait is Wait's body, with a call counted in on e.
func (e *Event) wait(ctx context.Context) (werr error) {
	const op = "wait for event"
	p := e.dev.p
	spin := waitSpin
	if p.longWaits.Load() {
		spin = waitSpinShort
	}
	_, err := pollEvent(p.ctx, e.h, spin, spin, waitMinSleep, waitMinSleep)
	if err != driver.ErrorNotReady {
		if err == nil && spin != waitSpin {
			p.longWaits.Store(false) // done within the short spin
		}
		return driverErr(op, err)
	}
	t0 := time.Now()
	defer func() {
		if werr == nil { // a cancelled or failed Wait teaches nothing
			p.sleptFor(time.Since(t0))
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	// Sleep in the driver: on e itself if it is a BlockingSync event of
	// this package, else on a waiter's private event behind it (so a
	// sleeping call never holds an adopted wrapper's foreign handle, which
	// its owner may destroy once the wrapper is closed); with a cancellable
	// ctx, a goroutine (finish) may end it after this Wait. Not in an
	// adopted context: its creator may destroy it once its Devices are
	// closed, so no call of ours may outlive a Wait there; and not where the
	// context has waitersBusyMax waiters asleep already (work that never
	// completes, such as a dead IPC exporter's, keeps cancelled sleepers
	// asleep): then it polls.
	cancellable := ctx.Done() != nil
	if cancellable && p.foreign {
		return e.pollWait(ctx)
	}
	if cancellable && !e.r.enter() { // the goroutine's own call, taken first
		return e.unusable(op, "event")
	}
	// exit gives back the goroutine's call when no goroutine takes it.
	exit := func() {
		if cancellable {
			e.r.exit()
		}
	}
	private := !e.opts.BlockingSync || e.r.kind == kindAdopted
	w, err := p.getWaiter() // its thread sleeps (waiter.go)
	if err == nil && cancellable && w.sl == nil {
		// No thread: a cancellable Wait would hold a Go thread in the
		// driver, which it could not leave on cancellation. It polls.
		p.putWaiter(w)
		w, err = nil, errNoSleeper
	}
	if err != nil {
		exit()
		if !private && !cancellable {
			// Sleep on e itself, on this thread.
			return driverErr(op, eventSynchronize(p.ctx, e.h))
		}
		return e.pollWait(ctx)
	}
	target := e.h
	if private {
		if err := w.behind(e.h); err != nil {
			p.putWaiter(w) // its private event was not recorded: still complete
			exit()
			return e.pollWait(ctx)
		}
		target = w.e
	}
	if !cancellable {
		err := w.sync(target)
		p.putWaiter(w)
		return driverErr(op, err)
	}
	return w.syncCtx(ctx, target, e)
}

// sleptFor adapts the spin of p's next Waits to how long this one slept
// (or polled) after its spin.
func (p *primary) sleptFor(d time.Duration) {
	if long := d >= waitLongSlept; p.longWaits.Load() != long {
		p.longWaits.Store(long)
	}
}

// pollWait waits by polling: cgo calls that query the event with sleeps in
// between, returning to Go every waitChunk to check ctx and Close.
func (e *Event) pollWait(ctx context.Context) error {
	const op = "wait for event"
	sleep, maxSleep := waitMinSleep, waitMaxSleep
	start := time.Now()
	for {
		var err error
		sleep, err = pollEvent(e.dev.p.ctx, e.h, 0, waitChunk, sleep, maxSleep)
		if err != driver.ErrorNotReady {
			return driverErr(op, err)
		}
		// The longest sleep grows with the time waited, so a long wait
		// polls less often and wakes at most ~1/16 of its length late.
		maxSleep = min(max(time.Since(start)/waitLateShare, waitMaxSleep), waitLongMaxSleep)
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.r.closed() { // closed meanwhile (by Close or its device's Close)
			return e.unusable(op, "event")
		}
	}
}

// WaitChan starts Wait(ctx) and returns a channel that receives its result
// once, for use in a select:
//
//	select {
//	case err := <-ev.WaitChan(ctx):
//		if err != nil {
//			return err // ctx's error, or the driver's
//		}
//		// the event's work has completed
//	case msg := <-messages:
//		log.Println(msg) // the event is still pending
//	}
//
// A nil Event or nil ctx delivers an error matching ErrInvalid; the
// goroutine it starts never panics.
func (e *Event) WaitChan(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	if ctx == nil || e == nil || e.r == nil {
		ch <- e.Wait(ctx)
		return ch
	}
	go func() { ch <- e.Wait(ctx) }()
	return ch
}
