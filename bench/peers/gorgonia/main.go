// Command gorgonia is gorgonia.org/cu v0.9.6 in cudagen's side-by-side run:
// the operations and flags of bench/cbench through the binding's direct path
// (the thread locked, the primary context made current once), printed in
// cbench's format. Its own module, so the main module never builds it;
// bench/peers/build.sh builds it against the cached Debian header and a link
// stub, and the GPU machine's driver runs it.
//
//	gorgonia [N [RUNS]]
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/cudagen/cudagen/bench/peers/peerbench"
	cu "gorgonia.org/cu"
)

func main() {
	n, runs := peerbench.Args("gorgonia [N [RUNS]]", os.Args[1:])
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
	peerbench.Bench("Record", n, runs, drain, func() error { return a.Record(s) })
	peerbench.Bench("Query", n, runs, drain, func() error { return a.Query() })
	peerbench.Bench("RecordQuery", n, runs, drain, func() error {
		if err := a.Record(s); err != nil {
			return err
		}
		return notReady(a.Query())
	})
	peerbench.Bench("Elapsed", n, runs, drain, func() error { _, err := ta.Elapsed(tb); return err })
	peerbench.Bench("SyncDone", n, runs, drain, func() error { return a.Synchronize() })
	peerbench.Bench("CreateDestroy", n, runs, drain, func() error {
		e, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return err
		}
		return cu.DestroyEvent(&e)
	})
	peerbench.Bench("RecordSync", n, runs, drain, func() error {
		if err := a.Record(s); err != nil {
			return err
		}
		return a.Synchronize()
	})
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gorgonia:", err)
		os.Exit(1)
	}
}
