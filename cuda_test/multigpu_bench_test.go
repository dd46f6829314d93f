//go:build cgo

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/nccl"
)

// multiRounds is the timed rounds of each multi-GPU measurement; their
// lines are what bench/multigpu/run.sh reads and sets beside its peers'.
const multiRounds = 20

// BenchmarkNCCLAllReduce times an in-place float32 all-reduce (sum) over
// every visible GPU in one process (CommInitAll, one stream per device,
// the ranks' calls in one group), 1 KiB to 1 GiB: after 5 warm-ups, each
// round is timed by events on rank 0's stream around one collective, and
// logged as `allreduce go bytes=N ranks=R round=I us=T algbw=A busbw=B`
// (GB/s; bus bandwidth = algbw·2(R−1)/R, as nccl-tests and
// bench/multigpu/torch_allreduce.py report it). The first collective's
// result is checked.
func BenchmarkNCCLAllReduce(b *testing.B) {
	devs, streams, comms := ncclClique(b)
	n := len(devs)
	start := must[*cuda.Event](b)(devs[0].NewEvent(cuda.EventOptions{Timing: true}))
	defer start.Close()
	end := must[*cuda.Event](b)(devs[0].NewEvent(cuda.EventOptions{Timing: true}))
	defer end.Close()
	for b.Loop() {
		for _, bytes := range []int{1 << 10, 1 << 20, 64 << 20, 1 << 30} {
			count := bytes / 4
			bufs := make([]*cuda.Buffer[float32], n)
			for r := range bufs {
				bufs[r] = must[*cuda.Buffer[float32]](b)(cuda.Alloc[float32](devs[r], count))
				ok(b, bufs[r].Set(float32(r+1)))
			}
			allReduce := func() {
				ok(b, nccl.Group(func() error {
					for r, c := range comms {
						if err := nccl.AllReduce(bufs[r].Ptr(), bufs[r].Ptr(), uint64(count), nccl.Float32, nccl.Sum, c, streams[r].Handle()); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			for i := range 5 {
				allReduce()
				for _, s := range streams {
					ok(b, s.Sync())
				}
				if i == 0 {
					got := make([]float32, count)
					for r := range bufs {
						ok(b, bufs[r].CopyTo(got))
						if want := float32(n * (n + 1) / 2); got[0] != want || got[count-1] != want {
							b.Fatalf("all-reduce of %d bytes on rank %d: %v … %v, want %v", bytes, r, got[0], got[count-1], want)
						}
					}
				}
			}
			for round := range multiRounds {
				ok(b, start.Record(streams[0]))
				allReduce()
				ok(b, end.Record(streams[0]))
				for _, s := range streams {
					ok(b, s.Sync())
				}
				d := must[float64](b)(elapsedSeconds(end, start))
				alg := float64(bytes) / d / 1e9
				b.Logf("allreduce go bytes=%d ranks=%d round=%d us=%.2f algbw=%.3f busbw=%.3f", bytes, n, round, d*1e6, alg, alg*2*float64(n-1)/float64(n))
			}
			for _, buf := range bufs {
				ok(b, buf.Close())
			}
		}
	}
}

// BenchmarkPeerCopy times copies of 1 GiB from device 0 to device 1
// (Buffer.CopyFromBuffer on a stream of device 1, peer access enabled both
// ways where the GPUs allow it), by events around each copy, logged as
// `peercopy go bytes=N round=I GBps=G` beside bench/multigpu/peercopy.cu's
// cudaMemcpyPeerAsync.
func BenchmarkPeerCopy(b *testing.B) {
	d0 := gpu(b)
	if n := must[int](b)(cuda.DeviceCount()); n < 2 {
		b.Skipf("skipping: a peer copy needs 2 GPUs, this machine has %d", n)
	}
	d1 := must[*cuda.Device](b)(cuda.GetDevice(1))
	defer d1.Close()
	direct := must[bool](b)(d0.EnablePeerAccess(d1))
	back := must[bool](b)(d1.EnablePeerAccess(d0))
	b.Logf("peer access: device 0 → 1 %v, device 1 → 0 %v", direct, back)
	const bytes = 1 << 30
	src := must[*cuda.Buffer[byte]](b)(cuda.Alloc[byte](d0, bytes))
	defer src.Close()
	dst := must[*cuda.Buffer[byte]](b)(cuda.Alloc[byte](d1, bytes))
	defer dst.Close()
	s := must[*cuda.Stream](b)(d1.NewStream())
	defer s.Close()
	start := must[*cuda.Event](b)(d1.NewEvent(cuda.EventOptions{Timing: true}))
	defer start.Close()
	end := must[*cuda.Event](b)(d1.NewEvent(cuda.EventOptions{Timing: true}))
	defer end.Close()
	for b.Loop() {
		for range 3 { // warm-up
			ok(b, dst.CopyFromBuffer(s, src))
		}
		ok(b, s.Sync())
		for round := range multiRounds {
			ok(b, start.Record(s))
			ok(b, dst.CopyFromBuffer(s, src))
			ok(b, end.Record(s))
			ok(b, s.Sync())
			d := must[float64](b)(elapsedSeconds(end, start))
			b.Logf("peercopy go bytes=%d round=%d GBps=%.3f", bytes, round, float64(bytes)/d/1e9)
		}
	}
}

// elapsedSeconds is end − start in seconds.
func elapsedSeconds(end, start *cuda.Event) (float64, error) {
	d, err := end.Sub(start)
	return d.Seconds(), err
}
