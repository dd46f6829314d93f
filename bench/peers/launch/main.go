// Command launch compares a kernel launch through the Go bindings in one
// process: an empty kernel of 4 and of 16 64-bit arguments (empty.ptx)
// launched from C through cuLaunchKernel's entry point (the floor), by
// cudagen's typed LaunchArgs (on a stream of its own, and on the cuda
// package's stream and kernel) and raw LaunchKernel, by the cuda package's
// Stream.Launch (arguments checked) and LaunchPrepared (and paired, round
// by round, over LaunchArgs on the same stream and over LaunchKernel), by gorgonia.org/cu
// v0.9.6's Function.Launch and by github.com/gocnn/gocu v0.7.5's
// Function.Launch; beside them two cgo calls of an empty C function (the
// crossing every Go launch pays, plain and with noescape and nocallback, as
// LaunchArgs' is). Each round runs a block of B calls of each, the order
// rotated every round, the stream drained after each block, so that all
// meet the same CPU clock (which moves 2× from moment to moment on the GPU
// machine); it prints per variant the median ns per call and the median of
// the per-round differences to C, with p25..p75, and the Go heap
// allocations per launch (runtime.MemStats around blocks).
// The peers' paths are their direct ones: the thread locked, the primary
// context current.
// Its own module (the main module never builds it); bench/peers/build.sh
// builds it against the cached Debian header and a link stub, and the GPU
// machine's driver runs it (bench/gpu-launch.sh).
//
//	launch [ROUNDS [B]]
package main

/*
#include <stdint.h>
// launch_loop launches f n times with nargs 8-byte arguments through the
// entry point fn, as a C program would: kernelParams built once.
static int launch_loop(uintptr_t fn, uintptr_t f, uintptr_t stream, int nargs, long n) {
	unsigned long long vals[16];
	void *params[16];
	for (int i = 0; i < 16; i++) {
		vals[i] = (unsigned long long)i;
		params[i] = &vals[i];
	}
	(void)nargs;
	int r = 0;
	for (long i = 0; i < n; i++) {
		r |= ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))fn)(
			(void *)f, 1, 1, 1, 1, 1, 1, 0, (void *)stream, params, 0);
	}
	return r;
}
static void noop(void) {}
static void noop_flagged(const void *p) { (void)p; }
#cgo noescape noop_flagged
#cgo nocallback noop_flagged
*/
import "C"

import (
	_ "embed"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/gocnn/gocu"
	cu "gorgonia.org/cu"
)

//go:embed empty.ptx
var ptx string

// goal is the most LaunchArgs may add to C's launch, in ns.
const goal = 60

func main() {
	rounds, b := 101, 400
	var err1, err2 error
	if len(os.Args) > 1 {
		rounds, err1 = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		b, err2 = strconv.Atoi(os.Args[2])
	}
	if err1 != nil || err2 != nil || len(os.Args) > 3 || rounds < 1 || b < 1 {
		fmt.Fprintln(os.Stderr, "usage: launch [ROUNDS [B]]")
		os.Exit(2)
	}
	runtime.LockOSThread() // gorgonia's and gocu's direct paths need it; the C loop runs on this thread too

	// gorgonia makes the primary context current; the others use it.
	gdev, err := cu.GetDevice(0)
	check("gorgonia: device", err)
	gctx, err := gdev.RetainPrimaryCtx()
	check("gorgonia: primary context", err)
	check("gorgonia: set current", cu.SetCurrentContext(gctx))
	gmod, err := cu.LoadData(ptx)
	check("gorgonia: load", err)
	gs, err := cu.MakeStream(cu.NonBlocking)
	check("gorgonia: stream", err)

	omod, err := gocu.ModuleLoadData(append([]byte(ptx), 0))
	check("gocu: load", err)
	ostr, err := gocu.StreamCreate(gocu.CuStreamNonBlocking)
	check("gocu: stream", err)

	img := append([]byte(ptx), 0)
	mod, err := driver.ModuleLoadData(img)
	check("cudagen: load", err)
	s, err := driver.StreamCreate(driver.StreamNonBlocking)
	check("cudagen: stream", err)
	entry, err := driver.Lookup("cuLaunchKernel", 4000)
	check("cudagen: cuLaunchKernel's entry point", err)

	// The cuda package: its Device of the same primary context.
	cdev, err := cuda.GetDevice(0)
	check("cuda: device", err)
	cmod, err := cdev.LoadModule(img)
	check("cuda: load", err)
	cs, err := cdev.NewStream()
	check("cuda: stream", err)

	drain := func() {
		check("drain", driver.StreamSynchronize(s))
		check("drain", cs.Sync())
		check("drain", gs.Synchronize())
		check("drain", ostr.Synchronize())
	}

	var v [16]uint64
	var vp [16]unsafe.Pointer
	for i := range v {
		v[i] = uint64(i)
		vp[i] = unsafe.Pointer(&v[i])
	}
	one := driver.Dim3{X: 1, Y: 1, Z: 1}
	var probe byte

	fmt.Printf("kernel launch in one process (empty kernel, 1×1 grid and block, 64-bit arguments): %d rounds of %d calls per block, the order rotated every round; GOMAXPROCS %d\n\n",
		rounds, b, runtime.GOMAXPROCS(0))
	fmt.Println("| variant | 4 args ns/call | − C: median (p25..p75) | 16 args ns/call | − C: median (p25..p75) | Go allocs/launch (4, 16) |")
	fmt.Println("|---|---|---|---|---|---|")

	type variant struct {
		name   string
		launch bool // a launch (drain after, allocations counted); else a crossing
		block  func() error
	}
	results := map[string][2][4]float64{} // name → per arg count: median, diff median, p25, p75
	allocs := map[string][2]float64{}
	paired := map[string][2][3]float64{} // per arg count: median, p25, p75
	var pairNames []string
	var names []string
	for k, nargs := range []int{4, 16} {
		name := fmt.Sprintf("cudagen_empty%d", nargs)
		f, err := driver.ModuleGetFunction(mod, name)
		check("cudagen: function", err)
		gf, err := gmod.Function(name)
		check("gorgonia: function", err)
		of, err := omod.GetFunction(name)
		check("gocu: function", err)
		params := vp[:nargs]
		ck, err := cmod.Kernel(name)
		check("cuda: kernel", err)
		cargs := make([]driver.KernelArg, nargs)
		for i := range cargs {
			cargs[i] = driver.Arg(v[i])
		}
		prep, err := ck.Prepare(cuda.LaunchConfig{}, cargs...)
		check("cuda: prepare", err)
		checked := func() error {
			if nargs == 4 {
				for range b {
					if err := cs.Launch(ck, cuda.LaunchConfig{}, driver.Arg(v[0]), driver.Arg(v[1]), driver.Arg(v[2]), driver.Arg(v[3])); err != nil {
						return err
					}
				}
				return nil
			}
			for range b {
				if err := cs.Launch(ck, cuda.LaunchConfig{}, driver.Arg(v[0]), driver.Arg(v[1]), driver.Arg(v[2]), driver.Arg(v[3]), driver.Arg(v[4]), driver.Arg(v[5]), driver.Arg(v[6]), driver.Arg(v[7]),
					driver.Arg(v[8]), driver.Arg(v[9]), driver.Arg(v[10]), driver.Arg(v[11]), driver.Arg(v[12]), driver.Arg(v[13]), driver.Arg(v[14]), driver.Arg(v[15])); err != nil {
					return err
				}
			}
			return nil
		}
		// typed launches through LaunchArgs on the stream st of the
		// function fn (the driver's stream and function, or the cuda
		// package's: Stream.Launch's excess is over the latter).
		typed := func(fn driver.Function, st driver.Stream) func() error {
			return func() error {
				if nargs == 4 {
					for range b {
						if err := driver.LaunchArgs(fn, one, one, 0, st, v[0], v[1], v[2], v[3]); err != nil {
							return err
						}
					}
					return nil
				}
				for range b {
					if err := driver.LaunchArgs(fn, one, one, 0, st, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]); err != nil {
						return err
					}
				}
				return nil
			}
		}
		vs := []variant{
			{"C (cuLaunchKernel's entry point, kernelParams built once)", true, func() error {
				if r := C.launch_loop(C.uintptr_t(entry), C.uintptr_t(f), C.uintptr_t(s), C.int(nargs), C.long(b)); r != 0 {
					return fmt.Errorf("CUresult %d", int(r))
				}
				return nil
			}},
			{"cudagen LaunchArgs (typed)", true, typed(f, s)},
			{"cudagen LaunchArgs on the cuda package's stream and kernel", true, typed(ck.Handle(), cs.Handle())},
			{"cudagen LaunchKernel (raw kernelParams)", true, func() error {
				for range b {
					if err := driver.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, nil); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cudagen cuda Stream.Launch (arguments checked)", true, checked},
			{"cudagen cuda LaunchPrepared", true, func() error {
				for range b {
					if err := cs.LaunchPrepared(prep); err != nil {
						return err
					}
				}
				return nil
			}},
			{"gorgonia.org/cu Function.Launch", true, func() error {
				for range b {
					if err := gf.Launch(1, 1, 1, 1, 1, 1, 0, gs, params); err != nil {
						return err
					}
				}
				return nil
			}},
			{"gocnn/gocu Function.Launch", true, func() error {
				for range b {
					if err := of.Launch(1, 1, 1, 1, 1, 1, 0, *ostr, params, nil); err != nil {
						return err
					}
				}
				return nil
			}},
			{"cgo call of an empty C function (plain)", false, func() error {
				for range b {
					C.noop()
				}
				return nil
			}},
			{"cgo call of an empty C function (noescape, nocallback, a pointer)", false, func() error {
				for range b {
					C.noop_flagged(unsafe.Pointer(&probe))
				}
				return nil
			}},
		}
		if k == 0 {
			for _, x := range vs {
				names = append(names, x.name)
			}
		}
		// Warm up: each variant once, so that first-use costs (the entry
		// points' resolution, the module's first launch) stay out.
		for _, x := range vs {
			check(x.name, x.block())
			drain()
		}
		ns := make([][]float64, len(vs))
		for r := range rounds {
			for i := range vs {
				j := (i + r) % len(vs)
				t0 := time.Now()
				err := vs[j].block()
				ns[j] = append(ns[j], float64(time.Since(t0).Nanoseconds())/float64(b))
				check(vs[j].name, err)
				if vs[j].launch {
					drain()
				}
			}
		}
		// The cuda package's launches over the calls they make, paired
		// round by round: Stream.Launch over LaunchArgs on the same stream
		// and kernel, LaunchPrepared over the raw LaunchKernel, and
		// Stream.Launch (typed arguments) over the raw LaunchKernel.
		idx := func(name string) int {
			return slices.IndexFunc(vs, func(x variant) bool { return x.name == name })
		}
		for _, p := range [][2]string{{"cudagen cuda Stream.Launch (arguments checked)", "cudagen LaunchArgs on the cuda package's stream and kernel"},
			{"cudagen cuda LaunchPrepared", "cudagen LaunchKernel (raw kernelParams)"},
			{"cudagen cuda Stream.Launch (arguments checked)", "cudagen LaunchKernel (raw kernelParams)"}} {
			a, c := idx(p[0]), idx(p[1])
			d := make([]float64, rounds)
			for r := range d {
				d[r] = ns[a][r] - ns[c][r]
			}
			pr := paired[p[0]+" − "+p[1]]
			pr[k] = [3]float64{q(d, 0.5), q(d, 0.25), q(d, 0.75)}
			paired[p[0]+" − "+p[1]] = pr
			if k == 0 {
				pairNames = append(pairNames, p[0]+" − "+p[1])
			}
		}
		for j, x := range vs {
			d := make([]float64, rounds)
			for r := range d {
				d[r] = ns[j][r] - ns[0][r]
			}
			res := results[x.name]
			res[k] = [4]float64{q(ns[j], 0.5), q(d, 0.5), q(d, 0.25), q(d, 0.75)}
			results[x.name] = res
			if x.launch {
				a := allocs[x.name]
				a[k] = allocsPerCall(x.name, x.block, drain, b)
				allocs[x.name] = a
			}
		}
	}
	for i, name := range names {
		r := results[name]
		al := "–"
		if a, ok := allocs[name]; ok {
			al = fmt.Sprintf("%g, %g", a[0], a[1])
		}
		if i == 0 {
			fmt.Printf("| %s | %.1f | – | %.1f | – | %s |\n", name, r[0][0], r[1][0], al)
			continue
		}
		fmt.Printf("| %s | %.1f | %+.1f (%+.1f..%+.1f) | %.1f | %+.1f (%+.1f..%+.1f) | %s |\n", name,
			r[0][0], r[0][1], r[0][2], r[0][3], r[1][0], r[1][1], r[1][2], r[1][3], al)
	}
	fmt.Println("\n| paired, per round | 4 args: median (p25..p75) | 16 args |\n|---|---|---|")
	for _, n := range pairNames {
		p := paired[n]
		fmt.Printf("| %s | %+.1f (%+.1f..%+.1f) | %+.1f (%+.1f..%+.1f) |\n", n, p[0][0], p[0][1], p[0][2], p[1][0], p[1][1], p[1][2])
	}
	t := results[names[1]]
	a := allocs[names[1]]
	verdict := func(d float64) string {
		if d <= goal {
			return "met"
		}
		return "not met"
	}
	fmt.Printf("\nLaunchArgs − C (goal ≤ %d ns, no allocation): 4 args %+.1f ns (%s), 16 args %+.1f ns (%s); allocations per launch %g, %g (%s)\n",
		goal, t[0][1], verdict(t[0][1]), t[1][1], verdict(t[1][1]), a[0], a[1], map[bool]string{true: "none", false: "ALLOCATES"}[a[0] == 0 && a[1] == 0])
}

// allocsPerCall is the Go heap allocations per call of block's b calls,
// over 3 blocks (the drain left out).
func allocsPerCall(name string, block func() error, drain func(), b int) float64 {
	var m0, m1 runtime.MemStats
	var n uint64
	for range 3 {
		runtime.ReadMemStats(&m0)
		err := block()
		runtime.ReadMemStats(&m1)
		check(name, err)
		drain()
		n += m1.Mallocs - m0.Mallocs
	}
	return float64(n) / float64(3*b)
}

// q is the p-quantile of v (the element at p of the sorted copy).
func q(v []float64, p float64) float64 {
	w := slices.Clone(v)
	slices.Sort(w)
	return w[int(p*float64(len(w)-1))]
}

func check(what string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "launch: %s: %v\n", what, err)
		os.Exit(1)
	}
}
