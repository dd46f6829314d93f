//go:build cgo

package cuda

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// BenchmarkHotParts takes a hot call apart on the real driver, in one
// process, in interleaved blocks: the generated layer's plain call, the
// hazard call the package makes, the package's method, and a cgo call to a
// function that does nothing (the crossing); and sync on a done event and
// record + sync against the plain calls. It prints each one's median
// ns per call and the paired differences to the plain call. Timings are
// reported, never asserted; it skips without a GPU.
//
//	examples.test -test.run '^$' -test.bench '^BenchmarkHotParts$' -test.benchtime 1x
func BenchmarkHotParts(b *testing.B) {
	d, err := GetDevice(0)
	if err != nil {
		b.Skipf("skipping: no GPU: %v", err)
	}
	defer d.Close()
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e, err := d.NewEvent(EventOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := s.Record(e); err != nil {
		b.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	lifetime.SetFn(lifetime.OpTest, lifetime.NoopFn())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(d.p.ctx); err != nil {
		b.Fatal(err)
	}
	h, sh := e.h, s.h
	bg := context.Background()
	type part struct {
		name string
		f    func() int32
	}
	parts := map[string][]part{
		"query": {
			{"plain (driver.EventQuery)", func() int32 {
				if driver.EventQuery(h) != nil {
					return 1
				}
				return 0
			}},
			{"cgo noop", func() int32 { return lifetime.Direct1(lifetime.OpTest, 0) }},
			{"no slot (lifetime.Direct1)", func() int32 { return lifetime.Direct1(lifetime.OpQuery, uintptr(h)) }},
			{"lifetime.Call1 (op an argument)", func() int32 { return lifetime.Call1(lifetime.OpQuery, lifetime.Addr(e.w), uintptr(h)) }},
			{"Event.Query", func() int32 {
				if ok, err := e.Query(); !ok || err != nil {
					return 1
				}
				return 0
			}},
			{"lifetime.Query + lifetime.Settle (Wait's)", func() int32 { return lifetime.Settle(lifetime.Query(lifetime.Addr(e.w), uintptr(h)), e.r, nil) }},
			{"lifetime.Query (op fixed in C)", func() int32 { return lifetime.Query(lifetime.Addr(e.w), uintptr(h)) }},
			{"Event.Query again", func() int32 {
				if ok, _ := e.Query(); !ok {
					return 1
				}
				return 0
			}},
		},
		"record": {
			{"plain (driver.EventRecord)", func() int32 {
				if driver.EventRecord(h, sh) != nil {
					return 1
				}
				return 0
			}},
			{"lifetime.RecordEvent (op fixed in C)", func() int32 {
				return lifetime.RecordEvent(lifetime.Addr(e.w), lifetime.Addr(s.w), uintptr(h), uintptr(sh))
			}},
			{"Event.Record", func() int32 {
				if e.Record(s) != nil {
					return 1
				}
				return 0
			}},
		},
	}
	parts["sync (done)"] = []part{
		{"plain (driver.EventSynchronize)", func() int32 {
			if driver.EventSynchronize(h) != nil {
				return 1
			}
			return 0
		}},
		{"Event.Sync", func() int32 {
			if e.Sync() != nil {
				return 1
			}
			return 0
		}},
	}
	parts["record + sync"] = []part{
		{"plain (driver record + sync)", func() int32 {
			if driver.EventRecord(h, sh) != nil || driver.EventSynchronize(h) != nil {
				return 1
			}
			return 0
		}},
		{"Event.Record + Sync", func() int32 {
			if e.Record(s) != nil || e.Sync() != nil {
				return 1
			}
			return 0
		}},
		{"Event.Record + Wait", func() int32 {
			if e.Record(s) != nil || e.Wait(bg) != nil {
				return 1
			}
			return 0
		}},
	}
	rounds, n := 201, 400
	out := os.Stdout
	for _, op := range []string{"query", "record", "sync (done)", "record + sync"} {
		ps := parts[op]
		ns := make([][]float64, len(ps))
		for r := range rounds {
			for k := range ps {
				i := (k + r) % len(ps)
				t0 := time.Now()
				for range n {
					if res := ps[i].f(); res != 0 {
						b.Fatalf("%s: %s: %d", op, ps[i].name, res)
					}
				}
				ns[i] = append(ns[i], float64(time.Since(t0).Nanoseconds())/float64(n))
				if op == "record" || op == "record + sync" {
					if err := s.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		fmt.Fprintf(out, "\n%s (%d rounds of %d calls)\n| part | ns/op median | minus the plain call: median (p25..p75) |\n|---|---|---|\n", op, rounds, n)
		for i, p := range ps {
			dd := make([]float64, rounds)
			for r := range dd {
				dd[r] = ns[i][r] - ns[0][r]
			}
			fmt.Fprintf(out, "| %s | %.1f | %+.1f (%+.1f..%+.1f) |\n", p.name, med(ns[i], 50), med(dd, 50), med(dd, 25), med(dd, 75))
		}
	}
}

func med(v []float64, p int) float64 {
	w := slices.Clone(v)
	slices.Sort(w)
	return w[(len(w)-1)*p/100]
}

func BenchmarkHotSplit(b *testing.B) {
	d, err := GetDevice(0)
	if err != nil {
		b.Skipf("skipping: no GPU: %v", err)
	}
	defer d.Close()
	e, err := d.NewEvent(EventOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.Run("lifetime.Query+Settle", func(b *testing.B) {
		for b.Loop() {
			lifetime.Settle(lifetime.Query(lifetime.Addr(e.w), uintptr(e.h)), e.r, nil)
		}
	})
	b.Run("Query", func(b *testing.B) {
		for b.Loop() {
			e.Query()
		}
	})
}
