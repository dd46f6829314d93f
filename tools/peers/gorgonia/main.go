// Command gorgonia is gorgonia.org/cu v0.9.6 in cudagen's side-by-side run:
// the operations and flags of tools/cbench through the binding's direct path
// (the thread locked, the primary context made current once), printed in
// cbench's format. Its own module, so the main module never builds it;
// tools/peers/build.sh builds it against the cached Debian header and a link
// stub, and the GPU machine's driver runs it.
//
//	gorgonia [N [RUNS]]
package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	cu "gorgonia.org/cu"
)

func main() {
	n, runs := args()
	runtime.LockOSThread()
	dev, err := cu.GetDevice(0)
	check(err)
	ctx, err := dev.RetainPrimaryCtx()
	check(err)
	check(cu.SetCurrentContext(ctx))
	s, err := cu.MakeStream(cu.NonBlocking)
	check(err)
	a, err := cu.MakeEvent(cu.DisableTiming)
	check(err)
	ta, err := cu.MakeEvent(cu.DefaultEvent)
	check(err)
	tb, err := cu.MakeEvent(cu.DefaultEvent)
	check(err)
	check(a.Record(s))
	check(ta.Record(s))
	check(tb.Record(s))
	check(tb.Synchronize())
	drain := func() { check(s.Synchronize()) }
	notReady := func(err error) error {
		if err == cu.NotReady {
			return nil
		}
		return err
	}
	bench("Record", n, runs, drain, func() error { return a.Record(s) })
	bench("Query", n, runs, drain, func() error { return a.Query() })
	bench("RecordQuery", n, runs, drain, func() error {
		if err := a.Record(s); err != nil {
			return err
		}
		return notReady(a.Query())
	})
	bench("Elapsed", n, runs, drain, func() error { _, err := ta.Elapsed(tb); return err })
	bench("SyncDone", n, runs, drain, func() error { return a.Synchronize() })
	bench("CreateDestroy", n, runs, drain, func() error {
		e, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return err
		}
		return cu.DestroyEvent(&e)
	})
	bench("RecordSync", n, runs, drain, func() error {
		if err := a.Record(s); err != nil {
			return err
		}
		return a.Synchronize()
	})
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
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		runs, _ = strconv.Atoi(os.Args[2])
	}
	if n < 1 || runs < 1 || runs > 64 {
		fmt.Fprintln(os.Stderr, "usage: gorgonia [N [RUNS]]")
		os.Exit(2)
	}
	return n, runs
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gorgonia:", err)
		os.Exit(1)
	}
}
