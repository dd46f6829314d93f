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
// ctx is done. It returns nil on completion, ctx.Err() on cancellation and the
// driver's error otherwise.
//
// Design: each step is one cgo call that polls cuEventQuery with the context
// current, first back to back for 50µs (so short waits wake as promptly as
// Sync), then sleeping between polls, the sleep doubling from 2µs to 100µs,
// and returns to Go every millisecond to check ctx. After the first
// millisecond the longest sleep grows to a sixteenth of the time waited, up
// to 1ms: a long wait polls less and wakes at most ~6% of its length late. An event created with
// BlockingSync is instead waited for by a goroutine blocked in the driver's
// own sleeping wait, raced against ctx; on cancellation that goroutine stays
// blocked until the event completes. A cancelled Wait leaves the GPU work
// and the event untouched.
func (e *Event) Wait(ctx context.Context) error {
	const op = "wait for event"
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.acquire() {
		return e.unusable(op, "event")
	}
	defer e.release()
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
	}
}

func (e *Event) blockingWait(ctx context.Context) error {
	if ctx.Done() == nil {
		return driverErr("wait for event", driver.EventSynchronizeCtx(e.dev.p.ctx, e.h))
	}
	done := make(chan error, 1)
	if !e.acquire() { // held by the goroutine until the driver returns
		return closedErr("wait for event", "event")
	}
	go func() {
		defer e.release()
		done <- driver.EventSynchronizeCtx(e.dev.p.ctx, e.h)
	}()
	select {
	case err := <-done:
		return driverErr("wait for event", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitChan starts Wait(ctx) and returns a channel that receives its result
// once, for use in a select:
//
//	select {
//	case err := <-ev.WaitChan(ctx):
//	case msg := <-other:
//	}
func (e *Event) WaitChan(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- e.Wait(ctx) }()
	return ch
}
