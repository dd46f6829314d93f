package cuda

import (
	"context"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Tuning of Wait. Short waits are served by spinning, so a wait on work that
// is about to finish costs what Sync costs; longer waits poll with sleeps
// that grow to waitMaxSleep, so a long wait uses a few percent of a core and
// wakes at most waitMaxSleep late; ctx is checked every waitChunk.
const (
	waitSpin     = 50 * time.Microsecond
	waitMinSleep = 2 * time.Microsecond
	waitMaxSleep = 100 * time.Microsecond
	waitChunk    = time.Millisecond
	// Past the first chunk, the longest sleep is the time waited over
	// waitLateShare, between waitMaxSleep and waitLongMaxSleep.
	waitLateShare    = 16
	waitLongMaxSleep = time.Millisecond
)

// Wait blocks until the work captured by the latest Record has completed, or
// ctx is done. It returns nil on completion, ctx.Err() on cancellation, an
// error matching ErrClosed if the event (or its device) is closed meanwhile,
// and the driver's error otherwise. A nil ctx is refused with ErrInvalid.
//
// Design: each step is one cgo call that polls cuEventQuery with the context
// current, first back to back for 50µs (so short waits wake as promptly as
// Sync), then sleeping between polls, the sleep doubling from 2µs to 100µs,
// and returns to Go every millisecond to check ctx. After the first
// millisecond the longest sleep grows to a sixteenth of the time waited, up
// to 1ms: a long wait polls less and wakes at most ~6% of its length late. An event created with
// BlockingSync is instead waited for by a goroutine blocked in the driver's
// own sleeping wait, raced against ctx; on cancellation that goroutine stays
// blocked until the event completes, holding its call on the event, so a
// Close meanwhile returns at once and the event is destroyed when the
// driver's wait returns. A cancelled Wait leaves the GPU work and the event
// untouched.
func (e *Event) Wait(ctx context.Context) error {
	const op = "wait for event"
	if ctx == nil {
		return &Error{Op: op, Detail: "nil Context", Fix: "pass context.Background() or a context with a deadline", Err: ErrInvalid}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var s0 int64
	if e != nil && e.r != nil {
		s0 = e.r.state.Add(1)
	}
	if e == nil || e.r == nil || s0&closing != 0 {
		return e.enterErr(op, "event")
	}
	err := e.wait(ctx)
	if err == nil {
		e.r.doneExit(s0) // complete: its handle may be reused (recycle.go)
	} else {
		e.r.exit()
	}
	return err
}

// wait is Wait's body, with a call counted in on e.
func (e *Event) wait(ctx context.Context) error {
	const op = "wait for event"
	spin := waitSpin
	if e.opts.BlockingSync {
		// Spin briefly, then sleep in the driver.
		_, err := driver.PollEventCtx(e.dev.p.ctx, e.h, spin, spin, waitMinSleep, waitMinSleep)
		if err != driver.ErrorNotReady {
			return driverErr(op, err)
		}
		return e.blockingWait(ctx)
	}
	sleep, maxSleep := waitMinSleep, waitMaxSleep
	var start time.Time
	for {
		var err error
		sleep, err = driver.PollEventCtx(e.dev.p.ctx, e.h, spin, waitChunk, sleep, maxSleep)
		if err != driver.ErrorNotReady {
			return driverErr(op, err)
		}
		if spin != 0 {
			spin, start = 0, time.Now()
		} else {
			// The longest sleep grows with the time waited, so a long wait
			// polls less often and wakes at most ~1/16 of its length late.
			maxSleep = min(max(time.Since(start)/waitLateShare, waitMaxSleep), waitLongMaxSleep)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.r.closed() { // closed meanwhile (by Close or its device's Close)
			return e.unusable(op, "event")
		}
	}
}

// blockingWait runs the driver's sleeping wait on a goroutine raced against
// ctx. The goroutine holds its own call on the event until the driver
// returns, so a Close after a cancelled wait returns at once and the event
// is destroyed (and its context released, if its device closed) when the
// driver's wait ends.
func (e *Event) blockingWait(ctx context.Context) error {
	const op = "wait for event"
	if ctx.Done() == nil {
		return driverErr(op, driver.EventSynchronizeCtx(e.dev.p.ctx, e.h))
	}
	done := make(chan error, 1)
	if !e.r.enter() { // the caller holds a call: this cannot fail, but never leak one
		return e.unusable(op, "event")
	}
	go func() {
		defer e.r.exit()
		done <- driver.EventSynchronizeCtx(e.dev.p.ctx, e.h)
	}()
	select {
	case err := <-done:
		return driverErr(op, err)
	case <-ctx.Done():
		return ctx.Err()
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
