// Command inproc runs cudagen's cuda package, gorgonia.org/cu v0.9.6 and
// github.com/gocnn/gocu v0.7.5 in one process, in interleaved blocks, so
// that all meet the same CPU clock (which moves 2× from moment to moment on
// the GPU machine; docs/performance.md) and their differences are paired, as
// BenchmarkInProcess pairs the package with C. Each round runs a block of
// B calls through each binding, the order reversed every other round, the
// streams drained after each block; it prints per operation the medians
// (ns/op) and the medians of the per-round differences, cudagen minus each
// peer, with p25..p75. The peers' paths are their direct ones: the thread
// locked, the primary context current (gorgonia makes it current; gocu
// creates its objects in it).
// Its own module (the main module never builds it); bench/peers/build.sh
// builds it against the cached Debian header and a link stub, and the GPU
// machine's driver runs it.
//
//	inproc [ROUNDS [B]]
package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/gocnn/gocu"
	cu "gorgonia.org/cu"
)

func main() {
	rounds, b := 201, 400
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		b, _ = strconv.Atoi(os.Args[2])
	}
	if rounds < 1 || b < 1 {
		fmt.Fprintln(os.Stderr, "usage: inproc [ROUNDS [B]]")
		os.Exit(2)
	}
	runtime.LockOSThread() // gorgonia's direct path needs it; the cuda package does not care

	dev, err := cuda.GetDevice(0)
	check(err)
	s, err := dev.NewStream()
	check(err)
	e, err := dev.NewEvent(cuda.EventOptions{})
	check(err)
	ta, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	check(err)
	tb, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	check(err)
	check(s.Record(e))
	check(s.Record(ta))
	check(s.Record(tb))
	check(tb.Sync())

	gdev, err := cu.GetDevice(0)
	check(err)
	gctx, err := gdev.RetainPrimaryCtx()
	check(err)
	check(cu.SetCurrentContext(gctx))
	gs, err := cu.MakeStream(cu.NonBlocking)
	check(err)
	ga, err := cu.MakeEvent(cu.DisableTiming)
	check(err)
	gta, err := cu.MakeEvent(cu.DefaultEvent)
	check(err)
	gtb, err := cu.MakeEvent(cu.DefaultEvent)
	check(err)
	check(ga.Record(gs))
	check(gta.Record(gs))
	check(gtb.Record(gs))
	check(gtb.Synchronize())
	// gocu in the context gorgonia made current: the primary one.
	ostr, err := gocu.StreamCreate(gocu.CuStreamNonBlocking)
	check(err)
	oa, err := gocu.EventCreate(gocu.CuEventDisableTiming)
	check(err)
	ota, err := gocu.EventCreate(gocu.CuEventDefault)
	check(err)
	otb, err := gocu.EventCreate(gocu.CuEventDefault)
	check(err)
	check(oa.Record(ostr))
	check(ota.Record(ostr))
	check(otb.Record(ostr))
	check(otb.Synchronize())
	notReady := func(err error) error {
		if err == cu.NotReady || err == gocu.CudaErrorNotReady {
			return nil
		}
		return err
	}
	drain := func() {
		check(s.Sync())
		check(gs.Synchronize())
		check(ostr.Synchronize())
	}

	fmt.Printf("in one process: cudagen's cuda package, gorgonia.org/cu and gocnn/gocu (direct paths), %d rounds of %d calls per block, order reversed every other round\n", rounds, b)
	fmt.Println("| op | cudagen ns/op | gorgonia ns/op | gocu ns/op | cudagen − gorgonia: median (p25..p75) | cudagen − gocu: median (p25..p75) | cuda/driver plain ns/op | plain − gorgonia |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	// The generated layer's plain calls on the same handles (entry points
	// from cuGetProcAddress, no context check): where the package's cost
	// ends and the crossing's begins.
	he, hs := e.Handle(), s.Handle()
	dNotReady := func(err error) error {
		if err == driver.ErrorNotReady {
			return nil
		}
		return err
	}
	ops := []struct {
		name              string
		cg, gorg, gocu, d func() error
	}{
		{"record", func() error { return s.Record(e) }, func() error { return ga.Record(gs) }, func() error { return oa.Record(ostr) }, func() error { return driver.EventRecord(he, hs) }},
		{"query (done)", func() error { _, err := e.Query(); return err }, func() error { return ga.Query() }, func() error { return oa.Query() }, func() error { return driver.EventQuery(he) }},
		{"record + query", func() error {
			if err := s.Record(e); err != nil {
				return err
			}
			_, err := e.Query()
			return err
		}, func() error {
			if err := ga.Record(gs); err != nil {
				return err
			}
			return notReady(ga.Query())
		}, func() error {
			if err := oa.Record(ostr); err != nil {
				return err
			}
			return notReady(oa.Query())
		}, func() error {
			if err := driver.EventRecord(he, hs); err != nil {
				return err
			}
			return dNotReady(driver.EventQuery(he))
		}},
		{"elapsed", func() error { _, err := tb.Sub(ta); return err }, func() error { _, err := gta.Elapsed(gtb); return err }, func() error { _, err := ota.ElapsedTime(&otb); return err }, nil},
		{"sync on a done event", func() error { return e.Sync() }, func() error { return ga.Synchronize() }, func() error { return oa.Synchronize() }, func() error { return driver.EventSynchronize(he) }},
		{"create + close", func() error {
			x, err := dev.NewEvent(cuda.EventOptions{})
			if err != nil {
				return err
			}
			return x.Close()
		}, func() error {
			x, err := cu.MakeEvent(cu.DisableTiming)
			if err != nil {
				return err
			}
			return cu.DestroyEvent(&x)
		}, func() error {
			x, err := gocu.EventCreate(gocu.CuEventDisableTiming)
			if err != nil {
				return err
			}
			return x.Destroy()
		}, nil},
		{"record + sync", func() error {
			if err := s.Record(e); err != nil {
				return err
			}
			return e.Sync()
		}, func() error {
			if err := ga.Record(gs); err != nil {
				return err
			}
			return ga.Synchronize()
		}, func() error {
			if err := oa.Record(ostr); err != nil {
				return err
			}
			return oa.Synchronize()
		}, func() error {
			if err := driver.EventRecord(he, hs); err != nil {
				return err
			}
			return driver.EventSynchronize(he)
		}},
	}
	block := func(name string, f func() error) float64 {
		t0 := time.Now()
		for range b {
			if err := f(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				os.Exit(1)
			}
		}
		ns := float64(time.Since(t0).Nanoseconds()) / float64(b)
		drain()
		return ns
	}
	for _, op := range ops {
		cg := make([]float64, rounds)
		gg := make([]float64, rounds)
		og := make([]float64, rounds)
		dd := make([]float64, rounds)
		d := make([]float64, rounds)
		do := make([]float64, rounds)
		dg := make([]float64, rounds)
		fs := []struct {
			f   func() error
			out []float64
		}{{op.cg, cg}, {op.gorg, gg}, {op.gocu, og}, {op.d, dd}}
		for r := range rounds {
			for k := range fs {
				if r%2 == 1 {
					k = len(fs) - 1 - k
				}
				if fs[k].f != nil {
					fs[k].out[r] = block(op.name, fs[k].f)
				}
			}
			d[r] = cg[r] - gg[r]
			do[r] = cg[r] - og[r]
			dg[r] = dd[r] - gg[r]
		}
		plain, pd := "–", "–"
		if op.d != nil {
			plain = fmt.Sprintf("%.1f", q(dd, 0.5))
			pd = fmt.Sprintf("%+.1f (%+.1f..%+.1f)", q(dg, 0.5), q(dg, 0.25), q(dg, 0.75))
		}
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %+.1f (%+.1f..%+.1f) | %+.1f (%+.1f..%+.1f) | %s | %s |\n", op.name, q(cg, 0.5), q(gg, 0.5), q(og, 0.5),
			q(d, 0.5), q(d, 0.25), q(d, 0.75), q(do, 0.5), q(do, 0.25), q(do, 0.75), plain, pd)
	}
}

func q(v []float64, p float64) float64 {
	w := slices.Clone(v)
	slices.Sort(w)
	return w[int(p*float64(len(w)-1))]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "inproc:", err)
		os.Exit(1)
	}
}
