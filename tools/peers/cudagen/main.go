// Command cudagen is this module in the side-by-side run: the operations and
// flags of tools/cbench through the cuda package (-layer cuda, the default)
// or the generated layer's *Ctx calls (-layer driver), printed in cbench's
// format, with the same loop as the other Go peers. The cuda layer also runs
// RecordWait (record + Wait(ctx), against C's record + sync) and PoolGetPut.
//
//	cudagen [-layer cuda|driver] [-lock] [N [RUNS]]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

func main() {
	layer := flag.String("layer", "cuda", "cuda (the package) or driver (the generated layer; experiments: driver-noctx, driver-atomics)")
	lock := flag.Bool("lock", false, "lock the main goroutine to its OS thread first (an experiment: the package never needs it)")
	flag.Parse()
	if *lock {
		runtime.LockOSThread()
	}
	n, runs := args()
	dev, err := cuda.GetDevice(0)
	check(err)
	s, err := dev.NewStream()
	check(err)
	a, err := dev.NewEvent(cuda.EventOptions{})
	check(err)
	ta, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	check(err)
	tb, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	check(err)
	check(s.Record(a))
	check(s.Record(ta))
	check(s.Record(tb))
	check(tb.Sync())
	drain := func() { check(s.Sync()) }
	switch *layer {
	case "cuda":
		bg := context.Background()
		bench("Record", n, runs, drain, func() error { return s.Record(a) })
		bench("Query", n, runs, drain, func() error { _, err := a.Query(); return err })
		bench("RecordQuery", n, runs, drain, func() error {
			if err := s.Record(a); err != nil {
				return err
			}
			_, err := a.Query()
			return err
		})
		bench("Elapsed", n, runs, drain, func() error { _, err := tb.Sub(ta); return err })
		bench("SyncDone", n, runs, drain, func() error { return a.Sync() })
		bench("CreateDestroy", n, runs, drain, func() error {
			e, err := dev.NewEvent(cuda.EventOptions{})
			if err != nil {
				return err
			}
			return e.Close()
		})
		bench("RecordSync", n, runs, drain, func() error {
			if err := s.Record(a); err != nil {
				return err
			}
			return a.Sync()
		})
		bench("RecordWait", n, runs, drain, func() error {
			if err := s.Record(a); err != nil {
				return err
			}
			return a.Wait(bg)
		})
		pool, err := dev.NewEventPool(cuda.EventOptions{}, 0)
		check(err)
		bench("PoolGetPut", n, runs, drain, func() error {
			e, err := pool.Get()
			if err != nil {
				return err
			}
			pool.Put(e)
			return nil
		})
	case "driver-noctx", "driver-atomics":
		// Experiments (tools/gpu-exp-state.sh): the generated layer's plain
		// calls (no context check), bare or with four atomic adds per call
		// on a word of their own (what the package's close guards do).
		sh, ah := s.Handle(), a.Handle()
		var word atomic.Int64
		guard := *layer == "driver-atomics"
		g := func() {
			if guard {
				word.Add(1)
				word.Add(1)
				word.Add(-1)
				word.Add(-1)
			}
		}
		bench("Record", n, runs, drain, func() error { err := driver.EventRecord(ah, sh); g(); return err })
		bench("Query", n, runs, drain, func() error { err := driver.EventQuery(ah); g(); return err })
		bench("SyncDone", n, runs, drain, func() error { err := driver.EventSynchronize(ah); g(); return err })
	case "driver":
		ctx, sh, ah, tah, tbh := dev.Context(), s.Handle(), a.Handle(), ta.Handle(), tb.Handle()
		bench("Record", n, runs, drain, func() error { return driver.EventRecordCtx(ctx, ah, sh) })
		bench("Query", n, runs, drain, func() error { return driver.EventQueryCtx(ctx, ah) })
		bench("RecordQuery", n, runs, drain, func() error {
			if err := driver.EventRecordCtx(ctx, ah, sh); err != nil {
				return err
			}
			if err := driver.EventQueryCtx(ctx, ah); err != driver.ErrorNotReady {
				return err
			}
			return nil
		})
		bench("Elapsed", n, runs, drain, func() error { _, err := driver.EventElapsedTimeCtx(ctx, tah, tbh); return err })
		bench("SyncDone", n, runs, drain, func() error { return driver.EventSynchronizeCtx(ctx, ah) })
		bench("CreateDestroy", n, runs, drain, func() error {
			e, err := driver.EventCreateCtx(ctx, driver.EventDisableTiming)
			if err != nil {
				return err
			}
			return driver.EventDestroyCtx(ctx, e)
		})
		bench("RecordSync", n, runs, drain, func() error {
			if err := driver.EventRecordCtx(ctx, ah, sh); err != nil {
				return err
			}
			return driver.EventSynchronizeCtx(ctx, ah)
		})
	default:
		fmt.Fprintln(os.Stderr, "cudagen: -layer is cuda or driver")
		os.Exit(2)
	}
}

// bench prints the median ns per call over runs loops of n calls, the stream
// drained after each loop, as tools/cbench does.
func bench(name string, n, runs int, drain func(), body func() error) {
	v := make([]float64, runs)
	for r := range v {
		t0 := time.Now()
		for i := 0; i < n; i++ {
			if err := body(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				os.Exit(1)
			}
		}
		v[r] = float64(time.Since(t0).Nanoseconds()) / float64(n)
		drain()
	}
	slices.Sort(v)
	fmt.Printf("%-14s %8.1f ns/op (median of %d loops of %d)\n", name, v[runs/2], runs, n)
}

func args() (n, runs int) {
	n, runs = 200000, 5
	if flag.NArg() > 0 {
		n, _ = strconv.Atoi(flag.Arg(0))
	}
	if flag.NArg() > 1 {
		runs, _ = strconv.Atoi(flag.Arg(1))
	}
	if n < 1 || runs < 1 || runs > 64 {
		fmt.Fprintln(os.Stderr, "usage: cudagen [-layer cuda|driver] [N [RUNS]]")
		os.Exit(2)
	}
	return n, runs
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudagen:", err)
		os.Exit(1)
	}
}
