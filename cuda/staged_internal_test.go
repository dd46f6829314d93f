package cuda

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
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
	g0 := runtime.NumGoroutine()
	parallelCopy(dst, src)
	// The helpers end once done: the count comes back (they may still be
	// returning when parallelCopy does).
	for i := 0; runtime.NumGoroutine() > g0; i++ {
		if i == 1000 {
			t.Fatalf("%d goroutines after a parallel copy, %d before", runtime.NumGoroutine(), g0)
		}
		time.Sleep(time.Millisecond)
	}
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

// BenchmarkStagedShapes compares, in one process, the shapes of the
// staged synchronous copies on a GPU: memory copies of 256 MiB between Go
// slices with 1 to 16 goroutines (the copy alone), then CopyFrom and
// CopyTo of 256 MiB from and to a Go slice with chunks of 2 to 32 MiB and
// 4 to 16 goroutines, and the driver's copies from page-locked memory
// beside them. It logs the medians of 5 rounds in GB/s; it asserts
// nothing and skips without a GPU.
//
//	examples.test -test.run '^$' -test.bench '^BenchmarkStagedShapes$' -test.benchtime 1x
func BenchmarkStagedShapes(b *testing.B) {
	d, err := GetDevice(0)
	if err != nil {
		b.Skipf("skipping: no GPU: %v", err)
	}
	defer d.Close()
	const n = 256 << 20
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	buf, err := Alloc[byte](d, n)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	gbps := func(f func()) float64 {
		var v []float64
		for range 5 {
			t0 := time.Now()
			f()
			v = append(v, n/float64(time.Since(t0).Nanoseconds()))
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	chunk0, copiers0 := stageChunk, maxCopiers
	defer func() { stageChunk, maxCopiers = chunk0, copiers0 }()
	for b.Loop() {
		for _, w := range []int{1, 2, 4, 8, 16} {
			maxCopiers = w
			b.Logf("memory copy, %2d goroutines: %.1f GB/s", w, gbps(func() { parallelCopy(dst, src) }))
		}
		pinned, err := driver.MemAllocHostCtx(d.p.ctx, n)
		if err != nil {
			b.Fatal(err)
		}
		pb := pinned.Bytes(n)
		copy(pb, src)
		htod := gbps(func() {
			_ = driver.MemcpyHtoDAsyncCtx(d.p.ctx, buf.ptr, pinned, n, 0)
			_ = driver.StreamSynchronizeCtx(d.p.ctx, 0)
		})
		dtoh := gbps(func() {
			_ = driver.MemcpyDtoHAsyncCtx(d.p.ctx, pinned, buf.ptr, n, 0)
			_ = driver.StreamSynchronizeCtx(d.p.ctx, 0)
		})
		b.Logf("driver from page-locked memory: to device %.1f GB/s, from device %.1f", htod, dtoh)
		for _, w := range []int{1, 4, 8, 16} {
			maxCopiers = w
			b.Logf("memory copy into page-locked memory, %2d goroutines: %.1f GB/s", w, gbps(func() { parallelCopy(pb, src) }))
		}
		_ = driver.MemFreeHostCtx(d.p.ctx, pinned)
		// The Go slice page-locked for the one copy (registered and
		// unregistered around it), and the registration alone.
		hp := driver.HostPtr(unsafe.Pointer(&src[0]))
		var regErr error
		reg := gbps(func() {
			if regErr = driver.MemHostRegisterCtx(d.p.ctx, hp, n, 0); regErr == nil {
				regErr = driver.MemHostUnregisterCtx(d.p.ctx, hp)
			}
		})
		regIn := gbps(func() {
			if regErr = driver.MemHostRegisterCtx(d.p.ctx, hp, n, 0); regErr == nil {
				_ = driver.MemcpyHtoDAsyncCtx(d.p.ctx, buf.ptr, hp, n, 0)
				_ = driver.StreamSynchronizeCtx(d.p.ctx, 0)
				regErr = driver.MemHostUnregisterCtx(d.p.ctx, hp)
			}
		})
		b.Logf("a Go slice registered and unregistered: %.1f GB/s (the pair alone), copied to the device in between %.1f GB/s (err %v)", reg, regIn, regErr)
		for _, chunk := range []int{2 << 20, 8 << 20, 32 << 20} {
			for _, w := range []int{4, 8, 16} {
				stageChunk, maxCopiers = chunk, w
				d.p.freeAllStaging()
				in := gbps(func() { _ = buf.CopyFrom(src) })
				out := gbps(func() { _ = buf.CopyTo(dst) })
				b.Logf("chunks of %2d MiB, %2d goroutines: CopyFrom %.1f GB/s, CopyTo %.1f", chunk>>20, w, in, out)
			}
		}
	}
}
