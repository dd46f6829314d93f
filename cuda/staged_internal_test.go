package cuda

import (
	"fmt"
	"runtime"
	"testing"
)

// parallelCopy copies every byte of any length, split among goroutines
// or not, and allocates nothing once its WaitGroup is pooled.
func TestParallelCopy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 4095, copyPart - 1, 2 * copyPart, 3*copyPart + 17, 9*copyPart + 4097} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*131 + i>>11)
		}
		dst := make([]byte, n+1)
		dst[n] = 0xA5
		parallelCopy(dst[:n], src)
		for i := range src {
			if dst[i] != src[i] {
				t.Fatalf("%d bytes: byte %d is %#x, want %#x", n, i, dst[i], src[i])
			}
		}
		if dst[n] != 0xA5 {
			t.Fatalf("%d bytes: the byte past the end was written", n)
		}
	}
	src, dst := make([]byte, 16*copyPart), make([]byte, 16*copyPart)
	parallelCopy(dst, src)
	if n := testing.AllocsPerRun(50, func() { parallelCopy(dst, src) }); n != 0 {
		t.Errorf("a parallel copy of %d bytes allocates %v times", len(src), n)
	}
}

// Over as many goroutines as GOMAXPROCS allows, at most maxCopiers, each
// taking at least copyPart bytes: the split is as documented.
func TestParallelCopySplit(t *testing.T) {
	for _, c := range []struct{ procs, n, want int }{
		{1, 64 * copyPart, 1}, {2, 64 * copyPart, 2}, {32, 64 * copyPart, maxCopiers}, {32, 3*copyPart + 1, 3}, {32, copyPart, 1},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if got := copiers(c.n, c.procs); got != c.want {
				t.Errorf("%d bytes with GOMAXPROCS %d: %d goroutines, want %d", c.n, c.procs, got, c.want)
			}
		})
	}
}
