package cuda

import (
	"errors"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
	"github.com/cudagen/cudagen/cuda/internal/sleeper"
)

// setupHot gives the hazard calls (lifetime.go) and the waiters' threads
// (waiter.go) their entry points, resolved once through the bindings' table
// (the pinned header's ABI versions), each on its own, when the driver is
// initialised, before any object exists. A hazard call without one (no
// cgo, a driver without it at the pinned ABI version) answers
// lifetime.NoSlot: the counted path then makes it; without the waiters'
// (sleeper.Setup fails), a long Wait polls on its own goroutine.
func setupHot() {
	hz := lifetime.Setup()
	want := map[string]int{
		"EventRecord": lifetime.OpRecord, "EventRecordWithFlags": lifetime.OpRecordFlags,
		"EventQuery": lifetime.OpQuery, "EventSynchronize": lifetime.OpSync,
		"EventElapsedTime": lifetime.OpElapsed, "StreamWaitEvent": lifetime.OpStreamWait,
		"StreamQuery": lifetime.OpStreamQuery, "StreamSynchronize": lifetime.OpStreamSync,
		"LaunchKernel": lifetime.OpLaunch,
	}
	for _, f := range driver.Functions {
		if f.Go == "EventElapsedTime" {
			a, err := resolveElapsed(f)
			if err == nil && hz {
				lifetime.SetFn(lifetime.OpElapsed, a)
			}
			continue
		}
		switch f.Go {
		case "EventSynchronize": // for the waiters' threads too (waiter.go)
			sleepFns.sync, _ = f.Resolve()
		case "EventQuery":
			sleepFns.query, _ = f.Resolve()
		case "CtxSetCurrent":
			sleepFns.setCurrent, _ = f.Resolve()
		}
		if op, ok := want[f.Go]; ok && hz {
			if a, err := f.Resolve(); err == nil {
				lifetime.SetFn(op, a)
			}
		}
	}
	sleeper.Setup(sleepFns.sync, sleepFns.query, sleepFns.setCurrent)
}

// Older entry points. The cuda package runs on every driver from 11.3, in
// every build: each driver function it calls exists at the ABI version the
// pinned headers declare in every driver from 11.3 (the newest of them is
// cuEventRecordWithFlags, 11.1), but one: cuEventElapsedTime, which the 13.0
// headers declare as cuEventElapsedTime_v2 (ABI 12080, drivers from 12.8).
// On an older driver Sub calls the original entry point (ABI 2000) instead,
// chosen once when the driver is initialised. The two take the same
// arguments and give the same result; the header documents one difference:
// the _v2 entry point "is not guaranteed to return the latest errors for
// pending work", so on an older driver Sub may report an asynchronous error
// of earlier work (a faulted kernel) that a 12.8 driver leaves to Query and
// Sync. TestDriverMatrix runs the package on the fake driver as drivers of
// 11.8, 12.4 and 13.0, in every build.

// elapsed is the entry point Sub's counted path calls where the bindings'
// own is missing (0: the bindings' own, driver.EventElapsedTime). Set once,
// in setupHot, before any event exists.
var elapsed uintptr

// resolveElapsed resolves f (the bindings' cuEventElapsedTime) and, where
// the driver lacks it at f's ABI version, the original entry point.
func resolveElapsed(f driver.FunctionInfo) (uintptr, error) {
	a, err := f.Resolve()
	if err == nil {
		return a, nil
	}
	if f.ABIVersion <= 2000 || !errors.Is(err, driver.ErrNotSupported) {
		return 0, err
	}
	a, err2 := driver.Lookup(f.Name, 2000)
	if err2 != nil {
		return 0, err // the bindings' error: the newer entry point's
	}
	elapsed = a
	return a, nil
}

// notReady is CUDA_ERROR_NOT_READY as a hazard call returns it.
const notReady = int32(driver.ErrorNotReady)

// Calls on handles, without making the context current.
//
// The driver takes the context of a call on an event, or on a stream that is
// not a default stream, from the handles, not from the calling thread's
// current context. bench/ctxprobe shows it (docs/runs/ctxprobe-2026-11-22-h100-580.159.04.txt, driver 580): with
// no context current, another live context current, a released primary
// context current and a destroyed context current, the record lands on the
// handle's stream (queried not ready behind pending work), and query, sync,
// elapsed time, stream wait, stream query and stream sync all answer as with
// the handles' own context current; so do a kernel launch on the stream
// (its kernel of the stream's context, the values it stores landing) and
// the kernel's parameter query that the bindings' launch makes
// (docs/runs/ctxprobe-2026-11-28-h200-580.159.04.txt). So the hot calls
// (Stream.Launch and LaunchPrepared among them) skip the context check,
// itself a driver call (cuCtxGetCurrent, 23–37 ns on an H100 host: see
// docs/performance.md).
//
// What does depend on the current context always makes it current: the
// default streams (NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name the
// current context's), creation and everything else. And should a driver
// refuse a call made this way (any error but CUDA_ERROR_NOT_READY, whatever
// its name: CUDA_ERROR_INVALID_CONTEXT with none current, or an older
// elapsed-time entry point's CUDA_ERROR_INVALID_HANDLE), the call is made
// again with the context made current, and that answer stands. A failed
// call changed nothing, so making it again is safe (a record or stream wait
// made twice at one point of a stream is one); the retry costs only on the
// error path, and it leaves the context current on that thread. The one way
// it could hide an error: a driver that reports an asynchronous error once
// and clears it (the driver's are sticky: a faulted context fails every
// call), so the retry answers success. bench/ctxprobe runs in the GPU suite;
// the fake driver runs the Go layer's tests both ways (FAKECUDA_WANT_CURRENT).
//
// The handles' context is never a released one: the calls hold their
// objects (in flight on their handles), which keep the context.

// defaultStream reports whether h names a default stream, which the driver
// resolves through the current context.
func defaultStream(h driver.Stream) bool { return uintptr(h) <= 2 }

// retry reports whether a call made without making the context current must
// be made again with it current: any error but not-ready.
func retry(err error) bool { return err != nil && err != driver.ErrorNotReady }

// onHandles makes call with the context c current: first (0, none made
// current; ctx, for a call on a default stream: firstCtx), then, where the
// driver refused it made without (retry), ctx; that answer stands.
func onHandles(ctx, first driver.Context, call func(c driver.Context) error) error {
	err := call(first)
	if first == 0 && retry(err) {
		err = call(ctx)
	}
	return err
}

// firstCtx is the context current for the first making of a call on stream
// s: none, or ctx for a default stream, which the driver resolves through
// the current context.
func firstCtx(ctx driver.Context, s driver.Stream) driver.Context {
	if defaultStream(s) {
		return ctx
	}
	return 0
}

func eventRecord(ctx driver.Context, e driver.Event, s driver.Stream) error {
	return onHandles(ctx, firstCtx(ctx, s), func(c driver.Context) error { return driver.EventRecordCtx(c, e, s) })
}

func eventRecordWithFlags(ctx driver.Context, e driver.Event, s driver.Stream, f driver.EventRecordFlags) error {
	return onHandles(ctx, firstCtx(ctx, s), func(c driver.Context) error { return driver.EventRecordWithFlagsCtx(c, e, s, f) })
}

func eventQuery(ctx driver.Context, e driver.Event) error {
	return onHandles(ctx, 0, func(c driver.Context) error { return driver.EventQueryCtx(c, e) })
}

func eventSynchronize(ctx driver.Context, e driver.Event) error {
	return onHandles(ctx, 0, func(c driver.Context) error { return driver.EventSynchronizeCtx(c, e) })
}

func eventElapsedTime(ctx driver.Context, start, end driver.Event) (ms float32, err error) {
	err = onHandles(ctx, 0, func(c driver.Context) (err error) {
		if elapsed != 0 { // an older driver's entry point (above)
			ms, err = driver.EventElapsedTimeAtCtx(elapsed, c, start, end)
		} else {
			ms, err = driver.EventElapsedTimeCtx(c, start, end)
		}
		return err
	})
	return ms, err
}

func streamWaitEvent(ctx driver.Context, s driver.Stream, e driver.Event, f driver.EventWaitFlags) error {
	return onHandles(ctx, firstCtx(ctx, s), func(c driver.Context) error { return driver.StreamWaitEventCtx(c, s, e, f) })
}

func streamQuery(ctx driver.Context, s driver.Stream) error {
	return onHandles(ctx, firstCtx(ctx, s), func(c driver.Context) error { return driver.StreamQueryCtx(c, s) })
}

func streamSynchronize(ctx driver.Context, s driver.Stream) error {
	return onHandles(ctx, firstCtx(ctx, s), func(c driver.Context) error { return driver.StreamSynchronizeCtx(c, s) })
}

// pollEvent is driver.PollEventCtx without making the context current, and
// with it current if the driver refuses.
func pollEvent(ctx driver.Context, e driver.Event, spin, budget, sleep, maxSleep time.Duration) (next time.Duration, err error) {
	err = onHandles(ctx, 0, func(c driver.Context) (err error) {
		next, err = driver.PollEventCtx(c, e, spin, budget, sleep, maxSleep)
		return err
	})
	return next, err
}
