// Command gocu is github.com/gocnn/gocu v0.7.5 in cudagen's side-by-side run:
// the operations and flags of bench/cbench through the binding's direct path
// (the thread locked, a context made current once: gocu has no primary-context call), printed in
// cbench's format. Its own module, so the main module never builds it;
// bench/peers/build.sh builds it against the cached Debian header and a link
// stub, and the GPU machine's driver runs it.
//
//	gocu [N [RUNS]]
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/cudagen/cudagen/bench/peers/peerbench"
	"github.com/gocnn/gocu"
)

func main() {
	n, runs := peerbench.Args("gocu [N [RUNS]]", os.Args[1:])
	runtime.LockOSThread()
	dev, err := gocu.DeviceGet(0)
	check(err)
	ctx, err := gocu.CtxCreate(0, dev)
	check(err)
	check(ctx.SetCurrent())
	s, err := gocu.StreamCreate(gocu.CuStreamNonBlocking)
	check(err)
	a, err := gocu.EventCreate(gocu.CuEventDisableTiming)
	check(err)
	ta, err := gocu.EventCreate(gocu.CuEventDefault)
	check(err)
	tb, err := gocu.EventCreate(gocu.CuEventDefault)
	check(err)
	check(a.Record(s))
	check(ta.Record(s))
	check(tb.Record(s))
	check(tb.Synchronize())
	drain := func() { check(s.Synchronize()) }
	notReady := func(err error) error {
		if err == gocu.CudaErrorNotReady {
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
	peerbench.Bench("Elapsed", n, runs, drain, func() error { _, err := ta.ElapsedTime(&tb); return err })
	peerbench.Bench("SyncDone", n, runs, drain, func() error { return a.Synchronize() })
	peerbench.Bench("CreateDestroy", n, runs, drain, func() error {
		e, err := gocu.EventCreate(gocu.CuEventDisableTiming)
		if err != nil {
			return err
		}
		return e.Destroy()
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
		fmt.Fprintln(os.Stderr, "gocu:", err)
		os.Exit(1)
	}
}
