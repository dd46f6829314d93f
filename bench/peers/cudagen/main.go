// Command cudagen is this module in the side-by-side run: the operations and
// flags of bench/cbench through the cuda package (-layer cuda, the default)
// or the generated layer's *Ctx calls (-layer driver), printed in cbench's
// format, with the same loop as the other Go peers. The cuda layer also runs
// RecordWait (record + Wait(ctx), against C's record + sync).
//
//	cudagen [-layer cuda|driver] [N [RUNS]]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/cudagen/cudagen/bench/peers/peerbench"
	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

func main() {
	layer := flag.String("layer", "cuda", "cuda (the package) or driver (the generated layer's *Ctx calls)")
	flag.Parse()
	n, runs := peerbench.Args("cudagen [-layer cuda|driver] [N [RUNS]]", flag.Args())
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
		peerbench.Bench("Record", n, runs, drain, func() error { return s.Record(a) })
		peerbench.Bench("Query", n, runs, drain, func() error { _, err := a.Query(); return err })
		peerbench.Bench("RecordQuery", n, runs, drain, func() error {
			if err := s.Record(a); err != nil {
				return err
			}
			_, err := a.Query()
			return err
		})
		peerbench.Bench("Elapsed", n, runs, drain, func() error { _, err := tb.Sub(ta); return err })
		peerbench.Bench("SyncDone", n, runs, drain, func() error { return a.Sync() })
		peerbench.Bench("CreateDestroy", n, runs, drain, func() error {
			e, err := dev.NewEvent(cuda.EventOptions{})
			if err != nil {
				return err
			}
			return e.Close()
		})
		peerbench.Bench("RecordSync", n, runs, drain, func() error {
			if err := s.Record(a); err != nil {
				return err
			}
			return a.Sync()
		})
		peerbench.Bench("RecordWait", n, runs, drain, func() error {
			if err := s.Record(a); err != nil {
				return err
			}
			return a.Wait(bg)
		})
	case "driver":
		ctx, sh, ah, tah, tbh := dev.Context(), s.Handle(), a.Handle(), ta.Handle(), tb.Handle()
		peerbench.Bench("Record", n, runs, drain, func() error { return driver.EventRecordCtx(ctx, ah, sh) })
		peerbench.Bench("Query", n, runs, drain, func() error { return driver.EventQueryCtx(ctx, ah) })
		peerbench.Bench("RecordQuery", n, runs, drain, func() error {
			if err := driver.EventRecordCtx(ctx, ah, sh); err != nil {
				return err
			}
			if err := driver.EventQueryCtx(ctx, ah); err != driver.ErrorNotReady {
				return err
			}
			return nil
		})
		peerbench.Bench("Elapsed", n, runs, drain, func() error { _, err := driver.EventElapsedTimeCtx(ctx, tah, tbh); return err })
		peerbench.Bench("SyncDone", n, runs, drain, func() error { return driver.EventSynchronizeCtx(ctx, ah) })
		peerbench.Bench("CreateDestroy", n, runs, drain, func() error {
			e, err := driver.EventCreateCtx(ctx, driver.EventDisableTiming)
			if err != nil {
				return err
			}
			return driver.EventDestroyCtx(ctx, e)
		})
		peerbench.Bench("RecordSync", n, runs, drain, func() error {
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

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudagen:", err)
		os.Exit(1)
	}
}
