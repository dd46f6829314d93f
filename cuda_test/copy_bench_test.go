//go:build cgo

package gputest

import (
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// BenchmarkCopySideBySide copies 256 MiB of float32 between the host and
// a Buffer, in one process over interleaved rounds: from C through
// cuMemcpyHtoDAsync/cuMemcpyDtoHAsync on page-locked memory and a stream
// synchronization (the floor); with Buffer.CopyFrom and CopyTo from and to
// a Go heap slice (pageable memory, staged); and from and to the slice of a
// HostBuffer (page-locked, copied directly). It reports the medians in
// GB/s (1e9 bytes) and each Go form's share of C's, each way; the goal is
// 0.9.
func BenchmarkCopySideBySide(b *testing.B) {
	dev := gpu(b)
	const n = 64 << 20 // float32s: 256 MiB
	const bytes = 4 * n
	buf := must[*cuda.Buffer[float32]](b)(cuda.Alloc[float32](dev, n))
	defer buf.Close()
	s := must[*cuda.Stream](b)(dev.NewStream())
	defer s.Close()
	ok(b, driver.CtxSetCurrent(dev.Context()))
	pinned := must[driver.HostPtr](b)(driver.MemAllocHost(bytes))
	defer driver.MemFreeHost(pinned)
	htod := must[uintptr](b)(driver.Lookup("cuMemcpyHtoDAsync", 3020))
	dtoh := must[uintptr](b)(driver.Lookup("cuMemcpyDtoHAsync", 3020))
	sync := must[uintptr](b)(driver.Lookup("cuStreamSynchronize", 2000))
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i)
	}
	hb := must[*cuda.HostBuffer[float32]](b)(cuda.AllocHost[float32](dev, n))
	defer hb.Close()
	locked := hb.Slice()
	copy(locked, host)
	const rounds = 9
	var cIn, cOut, goIn, goOut, hbIn, hbOut []float64
	gbps := func(ns float64) float64 { return bytes / ns }
	for b.Loop() {
		for range rounds {
			c := copyC(htod, sync, uint64(buf.Ptr()), uintptr(pinned), bytes, uintptr(s.Handle()), true)
			if c < 0 {
				b.Fatalf("C host-to-device copy: CUresult %d", -c)
			}
			cIn = append(cIn, gbps(float64(c)))
			c = copyC(dtoh, sync, uint64(buf.Ptr()), uintptr(pinned), bytes, uintptr(s.Handle()), false)
			if c < 0 {
				b.Fatalf("C device-to-host copy: CUresult %d", -c)
			}
			cOut = append(cOut, gbps(float64(c)))
			t0 := time.Now()
			ok(b, buf.CopyFrom(host))
			goIn = append(goIn, gbps(float64(time.Since(t0).Nanoseconds())))
			t0 = time.Now()
			ok(b, buf.CopyTo(host))
			goOut = append(goOut, gbps(float64(time.Since(t0).Nanoseconds())))
			t0 = time.Now()
			ok(b, buf.CopyFrom(locked))
			hbIn = append(hbIn, gbps(float64(time.Since(t0).Nanoseconds())))
			t0 = time.Now()
			ok(b, buf.CopyTo(locked))
			hbOut = append(hbOut, gbps(float64(time.Since(t0).Nanoseconds())))
		}
	}
	if host[n-1] != float32(n-1) || locked[n-1] != float32(n-1) {
		b.Fatalf("round trip: element %d is %v (heap), %v (HostBuffer)", n-1, host[n-1], locked[n-1])
	}
	b.ReportMetric(median(cIn), "C-HtoD-GB/s")
	b.ReportMetric(median(goIn), "Go-HtoD-GB/s")
	b.ReportMetric(median(cOut), "C-DtoH-GB/s")
	b.ReportMetric(median(goOut), "Go-DtoH-GB/s")
	b.ReportMetric(median(hbIn), "HostBuffer-HtoD-GB/s")
	b.ReportMetric(median(hbOut), "HostBuffer-DtoH-GB/s")
	b.ReportMetric(median(goIn)/median(cIn), "HtoD-Go/C")
	b.ReportMetric(median(goOut)/median(cOut), "DtoH-Go/C")
	b.ReportMetric(median(hbIn)/median(cIn), "HtoD-HostBuffer/C")
	b.ReportMetric(median(hbOut)/median(cOut), "DtoH-HostBuffer/C")
	b.Logf("256 MiB, %d rounds: host to device C %.1f GB/s (page-locked), Go %.1f (a heap slice), %.1f (a HostBuffer's slice); device to host C %.1f, Go %.1f, %.1f",
		len(cIn), median(cIn), median(goIn), median(hbIn), median(cOut), median(goOut), median(hbOut))
}
