//go:build cgo

package gputest

import (
	"context"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// BenchmarkWaitStrategy measures ways of waiting for an event without a core
// spinning, for the design of Wait (docs/cuda-package.md, "Wait: design"): the CPU used per wait as a
// share of one core, and the wall time of the wait, on GPU work of 10ms and
// on short work. Strategies, at the generated layer:
//
//   - sync: cuEventSynchronize on a spinning event (the latency floor);
//   - wait: the package's Wait;
//   - blocking: a private CU_EVENT_BLOCKING_SYNC event recorded on a private
//     stream made to wait for the event (cuStreamWaitEvent), then
//     cuEventSynchronize on it: the driver's interrupt-driven sleep, for an
//     event created without BlockingSync;
//   - blocking-goroutine: the same on a goroutine raced against a context,
//     as a cancellable Wait would run it;
//   - sleep1ms: cuEventQuery every millisecond, in C (one cgo call);
//   - hostfunc: cuLaunchHostFunc on a private stream made to wait for the
//     event, whose C function wakes the waiter blocked on an eventfd;
//   - idle: time.Sleep past the work, then one query: what one wake of a
//     sleeping goroutine costs, the floor of any wait that sleeps.
func BenchmarkWaitStrategy(b *testing.B) {
	for _, work := range []time.Duration{10 * time.Millisecond, 40 * time.Millisecond, 200 * time.Microsecond, 20 * time.Microsecond} {
		for _, name := range []string{"sync", "wait", "blocking", "blocking-goroutine", "sleep1ms", "hostfunc", "hostfunc-netpoll", "cthread", "idle"} {
			b.Run(name+"/"+work.String(), func(b *testing.B) { benchWaitStrategy(b, name, work) })
		}
	}
}

func benchWaitStrategy(b *testing.B, name string, work time.Duration) {
	env := setup(b, cuda.EventOptions{})
	ctx := env.dev.Context()
	ev := must[*cuda.Event](b)(env.dev.NewEvent(cuda.EventOptions{}))
	defer ev.Close()
	priv := must[*cuda.Stream](b)(env.dev.NewStream())
	defer priv.Close()
	blk := must[*cuda.Event](b)(env.dev.NewEvent(cuda.EventOptions{BlockingSync: true}))
	defer blk.Close()
	h, ph, bh := ev.Handle(), priv.Handle(), blk.Handle()
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	blocking := func() error {
		if err := driver.StreamWaitEventCtx(ctx, ph, h, 0); err != nil {
			return err
		}
		if err := driver.EventRecordCtx(ctx, bh, ph); err != nil {
			return err
		}
		return driver.EventSynchronizeCtx(ctx, bh)
	}
	ef := newEfd()
	defer ef.close()
	var wait func() error
	switch name {
	case "hostfunc":
		wait = func() error {
			if err := driver.StreamWaitEventCtx(ctx, ph, h, 0); err != nil {
				return err
			}
			if err := driver.LaunchHostFuncCtx(ctx, ph, ef.fn(), ef.data()); err != nil {
				return err
			}
			if !ef.wait() {
				b.Fatal("eventfd read failed")
			}
			return nil
		}
	case "hostfunc-netpoll":
		en := newEfdNB()
		defer en.close()
		buf := make([]byte, 8)
		wait = func() error {
			if err := driver.StreamWaitEventCtx(ctx, ph, h, 0); err != nil {
				return err
			}
			if err := driver.LaunchHostFuncCtx(ctx, ph, en.fn(), en.data()); err != nil {
				return err
			}
			if !en.wait(buf) {
				b.Fatal("eventfd read failed")
			}
			return nil
		}
	case "cthread":
		var syncFn uintptr
		for _, f := range driver.Functions {
			if f.Go == "EventSynchronize" {
				syncFn, _ = f.Resolve()
			}
		}
		if syncFn == 0 {
			b.Fatal("no cuEventSynchronize")
		}
		ct := newCthread(syncFn)
		buf := make([]byte, 8)
		wait = func() error {
			if err := driver.StreamWaitEventCtx(ctx, ph, h, 0); err != nil {
				return err
			}
			if err := driver.EventRecordCtx(ctx, bh, ph); err != nil {
				return err
			}
			ct.start(bh)
			if r := ct.wait(buf); r != 0 {
				return driver.Result(r)
			}
			return nil
		}
	case "idle":
		wait = func() error {
			time.Sleep(work + work/10)
			return driver.EventQueryCtx(ctx, h)
		}
	case "sync":
		wait = func() error { return driver.EventSynchronizeCtx(ctx, h) }
	case "wait":
		wait = func() error { return ev.Wait(cctx) }
	case "blocking":
		wait = blocking
	case "blocking-goroutine":
		wait = func() error {
			go func() { done <- blocking() }()
			select {
			case err := <-done:
				return err
			case <-cctx.Done():
				return cctx.Err()
			}
		}
	case "sleep1ms":
		wait = func() error {
			_, err := driver.PollEventCtx(ctx, h, 0, time.Second, time.Millisecond, time.Millisecond)
			return err
		}
	}
	var cpu, wall time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ok(b, env.s.Spin(work))
		ok(b, env.s.Record(ev))
		c0, w0 := cpuTime(), time.Now()
		ok(b, wait())
		cpu += cpuTime() - c0
		wall += time.Since(w0)
	}
	b.ReportMetric(100*float64(cpu)/float64(wall), "%cpu")
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "µs-wall/op")
}
