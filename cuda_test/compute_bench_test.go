//go:build cgo

package gputest

import (
	"runtime"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// BenchmarkComputeSideBySide compares, in one process over interleaved
// blocks, launches of an empty kernel of 4 64-bit arguments: from C through
// cuLaunchKernel's entry point (the floor), driver.LaunchArgs,
// driver.LaunchArgsOfCtx (the context made current in the call, as the
// package does), the package's Stream.Launch, a PreparedLaunch with one argument Set before
// each launch, and a graph of 100 of those launches replayed (per kernel).
// It reports the medians per launch, Launch's excess over LaunchArgs, the
// prepared launch's over C, and the graph's cost per kernel over C's per
// launch. Launches are timed without the stream synchronization that
// follows each block.
func BenchmarkComputeSideBySide(b *testing.B) {
	dev := gpu(b)
	m := must[*cuda.Module](b)(dev.LoadModule([]byte(emptyPTX())))
	defer m.Close()
	k := must[*cuda.Kernel](b)(m.Kernel("cudagen_empty4"))
	s := must[*cuda.Stream](b)(dev.NewStream())
	defer s.Close()
	entry := must[uintptr](b)(driver.Lookup("cuLaunchKernel", 4000))
	runtime.LockOSThread() // the C loop and the Go loops on one thread, the context current
	defer runtime.UnlockOSThread()
	ctx := dev.Context()
	ok(b, driver.CtxSetCurrent(ctx))
	const block, rounds, graphKernels = 400, 25, 100
	one := driver.Dim3{X: 1, Y: 1, Z: 1}
	var v [4]uint64
	l := must[*cuda.PreparedLaunch](b)(k.Prepare(cuda.LaunchConfig{}, driver.Arg(v[0]), driver.Arg(v[1]), driver.Arg(v[2]), driver.Arg(v[3])))
	g := must[*cuda.Graph](b)(s.Capture(func(s *cuda.Stream) error {
		for range graphKernels {
			if err := s.Launch(k, cuda.LaunchConfig{}, driver.Arg(v[0]), driver.Arg(v[1]), driver.Arg(v[2]), driver.Arg(v[3])); err != nil {
				return err
			}
		}
		return nil
	}))
	defer g.Close()
	x := must[*cuda.GraphExec](b)(g.Instantiate())
	defer x.Close()
	loops := map[string]func(){
		"LaunchArgs": func() {
			for i := 0; i < block; i++ {
				_ = driver.LaunchArgs(k.Handle(), one, one, 0, s.Handle(), v[0], v[1], v[2], v[3])
			}
		},
		"LaunchArgsCtx": func() {
			for i := 0; i < block; i++ {
				_ = driver.LaunchArgsOfCtx(ctx, k.Handle(), one, one, 0, s.Handle(), driver.Arg(v[0]), driver.Arg(v[1]), driver.Arg(v[2]), driver.Arg(v[3]))
			}
		},
		"Launch": func() {
			for i := 0; i < block; i++ {
				_ = s.Launch(k, cuda.LaunchConfig{}, driver.Arg(v[0]), driver.Arg(v[1]), driver.Arg(v[2]), driver.Arg(v[3]))
			}
		},
		"Prepared": func() {
			for i := 0; i < block; i++ {
				_ = l.Set(0, driver.Arg(uint64(i)))
				_ = s.LaunchPrepared(l)
			}
		},
		"Graph": func() {
			for i := 0; i < block/graphKernels; i++ {
				_ = s.LaunchGraph(x)
			}
		},
	}
	order := []string{"LaunchArgs", "LaunchArgsCtx", "Launch", "Prepared", "Graph"}
	var cNs []float64
	ns := map[string][]float64{}
	allocs := map[string]float64{}
	for b.Loop() {
		cNs = cNs[:0]
		for _, name := range order {
			ns[name] = ns[name][:0]
		}
		for r := 0; r < rounds; r++ {
			c := launchLoopC(entry, uintptr(k.Handle()), uintptr(s.Handle()), 4, block)
			if c < 0 {
				b.Fatalf("C launch: CUresult %d", -c)
			}
			cNs = append(cNs, float64(c)/block)
			ok(b, s.Sync())
			for _, name := range order {
				t0 := time.Now()
				loops[name]()
				ns[name] = append(ns[name], float64(time.Since(t0).Nanoseconds())/block)
				ok(b, s.Sync())
			}
		}
		for _, name := range order {
			allocs[name] = testing.AllocsPerRun(1, loops[name]) / block
		}
		ok(b, s.Sync())
	}
	diff := func(a, c []float64) float64 {
		d := make([]float64, len(a))
		for i := range a {
			d[i] = a[i] - c[i]
		}
		return median(d)
	}
	c := median(cNs)
	b.ReportMetric(c, "C-ns/launch")
	for _, name := range order {
		b.ReportMetric(median(ns[name]), name+"-ns/launch")
		b.ReportMetric(allocs[name], name+"-allocs/launch")
	}
	b.ReportMetric(diff(ns["Launch"], ns["LaunchArgs"]), "Launch-over-LaunchArgs-ns")
	b.ReportMetric(diff(ns["LaunchArgsCtx"], ns["LaunchArgs"]), "Ctx-over-LaunchArgs-ns")
	b.ReportMetric(diff(ns["Launch"], ns["LaunchArgsCtx"]), "Launch-over-LaunchArgsCtx-ns")
	b.ReportMetric(diff(ns["Prepared"], cNs), "Prepared-over-C-ns")
	b.ReportMetric(median(ns["Graph"])/c, "Graph-per-kernel/C-launch")
	b.Logf("%d rounds of %d launches (the graph: %d kernels per launch): C %.0f ns, LaunchArgs %.0f, LaunchArgsOfCtx %.0f (+%.0f), Launch %.0f (+%.0f over LaunchArgs), Prepared %.0f (+%.0f over C), graph %.0f per kernel (%.2f of C's); allocs per launch %v",
		rounds, block, graphKernels, c, median(ns["LaunchArgs"]), median(ns["LaunchArgsCtx"]), diff(ns["LaunchArgsCtx"], ns["LaunchArgs"]), median(ns["Launch"]), diff(ns["Launch"], ns["LaunchArgs"]),
		median(ns["Prepared"]), diff(ns["Prepared"], cNs), median(ns["Graph"]), median(ns["Graph"])/c, allocs)
}
