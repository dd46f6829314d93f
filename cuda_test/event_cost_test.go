//go:build cgo

package gputest

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// Per-operation benchmarks, each the Go counterpart of one loop of
// bench/cbench/cbench.c (C calling the driver directly). tools/gpu-suite.sh
// runs both in one command on the GPU machine.

type benchEnv struct {
	dev  *cuda.Device
	s    *cuda.Stream
	a, b *cuda.Event
}

// newEnv makes a stream and two events with opts, records both and waits,
// and closes them when the test ends.
func newEnv(tb testing.TB, opts cuda.EventOptions) benchEnv {
	tb.Helper()
	dev := gpu(tb)
	s := must[*cuda.Stream](tb)(dev.NewStream())
	e1 := must[*cuda.Event](tb)(dev.NewEvent(opts))
	e2 := must[*cuda.Event](tb)(dev.NewEvent(opts))
	tb.Cleanup(func() { e1.Close(); e2.Close(); s.Close() })
	ok(tb, s.Record(e1))
	ok(tb, s.Record(e2))
	ok(tb, e2.Sync())
	return benchEnv{dev, s, e1, e2}
}

func setup(b *testing.B, opts cuda.EventOptions) benchEnv {
	env := newEnv(b, opts)
	b.ReportAllocs()
	b.ResetTimer()
	return env
}

func BenchmarkRecord(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := env.s.Record(env.a); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	env.s.Sync()
}

func BenchmarkQuery(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if done, err := env.a.Query(); !done || err != nil {
			b.Fatal(done, err)
		}
	}
}

func BenchmarkSyncDone(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := env.a.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordQuery(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := env.s.Record(env.a); err != nil {
			b.Fatal(err)
		}
		if _, err := env.a.Query(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	env.s.Sync()
}

func BenchmarkElapsed(b *testing.B) {
	env := setup(b, cuda.EventOptions{Timing: true})
	for i := 0; i < b.N; i++ {
		if _, err := env.b.Sub(env.a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateDestroy(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		e, err := env.dev.NewEvent(cuda.EventOptions{})
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

func BenchmarkRecordSync(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := env.s.Record(env.a); err != nil {
			b.Fatal(err)
		}
		if err := env.a.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordWait(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if err := env.s.Record(env.a); err != nil {
			b.Fatal(err)
		}
		if err := env.a.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// The same operations through the generated layer alone (cuda/driver's *Ctx
// calls: one cgo crossing that makes the context current and calls the
// driver), to split what Go adds to C into the crossing and the cuda
// package's own work (the close guards and the checks).

type rawEnv struct {
	ctx  driver.Context
	s    driver.Stream
	a, b driver.Event
}

func setupRaw(b *testing.B, opts cuda.EventOptions) rawEnv {
	env := setup(b, opts)
	b.Cleanup(func() { env.s.Sync() })
	return rawEnv{env.dev.Context(), env.s.Handle(), env.a.Handle(), env.b.Handle()}
}

func BenchmarkDriverRecord(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := driver.EventRecordCtx(r.ctx, r.a, r.s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDriverQuery(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := driver.EventQueryCtx(r.ctx, r.a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDriverRecordQuery(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := driver.EventRecordCtx(r.ctx, r.a, r.s); err != nil {
			b.Fatal(err)
		}
		if err := driver.EventQueryCtx(r.ctx, r.a); err != nil && err != driver.ErrorNotReady {
			b.Fatal(err)
		}
	}
}

func BenchmarkDriverElapsed(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{Timing: true})
	for i := 0; i < b.N; i++ {
		if _, err := driver.EventElapsedTimeCtx(r.ctx, r.a, r.b); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDriverSyncDone(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := driver.EventSynchronizeCtx(r.ctx, r.a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDriverCreateDestroy(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		e, err := driver.EventCreateCtx(r.ctx, driver.EventDisableTiming)
		if err != nil {
			b.Fatal(err)
		}
		if err := driver.EventDestroyCtx(r.ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDriverRecordSync(b *testing.B) {
	r := setupRaw(b, cuda.EventOptions{})
	for i := 0; i < b.N; i++ {
		if err := driver.EventRecordCtx(r.ctx, r.a, r.s); err != nil {
			b.Fatal(err)
		}
		if err := driver.EventSynchronizeCtx(r.ctx, r.a); err != nil {
			b.Fatal(err)
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Long waits: GPU work of 10ms, waited for with Wait(ctx) (and with Sync, for
// comparison). Reports the CPU used by the waiting process as a share of one
// core, and how late the wait returned after the event's completion.
func benchLongWait(b *testing.B, opts cuda.EventOptions, wait func(*cuda.Event) error) {
	benchLongWaitCtx(b, opts, nil, func(e *cuda.Event, _ context.Context) error { return wait(e) })
}

// benchLongWaitCtx is benchLongWait with a context made by mk for each wait
// (nil: none) before the measured part, and cancelled inside it, after the
// wait: what the wait costs, its registration with the context included,
// without what the context's creation costs its creator.
func benchLongWaitCtx(b *testing.B, opts cuda.EventOptions, mk func() (context.Context, context.CancelFunc), wait func(*cuda.Event, context.Context) error) {
	env := setup(b, cuda.EventOptions{Timing: true})
	ev := must[*cuda.Event](b)(env.dev.NewEvent(opts))
	defer ev.Close()
	const work = 10 * time.Millisecond
	var cpu, wall time.Duration
	ghz := clockGHz()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.Context(nil), context.CancelFunc(func() {})
		if mk != nil {
			ctx, cancel = mk()
		}
		ok(b, env.s.Spin(work))
		ok(b, env.s.Record(ev))
		c0, w0 := cpuTime(), time.Now()
		err := wait(ev, ctx)
		cancel()
		cpu += cpuTime() - c0
		wall += time.Since(w0)
		ok(b, err)
	}
	ghz = (ghz + clockGHz()) / 2
	b.ReportMetric(100*float64(cpu)/float64(wall), "%cpu")
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "µs-wall/op")
	// The same CPU time is half the share at twice the clock: the clock
	// around the loop says which the run had.
	b.ReportMetric(ghz, "GHz")
}

func BenchmarkWaitLong10ms(b *testing.B) {
	benchLongWait(b, cuda.EventOptions{}, func(e *cuda.Event) error { return e.Wait(context.Background()) })
}

func BenchmarkWaitLong10msCancellable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchLongWait(b, cuda.EventOptions{}, func(e *cuda.Event) error { return e.Wait(ctx) })
}

// A context of its own per Wait, as a request's would be: each Wait
// selects on its context's Done channel. The context is made before the
// measured part (the timer of WithTimeout costs its creator, not Wait) and
// cancelled inside it.
func BenchmarkWaitLong10msCtxPerWait(b *testing.B) {
	benchLongWaitCtx(b, cuda.EventOptions{},
		func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		},
		func(e *cuda.Event, ctx context.Context) error { return e.Wait(ctx) })
}

func BenchmarkWaitLong10msBlockingSync(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchLongWait(b, cuda.EventOptions{BlockingSync: true}, func(e *cuda.Event) error { return e.Wait(ctx) })
}

func BenchmarkSyncLong10ms(b *testing.B) {
	benchLongWait(b, cuda.EventOptions{}, func(e *cuda.Event) error { return e.Sync() })
}

func BenchmarkCgoFloor(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cgoNoop()
	}
}

func resolve(b *testing.B, goName string) uintptr {
	for _, f := range driver.Functions {
		if f.Go == goName {
			fn, err := f.Resolve()
			if err != nil {
				b.Fatal(err)
			}
			return fn
		}
	}
	b.Fatalf("%s not bound", goName)
	return 0
}

// The driver's own cost on a Go-created thread: b.N calls in one crossing.
func BenchmarkDiagSyncDoneLoopInC(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	fn := resolve(b, "EventSynchronize")
	ok(b, driver.CtxSetCurrent(env.dev.Context()))
	if r := loopInC(fn, uintptr(env.a.Handle()), b.N); r != 0 {
		b.Fatal(driver.Result(r))
	}
}

func BenchmarkDiagQueryLoopInC(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	fn := resolve(b, "EventQuery")
	ok(b, driver.CtxSetCurrent(env.dev.Context()))
	if r := loopInC(fn, uintptr(env.a.Handle()), b.N); r != 0 {
		b.Fatal(driver.Result(r))
	}
}

func BenchmarkDiagRecordLoopInC(b *testing.B) {
	env := setup(b, cuda.EventOptions{})
	fn := resolve(b, "EventRecord")
	ok(b, driver.CtxSetCurrent(env.dev.Context()))
	if r := loopInC2(fn, uintptr(env.a.Handle()), uintptr(env.s.Handle()), b.N); r != 0 {
		b.Fatal(driver.Result(r))
	}
	b.StopTimer()
	env.s.Sync()
}
