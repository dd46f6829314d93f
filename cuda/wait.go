package cuda

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
	"github.com/cudagen/cudagen/cuda/internal/sleeper"
)

// Tuning of Wait. Short waits are served by back-to-back queries for
// waitSpin, so a wait on work that is about to finish costs what Sync costs;
// longer waits go to the waiter threads (waiter.go). Where there are none
// (no cgo thread support), they poll with sleeps that grow to waitMaxSleep,
// then to a sixteenth of the time waited up to waitLongMaxSleep, checking
// ctx every waitChunk.
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
	// At most waitSpinners Waits spin at once in the process; the others
	// query once and go to the waiter threads: many Waits at once gain
	// nothing from spinning, and each spin holds a Go thread in a cgo call
	// (10,000 Waits at once would have the runtime start a hundred).
	waitSpinners = 4
)

// spinners counts the Waits spinning now.
var spinners atomic.Int32

// Wait blocks until the work captured by the latest Record has completed, or
// ctx is done. It returns nil on completion, ctx.Err() on cancellation, an
// error matching ErrClosed if the event (or its device) was closed before it
// began, and the driver's error otherwise. A nil ctx is refused with
// ErrInvalid.
//
// A Close of the event, or of its Device, during a Wait does not end it:
// the Wait goes on as if the Close had come after it, and returns nil when
// the work completes (or ctx.Err(), or the driver's error); the Close
// returns at once, and the event is destroyed (and the context released)
// once the Wait's calls are done. That holds in every mode below, in a
// primary context and an adopted one alike.
//
// Design: first it queries the event back to back in one cgo call, for
// 50µs (10µs after a Wait of the context that slept 1ms or more; one query
// where 4 Waits of the process spin already), so a short wait wakes as
// promptly as Sync. Then the wait goes to the package's waiter threads
// (waiter.go, internal/sleeper), and the goroutine parks on a channel and
// on ctx.Done(), holding no thread: cancellation returns at once, however
// many Waits there are. Up to 16 long Waits at once in the
// process are blocked: each has a C thread asleep in the driver until the
// GPU completes the work (on the event itself if it was created with
// BlockingSync and not adopted, else on a private blocking event of the
// context recorded behind it on a private stream), so a long wait uses a
// small share of a core whatever the event's options. The others are
// polled: one C thread queries all of their events, sleeping between
// rounds from 20µs up to a sixteenth of the time waited (at most 1ms), so
// they wake up to that late. A cancellable Wait in an adopted context is
// always polled.
//
// Cost: whatever the number of Waits, the process has at most 17 waiter
// threads (each exits after 10s idle), one eventfd (plus the Go runtime's
// netpoller's, if nothing else started it), one goroutine while any waiter
// thread's answer is owed, and a waiter (a driver stream and event) per
// blocked Wait, of which each context keeps 16 idle. A cancelled blocked
// Wait leaves its thread asleep in the driver until the work completes,
// holding a call on the event (so 16 cancelled Waits on work that never
// completes, such as a dead IPC exporter's, leave every later one
// polled); a
// cancelled polled Wait leaves nothing. Steady-state long Waits allocate
// nothing.
func (e *Event) Wait(ctx context.Context) error {
	const op = "wait for event"
	if ctx == nil {
		return &Error{Op: op, Detail: "nil Context", Fix: "pass context.Background() or a context with a deadline", Err: ErrInvalid}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Work complete already costs one hazard query (lifetime.go); not
	// ready, or an error: the counted wait (call.run, then wait).
	r := noHot
	if e != nil && e.w != nil {
		if r = lifetime.Query(lifetime.Addr(e.w), uintptr(e.h)); r == 0 {
			return nil
		}
	}
	_, err := (&call{op: opWait, name: op, e: e, ctx: ctx}).run(r)
	return err
}

// wait is Wait's body, with a call counted in on e.
func (e *Event) wait(ctx context.Context) (werr error) {
	const op = "wait for event"
	p := e.dev.p
	spin := waitSpin
	if p.waits.long.Load() {
		spin = waitSpinShort
	}
	if spinners.Add(1) > waitSpinners {
		spin = 0 // one query
	}
	_, err := pollEvent(p.ctx, e.h, spin, spin, waitMinSleep, waitMinSleep)
	spinners.Add(-1)
	if err != driver.ErrorNotReady {
		if err == nil && spin != waitSpin {
			p.waits.long.Store(false) // done within the short spin
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
	j := sleeper.Get()
	if j == nil { // no waiter threads here
		return e.pollWait(ctx)
	}
	done := ctx.Done()
	// Blocked, where a thread is free, and where a cancelled Wait's driver
	// sleep may outlive it: not in an adopted context (see waiter.go).
	if (done == nil || !p.foreign) && sleeper.Reserve() {
		if res, ok, started := e.blocked(j, done); started {
			if !ok {
				return ctx.Err() // the job goes on: abandoned finishes it
			}
			return driverErr(op, driver.Result(res).Err())
		}
	}
	if !j.Poll(uintptr(p.ctx), uintptr(e.h)) {
		j.Put()
		return e.pollWait(ctx)
	}
	res, ok := j.Wait(done)
	j.Put() // answered, or cancelled: the poller is done with e
	if !ok {
		return ctx.Err()
	}
	return driverErr(op, driver.Result(res).Err())
}

// blocked runs a wait on a reserved waiter thread: on e itself if it is a
// BlockingSync event of this package, else on a waiter's private event
// behind it (so a sleeping call never holds an adopted wrapper's foreign
// handle, which its owner may destroy once the wrapper is closed). The job
// holds a call of its own on e until the driver's sleep returns. started
// is false if the job could not start (the reservation is then given
// back): the Wait polls. ok is false if done came first: the job, its call
// and its waiter are then abandoned's.
func (e *Event) blocked(j *sleeper.Job, done <-chan struct{}) (res int32, ok, started bool) {
	p := e.dev.p
	target, w := e.h, (*waiter)(nil)
	if !e.opts.BlockingSync || e.r.Kind == lifetime.KindAdopted {
		var err error
		if w, err = p.getWaiter(); err == nil {
			if err = w.behind(e.h); err != nil {
				p.putWaiter(w) // its private event was not recorded: still complete
			}
		}
		if err != nil {
			sleeper.Unreserve()
			return 0, false, false
		}
		target = w.e
	}
	o := owner(j)
	o.w, o.r = w, e.r
	e.r.Hold()
	if !j.Block(uintptr(p.ctx), uintptr(target)) {
		o.w, o.r = nil, nil
		e.r.Exit() // the Wait's own call stays: e is not finished
		if w != nil {
			p.putWaiter(w) // recorded, not waited for: the driver destroys a pending event without waiting
		}
		return 0, false, false
	}
	if res, ok = j.Wait(done); !ok {
		return 0, false, true
	}
	o.w, o.r = nil, nil
	j.Put()
	if w != nil {
		p.putWaiter(w)
	}
	e.r.Exit()
	return res, true, true
}

// sleptFor adapts the spin of p's next Waits to how long this one slept
// (or polled) after its spin.
func (p *ctxState) sleptFor(d time.Duration) {
	if long := d >= waitLongSlept; p.waits.long.Load() != long {
		p.waits.long.Store(long)
	}
}

// pollWait waits by polling, where there are no waiter threads (no cgo
// thread support, or no memory): cgo calls that query the event with
// sleeps in between, returning to Go every waitChunk to check ctx.
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
		// A Close meanwhile does not end it (see Wait): the call it holds
		// keeps the event.
	}
}

// MaxBlockedWaits is how many long Waits at once, in the process, sleep
// in the driver on a waiter thread of their own (see Wait); the others
// are polled by one thread. 0 where there are no waiter threads (without
// cgo, or not on Linux): there each long Wait polls on its own goroutine.
const MaxBlockedWaits = sleeper.MaxBlockers

// WaiterStats are the resources of the process's long Waits (see Wait).
type WaiterStats struct {
	// Threads is the waiter threads alive: at most MaxBlockedWaits + 1
	// (each exits after 10s idle).
	Threads int
	// Blocked is the long Waits asleep in the driver on a thread of their
	// own now, cancelled ones' sleeps included: at most MaxBlockedWaits.
	Blocked int
	// BlockedTotal and PolledTotal count the long Waits that were blocked
	// and polled since the process started.
	BlockedTotal, PolledTotal int64
}

// ReadWaiterStats returns the resources of the process's long Waits now.
func ReadWaiterStats() WaiterStats {
	s := sleeper.ReadStats()
	n := s.Blockers
	if s.Poller {
		n++
	}
	return WaiterStats{Threads: n, Blocked: s.Reserved, BlockedTotal: s.Blocks, PolledTotal: s.Polls}
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
