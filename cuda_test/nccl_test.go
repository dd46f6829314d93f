//go:build cgo

package gputest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/nccl"
)

// TestNCCLCollectives runs NCCL over every visible GPU in one process
// (CommInitAll, one rank per device) on cuda package buffers and streams:
// all-reduce, broadcast, all-gather, reduce-scatter and send/recv around
// the ring in groups, each stream's completion
// observed through a cuda event, the results checked. One GPU is a clique
// of one. It needs a GPU and libnccl.so.2 (or CUDAGEN_LIBNCCL).
func TestNCCLCollectives(t *testing.T) {
	devs, streams, comms := ncclClique(t)
	n := len(devs)
	for r, c := range comms {
		rank := must[int32](t)(nccl.CommUserRank(c))
		dev := must[int32](t)(nccl.CommCuDevice(c))
		if int(rank) != r || int(dev) != devs[r].Ordinal() {
			t.Fatalf("communicator %d: rank %d on device %d", r, rank, dev)
		}
	}

	const count = 1 << 20
	send := make([]*cuda.Buffer[float32], n)
	recv := make([]*cuda.Buffer[float32], n)
	for r := range devs {
		host := make([]float32, count)
		for i := range host {
			host[i] = float32(r+1) * float32(i%1000)
		}
		send[r] = must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(devs[r], host))
		defer send[r].Close()
		recv[r] = must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](devs[r], count*n))
		defer recv[r].Close()
	}
	// done records an event on each stream and waits for it: NCCL's work
	// is ordinary stream work to the cuda package.
	done := func(what string) {
		t.Helper()
		for r, s := range streams {
			ev := must[*cuda.Event](t)(devs[r].NewEvent(cuda.EventOptions{}))
			ok(t, ev.Record(s))
			ok(t, ev.Sync())
			ok(t, ev.Close())
		}
		for _, c := range comms {
			if ae := must[nccl.Result](t)(nccl.CommGetAsyncError(c)); ae != nccl.Success {
				t.Fatalf("%s: asynchronous error %v", what, ae)
			}
		}
	}
	group := func(what string, call func(r int) error) {
		t.Helper()
		ok(t, nccl.Group(func() error {
			for r := range comms {
				if err := call(r); err != nil {
					return err
				}
			}
			return nil
		}))
		done(what)
	}
	got := make([]float32, count*n)
	sumOfRanks := float32(n * (n + 1) / 2)

	group("all-reduce", func(r int) error {
		return nccl.AllReduce(send[r].Ptr(), recv[r].Ptr(), count, nccl.Float32, nccl.Sum, comms[r], streams[r].Handle())
	})
	for r := range devs {
		ok(t, recv[r].CopyTo(got))
		for _, i := range []int{0, 1, 999, count - 1} {
			if want := sumOfRanks * float32(i%1000); got[i] != want {
				t.Fatalf("all-reduce on rank %d: element %d is %v, want %v", r, i, got[i], want)
			}
		}
	}

	group("broadcast", func(r int) error {
		return nccl.Broadcast(send[r].Ptr(), recv[r].Ptr(), count, nccl.Float32, int32(n-1), comms[r], streams[r].Handle())
	})
	for r := range devs {
		ok(t, recv[r].CopyTo(got))
		if want := float32(n) * 999; got[999] != want {
			t.Fatalf("broadcast from rank %d on rank %d: element 999 is %v, want %v", n-1, r, got[999], want)
		}
	}

	group("all-gather", func(r int) error {
		return nccl.AllGather(send[r].Ptr(), recv[r].Ptr(), count, nccl.Float32, comms[r], streams[r].Handle())
	})
	for r := range devs {
		ok(t, recv[r].CopyTo(got))
		for from := range devs {
			if want := float32(from+1) * 7; got[from*count+7] != want {
				t.Fatalf("all-gather on rank %d: rank %d's element 7 is %v, want %v", r, from, got[from*count+7], want)
			}
		}
	}
	// Reduce-scatter: rank r gets the sum over ranks of block r of the
	// ranks' count*n values (recv as the source, send's count as the block).
	for r := range devs {
		host := make([]float32, count*n)
		for i := range host {
			host[i] = float32(r+1) * float32(i%1000)
		}
		ok(t, recv[r].CopyFrom(host))
	}
	group("reduce-scatter", func(r int) error {
		return nccl.ReduceScatter(recv[r].Ptr(), send[r].Ptr(), count, nccl.Float32, nccl.Sum, comms[r], streams[r].Handle())
	})
	part := make([]float32, count)
	for r := range devs {
		ok(t, send[r].CopyTo(part))
		for _, i := range []int{0, 7, count - 1} {
			if want := sumOfRanks * float32((r*count+i)%1000); part[i] != want {
				t.Fatalf("reduce-scatter on rank %d: element %d is %v, want %v", r, i, part[i], want)
			}
		}
	}

	// Send and receive around the ring: rank r sends its block to r+1.
	for r := range devs {
		ok(t, send[r].Set(float32(100+r)))
	}
	group("send/recv", func(r int) error {
		return errors.Join(
			nccl.Send(send[r].Ptr(), count, nccl.Float32, int32((r+1)%n), comms[r], streams[r].Handle()),
			nccl.Recv(recv[r].Ptr(), count, nccl.Float32, int32((r+n-1)%n), comms[r], streams[r].Handle()))
	})
	for r := range devs {
		ok(t, recv[r].CopyTo(got))
		if want := float32(100 + (r+n-1)%n); got[0] != want || got[count-1] != want {
			t.Fatalf("recv on rank %d: %v … %v, want %v from rank %d", r, got[0], got[count-1], want, (r+n-1)%n)
		}
	}
	t.Logf("NCCL on %d GPU(s): all-reduce, broadcast, all-gather, reduce-scatter and send/recv of %d floats checked", n, count)
}

// ncclClique opens every visible GPU, a stream on each and a communicator
// over them all (CommInitAll), closed at the end of tb; it skips without
// NCCL or a GPU.
func ncclClique(tb testing.TB) (devs []*cuda.Device, streams []*cuda.Stream, comms []nccl.Comm) {
	gpu(tb)
	if _, err := nccl.Load(); errors.Is(err, nccl.ErrNoLibrary) {
		tb.Skipf("skipping: no NCCL on this machine: %v", err)
	}
	n := must[int](tb)(cuda.DeviceCount())
	devs = make([]*cuda.Device, n)
	streams = make([]*cuda.Stream, n)
	for i := range devs {
		devs[i] = must[*cuda.Device](tb)(cuda.GetDevice(i))
		tb.Cleanup(func() { devs[i].Close() })
		streams[i] = must[*cuda.Stream](tb)(devs[i].NewStream())
		tb.Cleanup(func() { streams[i].Close() })
	}
	comms = make([]nccl.Comm, n)
	ok(tb, nccl.CommInitAll(comms, nil))
	tb.Cleanup(func() {
		for _, c := range comms {
			ok(tb, nccl.CommDestroy(c))
		}
	})
	return devs, streams, comms
}

// A collective that can never complete (rank 1 never joins rank 0's
// all-reduce) keeps rank 0's stream busy until the communicator is
// aborted when a context ends, as ExampleCommAbort_context does: then the
// stream's work ends, its Sync returns, and the device goes on working.
// Rank 1's communicator is aborted too (a destroy could wait for rank 0).
// Both ranks all-reduce once first, so that the ranks are connected.
func TestNCCLAbortHungCollective(t *testing.T) {
	gpu(t)
	if _, err := nccl.Load(); errors.Is(err, nccl.ErrNoLibrary) {
		t.Skipf("skipping: no NCCL on this machine: %v", err)
	}
	if n := must[int](t)(cuda.DeviceCount()); n < 2 {
		t.Skipf("skipping: needs 2 GPUs, and this machine has %d", n)
	}
	devs := make([]*cuda.Device, 2)
	for i := range devs {
		devs[i] = must[*cuda.Device](t)(cuda.GetDevice(i))
		defer devs[i].Close()
	}
	s := must[*cuda.Stream](t)(devs[0].NewStream())
	defer s.Close()
	comms := make([]nccl.Comm, 2)
	ok(t, nccl.CommInitAll(comms, []int32{0, 1}))
	defer func() { ok(t, nccl.CommAbort(comms[1])) }()
	const count = 1 << 20
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](devs[0], count))
	defer buf.Close()

	// One all-reduce of both ranks first: NCCL connects the ranks on
	// their first collective, and a rank's host call waits there for the
	// other's.
	s1 := must[*cuda.Stream](t)(devs[1].NewStream())
	defer s1.Close()
	buf1 := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](devs[1], count))
	defer buf1.Close()
	ok(t, nccl.Group(func() error {
		if err := nccl.AllReduce(buf.Ptr(), buf.Ptr(), count, nccl.Float32, nccl.Sum, comms[0], s.Handle()); err != nil {
			return err
		}
		return nccl.AllReduce(buf1.Ptr(), buf1.Ptr(), count, nccl.Float32, nccl.Sum, comms[1], s1.Handle())
	}))
	ok(t, s.Sync())
	ok(t, s1.Sync())

	ctx, cancel := context.WithCancel(context.Background())
	aborted := make(chan error, 1)
	stop := context.AfterFunc(ctx, func() { aborted <- nccl.CommAbort(comms[0]) })
	ok(t, nccl.AllReduce(buf.Ptr(), buf.Ptr(), count, nccl.Float32, nccl.Sum, comms[0], s.Handle()))
	if done := must[bool](t)(s.Query()); done {
		t.Fatal("an all-reduce that rank 1 never joined completed")
	}
	synced := make(chan error, 1)
	go func() { synced <- s.Sync() }()
	cancel() // giving up on the collective
	select {
	case err := <-aborted:
		ok(t, err)
	case <-time.After(2 * time.Minute):
		t.Fatal("CommAbort of a communicator in a hung collective did not return in 2 minutes")
	}
	if stop() {
		t.Fatal("context.AfterFunc's stop reported the abort not run")
	}
	select {
	case err := <-synced:
		t.Logf("the stream's Sync after the abort: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the stream of the aborted collective did not complete in 2 minutes")
	}
	// The device works on: a new stream sets and reads a buffer.
	s2 := must[*cuda.Stream](t)(devs[0].NewStream())
	defer s2.Close()
	ok(t, buf.SetAsync(s2, 3))
	ok(t, s2.Sync())
	got := make([]float32, count)
	ok(t, buf.CopyTo(got))
	if got[0] != 3 || got[count-1] != 3 {
		t.Fatalf("after the abort, the buffer holds %v … %v, want 3", got[0], got[count-1])
	}
}
