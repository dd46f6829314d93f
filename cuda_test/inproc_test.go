//go:build cgo

package gputest

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// BenchmarkInProcess is the in-process, interleaved harness: in one process
// and one locked thread, short blocks of the same operation through
//
//   - C: a loop inside one cgo call calling the driver (as bench/cbench does),
//   - cgo: one cgo call per operation straight to the driver, no context check
//     (what gorgonia/cu's and gocu's direct paths pay),
//   - floor: one cgo call to an empty C function per operation,
//   - driver: the generated layer's *Ctx calls (context made current in the call),
//   - driver-noctx: the generated layer without the context check,
//   - cuda: the cuda package,
//
// alternating, the order rotated every round. For each operation it prints
// the median ns/op of each path and the median of the per-round paired
// differences to the C loop, with their spread; and whether the cuda
// package's overhead over C is within the floor plus the goal (15 ns, 25 ns
// for record and elapsed). It first runs long 200000-call loops one after
// another, as the old per-operation benchmarks did, to show what order and
// queue depth do. Run it on its own (a fresh process), once:
//
//	cuda_test.test -test.run '^$' -test.bench '^BenchmarkInProcess$' -test.benchtime 1x
//
// CUDAGEN_INPROC_ROUNDS (default 201) and CUDAGEN_INPROC_N (calls per
// block, default 400) size it; CUDAGEN_INPROC_OUT names a file that also
// gets the table. Timings are reported, never asserted.
func BenchmarkInProcess(b *testing.B) {
	env := newEnv(b, cuda.EventOptions{})
	dev, s, a := env.dev, env.s, env.a
	ta := must[*cuda.Event](b)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	tb := must[*cuda.Event](b)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	tr := must[*cuda.Event](b)(dev.NewEvent(cuda.EventOptions{Timing: true})) // recorded by the timing-event record variant
	defer ta.Close()
	defer tb.Close()
	defer tr.Close()
	ok(b, s.Record(ta))
	ok(b, s.Record(tb))
	ok(b, s.Record(tr))
	ok(b, s.Sync())

	// One thread for the whole run: the raw cgo and no-context variants
	// need the context current on it, as gorgonia/cu's direct path does.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx := dev.Context()
	ok(b, driver.CtxSetCurrent(ctx))
	fns := ipFns{
		record: resolve(b, "EventRecord"), query: resolve(b, "EventQuery"), sync: resolve(b, "EventSynchronize"),
		elapsed: resolve(b, "EventElapsedTime"), create: resolve(b, "EventCreate"), destroy: resolve(b, "EventDestroy"),
		set: resolve(b, "CtxSetCurrent"), get: resolve(b, "CtxGetCurrent"),
	}
	sh, ah, tah, tbh, trh := s.Handle(), a.Handle(), ta.Handle(), tb.Handle(), tr.Handle()
	ipSetup(fns, uintptr(ctx), uintptr(sh), uintptr(ah), uintptr(tah), uintptr(tbh))

	rounds, n := envInt("CUDAGEN_INPROC_ROUNDS", 201), envInt("CUDAGEN_INPROC_N", 400)
	var out strings.Builder
	w := io.MultiWriter(os.Stdout, &out)
	name, _ := dev.Name()
	v, _ := cuda.DriverVersion()
	fmt.Fprintf(w, "in-process harness: %s, driver CUDA %s, bindings %s, GOMAXPROCS %d, %d rounds of %d calls per block\n",
		name, driver.VersionString(v), driver.Toolkit, runtime.GOMAXPROCS(0), rounds, n)

	bg := context.Background()
	fail := func(what string, err error) {
		b.Helper()
		if err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	cerr := func(r int) error {
		if r != 0 {
			return driver.Result(r)
		}
		return nil
	}
	syncStream := func() { fail("stream sync", s.Sync()) }

	longLoops(b, w, s, a, tr, ctx, sh, ah, trh, syncStream)

	// The paths of each operation. Each runs n calls and returns the first error.
	cLoop := func(op int, ev driver.Event) pathFn {
		return func(n int) error { return cerr(ipLoop(op, uintptr(ev), n)) }
	}
	cgoOnce := func(op int, ev driver.Event) pathFn {
		return func(n int) error {
			for i := 0; i < n; i++ {
				if r := ipOnce(op, uintptr(ev)); r != 0 {
					return driver.Result(r)
				}
			}
			return nil
		}
	}
	floor := func(n int) error {
		for i := 0; i < n; i++ {
			cgoNoop()
		}
		return nil
	}
	notReadyOK := func(err error) error {
		if err == driver.ErrorNotReady {
			return nil
		}
		return err
	}
	recordPaths := func(op int, ev *cuda.Event) []path {
		h := ev.Handle()
		return []path{
			{"C loop", cLoop(op, h)},
			{"cgo per call", cgoOnce(op, h)},
			{"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventRecordCtx(ctx, h, sh); err != nil {
						return err
					}
				}
				return nil
			}},
			{"driver-noctx", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventRecord(h, sh); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if err := s.Record(ev); err != nil {
						return err
					}
				}
				return nil
			}},
		}
	}
	ops := []opSpec{
		{name: "record", goal: 25, after: syncStream, paths: recordPaths(ipRecord, a)},
		{name: "record (timing event)", goal: 25, after: syncStream, paths: recordPaths(ipRecord, tr)},
		{name: "query (done)", goal: 15, paths: []path{
			{"C loop", cLoop(ipQuery, ah)}, {"cgo per call", cgoOnce(ipQuery, ah)}, {"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventQueryCtx(ctx, ah); err != nil {
						return err
					}
				}
				return nil
			}},
			{"driver-noctx", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventQuery(ah); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if done, err := a.Query(); err != nil || !done {
						return fmt.Errorf("query: done %v, %v", done, err)
					}
				}
				return nil
			}},
		}},
		{name: "record + query", goal: 40, calls: 2, after: syncStream, paths: []path{
			{"C loop", cLoop(ipRecordQuery, ah)}, {"cgo per call", cgoOnce(ipRecordQuery, ah)}, {"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventRecordCtx(ctx, ah, sh); err != nil {
						return err
					}
					if err := notReadyOK(driver.EventQueryCtx(ctx, ah)); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if err := s.Record(a); err != nil {
						return err
					}
					if _, err := a.Query(); err != nil {
						return err
					}
				}
				return nil
			}},
		}},
		{name: "elapsed", goal: 25, paths: []path{
			{"C loop", cLoop(ipElapsed, 0)}, {"cgo per call", cgoOnce(ipElapsed, 0)}, {"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					if _, err := driver.EventElapsedTimeCtx(ctx, tah, tbh); err != nil {
						return err
					}
				}
				return nil
			}},
			{"driver-noctx", func(n int) error {
				for i := 0; i < n; i++ {
					if _, err := driver.EventElapsedTime(tah, tbh); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if _, err := tb.Sub(ta); err != nil {
						return err
					}
				}
				return nil
			}},
		}},
		{name: "sync on a done event", goal: 15, paths: []path{
			{"C loop", cLoop(ipSync, ah)}, {"cgo per call", cgoOnce(ipSync, ah)}, {"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventSynchronizeCtx(ctx, ah); err != nil {
						return err
					}
				}
				return nil
			}},
			{"driver-noctx", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventSynchronize(ah); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if err := a.Sync(); err != nil {
						return err
					}
				}
				return nil
			}},
		}},
		{name: "create + close", goal: 25, warm: 256, paths: []path{
			{"C loop", cLoop(ipCreateDestroy, 0)}, {"cgo per call", cgoOnce(ipCreateDestroy, 0)}, {"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					e, err := driver.EventCreateCtx(ctx, driver.EventDisableTiming)
					if err != nil {
						return err
					}
					if err := driver.EventDestroyCtx(ctx, e); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					e, err := dev.NewEvent(cuda.EventOptions{})
					if err != nil {
						return err
					}
					if err := e.Close(); err != nil {
						return err
					}
				}
				return nil
			}},
		}},
		{name: "record + sync", goal: 40, calls: 2, paths: []path{
			{"C loop", cLoop(ipRecordSync, ah)}, {"cgo per call", cgoOnce(ipRecordSync, ah)}, {"cgo floor", floor},
			{"driver", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventRecordCtx(ctx, ah, sh); err != nil {
						return err
					}
					if err := driver.EventSynchronizeCtx(ctx, ah); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if err := s.Record(a); err != nil {
						return err
					}
					if err := a.Sync(); err != nil {
						return err
					}
				}
				return nil
			}},
		}},
		{name: "record + Wait(ctx) (C: record + sync)", goal: 40, calls: 2, paths: []path{
			{"C loop", cLoop(ipRecordSync, ah)}, {"cgo per call", cgoOnce(ipRecordSync, ah)}, {"cgo floor", floor},
			{"driver (record + PollEventCtx)", func(n int) error {
				for i := 0; i < n; i++ {
					if err := driver.EventRecordCtx(ctx, ah, sh); err != nil {
						return err
					}
					for {
						_, err := driver.PollEventCtx(ctx, ah, 50*time.Microsecond, time.Millisecond, 2*time.Microsecond, 100*time.Microsecond)
						if err == nil {
							break
						}
						if err != driver.ErrorNotReady {
							return err
						}
					}
				}
				return nil
			}},
			{"cuda", func(n int) error {
				for i := 0; i < n; i++ {
					if err := s.Record(a); err != nil {
						return err
					}
					if err := a.Wait(bg); err != nil {
						return err
					}
				}
				return nil
			}},
		}},
		{name: "context check (cuCtxGetCurrent)", goal: 0, paths: []path{
			{"C loop", cLoop(ipGetCurrent, 0)}, {"cgo per call", cgoOnce(ipGetCurrent, 0)}, {"cgo floor", floor},
		}},
	}
	for _, op := range ops {
		op.measure(b, w, rounds, n)
	}
	if f := os.Getenv("CUDAGEN_INPROC_OUT"); f != "" {
		ok(b, os.WriteFile(f, []byte(out.String()), 0o644))
	}
}

type pathFn func(n int) error

type path struct {
	name string
	run  pathFn
}

type opSpec struct {
	name  string
	goal  float64 // ns the cuda package may add over C beyond the cgo floor; 0: none
	calls int     // driver calls per operation: the floor counts once per call
	after func()  // untimed, after each block (drains the stream of records)
	paths []path  // paths[0] is the C loop, paths[2] the cgo floor
	// warm is how many untimed blocks each path runs first (1 if 0).
	// Create + close needs many: the cuda package's events are Go objects,
	// and until the heap has grown to its steady size every new page costs
	// a page fault, several microseconds on a virtual machine, which a
	// steady-state loop no longer pays (docs/performance.md).
	warm int
}

// measure runs rounds of one block per path, the order rotated each round,
// and prints each path's median and its paired difference to the C loop.
func (op opSpec) measure(b *testing.B, w io.Writer, rounds, n int) {
	b.Helper()
	np := len(op.paths)
	ns := make([][]float64, np)
	for i := range ns {
		ns[i] = make([]float64, rounds)
	}
	ghz0 := clockGHz()
	// The warm-up blocks, untimed.
	for range max(op.warm, 1) {
		for _, p := range op.paths {
			if err := p.run(n); err != nil {
				b.Fatalf("%s, %s: %v", op.name, p.name, err)
			}
			if op.after != nil {
				op.after()
			}
		}
	}
	for r := 0; r < rounds; r++ {
		for k := 0; k < np; k++ {
			i := (k + r) % np
			if r%2 == 1 {
				i = np - 1 - i
			}
			p := op.paths[i]
			t0 := time.Now()
			err := p.run(n)
			d := time.Since(t0)
			if err != nil {
				b.Fatalf("%s, %s: %v", op.name, p.name, err)
			}
			ns[i][r] = float64(d.Nanoseconds()) / float64(n)
			if op.after != nil {
				op.after()
			}
		}
	}
	// The CPU's clock before and after: every figure here moves with it
	// (docs/performance.md).
	ghz1 := clockGHz()
	fmt.Fprintf(w, "\n%s (clock %.2f GHz before, %.2f after)\n| path | ns/op median | minus C loop: median | p25..p75 | min..max |\n|---|---|---|---|---|\n", op.name, ghz0, ghz1)
	c := ns[0]
	for i, p := range op.paths {
		d := diff(ns[i], c)
		if i == 0 {
			fmt.Fprintf(w, "| %s | %.1f | | | |\n", p.name, pct(c, 50))
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f | %+.1f | %+.1f..%+.1f | %+.1f..%+.1f |\n", p.name, pct(ns[i], 50),
			pct(d, 50), pct(d, 25), pct(d, 75), pct(d, 0), pct(d, 100))
	}
	cu := slices.IndexFunc(op.paths, func(p path) bool { return p.name == "cuda" })
	if dr := slices.IndexFunc(op.paths, func(p path) bool { return strings.HasPrefix(p.name, "driver") }); cu >= 0 && dr >= 0 {
		d := diff(ns[cu], ns[dr])
		fmt.Fprintf(w, "%s: cuda minus driver: median %+.1f ns (p25..p75 %+.1f..%+.1f)\n", op.name, pct(d, 50), pct(d, 25), pct(d, 75))
	}
	if cg := slices.IndexFunc(op.paths, func(p path) bool { return p.name == "cgo per call" }); cu >= 0 && cg >= 0 {
		// What a direct cgo binding pays (gorgonia/cu's, gocu's): one
		// crossing per driver call; the C side makes a two-call operation
		// in one, so each further call adds a floor.
		d := make([]float64, rounds)
		for r := range d {
			d[r] = ns[cu][r] - ns[cg][r] - float64(max(op.calls, 1)-1)*ns[2][r]
		}
		fmt.Fprintf(w, "%s: cuda minus direct cgo: median %+.1f ns (p25..p75 %+.1f..%+.1f)", op.name, pct(d, 50), pct(d, 25), pct(d, 75))
		if op.goal > 0 {
			// The bar below with the crossing as a binding pays it around
			// this driver call, not the empty crossing: at a low clock the
			// driver call's evictions make the former dearer than the
			// latter by more than the goal (docs/performance.md).
			fmt.Fprintf(w, "; goal <= %.0f over the crossing: %s", op.goal, verdict(pct(d, 50), op.goal))
		}
		fmt.Fprintln(w)
	}
	if op.goal > 0 {
		over := make([]float64, rounds)
		for r := range over {
			over[r] = ns[cu][r] - c[r] - float64(max(op.calls, 1))*ns[2][r]
		}
		m := pct(over, 50)
		fmt.Fprintf(w, "%s: cuda minus C loop minus %d cgo floor(s): median %+.1f ns (p25..p75 %+.1f..%+.1f; %+.0f cycles at %.2f GHz); goal <= %.0f: %s\n",
			op.name, max(op.calls, 1), m, pct(over, 25), pct(over, 75), m*(ghz0+ghz1)/2, (ghz0+ghz1)/2, op.goal, verdict(m, op.goal))
	}
}

// verdict says whether a median overhead m meets its goal.
func verdict(m, goal float64) string {
	if m > goal {
		return "MISSES"
	}
	return "meets"
}

// longLoops runs 200000-call loops one after another, as the per-operation
// benchmarks do: the cuda package, the generated layer and the C loop, three
// times over, recording without and with timing, the stream drained after
// each loop.
func longLoops(b *testing.B, w io.Writer, s *cuda.Stream, a, tr *cuda.Event, ctx driver.Context, sh driver.Stream, ah, trh driver.Event, drain func()) {
	const n = 200000
	fmt.Fprintf(w, "\nlong loops of %d records, one after another (ns/op)\n| event | round | cuda | driver | C loop |\n|---|---|---|---|---|\n", n)
	for _, ev := range []struct {
		name string
		e    *cuda.Event
		h    driver.Event
	}{{"no timing", a, ah}, {"timing", tr, trh}} {
		for r := 1; r <= 3; r++ {
			var t [3]float64
			t0 := time.Now()
			for i := 0; i < n; i++ {
				if err := s.Record(ev.e); err != nil {
					b.Fatal(err)
				}
			}
			t[0] = float64(time.Since(t0).Nanoseconds()) / n
			drain()
			t0 = time.Now()
			for i := 0; i < n; i++ {
				if err := driver.EventRecordCtx(ctx, ev.h, sh); err != nil {
					b.Fatal(err)
				}
			}
			t[1] = float64(time.Since(t0).Nanoseconds()) / n
			drain()
			t0 = time.Now()
			if r := ipLoop(ipRecord, uintptr(ev.h), n); r != 0 {
				b.Fatal(driver.Result(r))
			}
			t[2] = float64(time.Since(t0).Nanoseconds()) / n
			drain()
			fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f |\n", ev.name, r, t[0], t[1], t[2])
		}
	}
}

func diff(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// pct is the p-th percentile (nearest rank) of v.
func pct(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i]
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
