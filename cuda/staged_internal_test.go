package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
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
		// Another shape: each goroutine moves whole chunks of its own
		// through two staging buffers of its own, with no barrier
		// between chunks.
		for _, chunk := range []int{2 << 20, 4 << 20, 8 << 20} {
			for _, w := range []int{8, 16, 32} {
				d.p.freeAllStaging()
				var failed error
				in := gbps(func() { failed = errors.Join(failed, workerCopy(d.p, buf.ptr, src, w, chunk, true)) })
				out := gbps(func() { failed = errors.Join(failed, workerCopy(d.p, buf.ptr, dst, w, chunk, false)) })
				if failed != nil {
					b.Fatal(failed)
				}
				b.Logf("per goroutine: chunks of %d MiB, %2d goroutines: to the device %.1f GB/s, from it %.1f", chunk>>20, w, in, out)
			}
		}
		if !bytes.Equal(src, dst) {
			b.Fatal("the round trips changed the bytes")
		}
	}
}

// workerCopy copies data to (in) or from device memory at ptr on the
// legacy default stream with w goroutines, goroutine i moving chunks i,
// i+w, ... through two staging buffers of its own: a shape to compare with
// copyHtoD's and copyDtoH's.
func workerCopy(p *ctxState, ptr driver.DevicePtr, data []byte, w, chunk int, in bool) error {
	const op = "staged copy"
	chunks := (len(data) + chunk - 1) / chunk
	errs := make([]error, w)
	var wg sync.WaitGroup
	for g := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s [2]*staging
			defer func() {
				for _, st := range s {
					if st != nil {
						_ = driver.EventSynchronizeCtx(p.ctx, st.ev)
						st.pending = false
						p.unstage(st)
					}
				}
			}()
			k := 0
			move := func(c int) (*staging, []byte, error) {
				st := s[k%2]
				k++
				if st == nil {
					var err error
					if st, err = p.stage(op, chunk); err != nil {
						return nil, nil, err
					}
					s[(k-1)%2] = st
				} else if err := driver.EventSynchronizeCtx(p.ctx, st.ev); err != nil {
					return nil, nil, err
				}
				part := data[c*chunk : min(len(data), (c+1)*chunk)]
				off := driver.DevicePtr(c * chunk)
				var err error
				if in {
					copy(st.p.Bytes(len(part)), part)
					err = driver.MemcpyHtoDAsyncCtx(p.ctx, ptr+off, st.p, uint64(len(part)), 0)
				} else {
					err = driver.MemcpyDtoHAsyncCtx(p.ctx, st.p, ptr+off, uint64(len(part)), 0)
				}
				if err == nil {
					err = driver.EventRecordCtx(p.ctx, st.ev, 0)
				}
				return st, part, err
			}
			var prev *staging
			var prevPart []byte
			for c := g; c < chunks; c += w {
				st, part, err := move(c)
				if err != nil {
					errs[g] = err
					return
				}
				if !in && prev != nil { // copy the last chunk out while this one transfers
					if errs[g] = driver.EventSynchronizeCtx(p.ctx, prev.ev); errs[g] != nil {
						return
					}
					copy(prevPart, prev.p.Bytes(len(prevPart)))
				}
				prev, prevPart = st, part
			}
			if !in && prev != nil {
				if errs[g] = driver.EventSynchronizeCtx(p.ctx, prev.ev); errs[g] == nil {
					copy(prevPart, prev.p.Bytes(len(prevPart)))
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
