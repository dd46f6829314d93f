// Package peerbench is what the Go programs of cudagen's side-by-side run
// share (bench/peers: cudagen, gorgonia, gocu, inproc): the loop, its
// arguments and cbench's print format, with the CPU's effective clock.
//
// The clock is why: on the GPU machine it moves between about 1.4 and
// 2.9 GHz from one moment to the next (a dependent loop of known cycles,
// timed), and every per-call figure moves with it, C's included, so a
// median in ns of a few processes is as much a draw of the clock as a
// measure of the code (docs/performance.md). Each loop is timed between
// two measures of the clock, and its ns per call times their mean is its
// cycles per call, which compare across processes. bench/cbench (clock.h)
// and bench/pybench (through libclock.c) measure the clock with the same
// instructions.
package peerbench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/cudagen/cudagen/internal/cpuclock"
)

// GHz is the CPU's effective clock now (cpuclock.GHz: the loop cuda_test's
// benchmarks use too).
func GHz() float64 { return cpuclock.GHz() }

// Bench prints name's median ns per call over runs loops of n calls of
// body, drain called after each loop (bench/cbench's format), then the
// median cycles per call and the median clock, where GHz measures one. An
// error from body ends the program.
func Bench(name string, n, runs int, drain func(), body func() error) {
	ns, cyc, ghz := make([]float64, runs), make([]float64, runs), make([]float64, runs)
	for r := range ns {
		g0 := GHz()
		t0 := time.Now()
		for i := 0; i < n; i++ {
			if err := body(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				os.Exit(1)
			}
		}
		ns[r] = float64(time.Since(t0).Nanoseconds()) / float64(n)
		ghz[r] = (g0 + GHz()) / 2
		cyc[r] = ns[r] * ghz[r]
		drain()
	}
	fmt.Printf("%-14s %8.1f ns/op (median of %d loops of %d)", name, upper(ns), runs, n)
	if ghz[0] > 0 {
		fmt.Printf(" %8.1f cyc/op at %.2f GHz", upper(cyc), upper(ghz))
	}
	fmt.Println()
}

// upper is the median as bench/cbench and bench/pybench take it: the upper
// middle of the sorted figures, for an even count too.
func upper(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Median is the median of v (0 if empty); v is left as it was.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Args reads N and RUNS from the positional arguments [N [RUNS]] (default
// 200000 and 5); a bad one ends the program with usage.
func Args(usage string, args []string) (n, runs int) {
	n, runs = 200000, 5
	var err1, err2 error
	if len(args) > 0 {
		n, err1 = strconv.Atoi(args[0])
	}
	if len(args) > 1 {
		runs, err2 = strconv.Atoi(args[1])
	}
	if err1 != nil || err2 != nil || len(args) > 2 || n < 1 || runs < 1 || runs > 64 {
		fmt.Fprintln(os.Stderr, "usage:", usage)
		os.Exit(2)
	}
	return n, runs
}
