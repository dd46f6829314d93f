// Package cpuclock measures the CPU's effective clock with a loop of known
// cycles, timed: the benchmarks of cuda_test and the side-by-side programs
// of bench/peers report cycles per call with it (bench/cbench/clock.h runs
// the same instructions in C).
package cpuclock

import "time"

// spinN is the calibration loop's length: about 1.4–3 ms.
const spinN = 4_000_000

// GHz is the CPU's effective clock now, in GHz: spinN iterations of one
// macro-fused decrement-and-branch, one per cycle, timed. 0 where there is
// no such loop for the architecture.
func GHz() float64 {
	if !haveSpin {
		return 0
	}
	t0 := time.Now()
	spin(spinN)
	return spinN / float64(time.Since(t0).Nanoseconds())
}
