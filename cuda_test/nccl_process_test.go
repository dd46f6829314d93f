//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/nccl"
)

// The environment of a rank process of TestNCCLRankPerProcess.
const (
	ncclRankEnv  = "CUDAGEN_TEST_NCCL_RANK"
	ncclRanksEnv = "CUDAGEN_TEST_NCCL_RANKS"
	ncclIDEnv    = "CUDAGEN_TEST_NCCL_ID"
)

// TestNCCLRankPerProcess runs one process per visible GPU, as jobs
// launched by a scheduler do: the parent makes the unique ID and hands it
// to each rank as text in its environment; each rank creates its
// communicator on its device (CommInitRank with the Device's context),
// all-reduces 1 KiB to 1 GiB and broadcasts on cuda package buffers and a
// stream, checks every value and destroys the communicator. Rank 0 times
// each size's all-reduce by events (multiRounds rounds after 2 warm-ups),
// logged as `allreduce goproc bytes=N ranks=R round=I us=T algbw=A busbw=B`
// for bench/multigpu/run.sh, beside BenchmarkNCCLAllReduce's one process.
// A rank that fails ends the others (they are killed, not left waiting in
// NCCL for it).
func TestNCCLRankPerProcess(t *testing.T) {
	if os.Getenv(ncclRankEnv) != "" {
		ncclRank(t)
		return
	}
	gpu(t)
	if _, err := nccl.Load(); errors.Is(err, nccl.ErrNoLibrary) {
		t.Skipf("skipping: no NCCL on this machine: %v", err)
	}
	n := must[int](t)(cuda.DeviceCount())
	id := must[nccl.UniqueID](t)(nccl.GetUniqueID())
	text := must[[]byte](t)(id.MarshalText())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	outs := make([]strings.Builder, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestNCCLRankPerProcess$", "-test.v")
		cmd.Env = append(os.Environ(), ncclRankEnv+"="+strconv.Itoa(r), ncclRanksEnv+"="+strconv.Itoa(n), ncclIDEnv+"="+string(text), "NCCL_NVLS_ENABLE=0")
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[r] = cmd.Run(); errs[r] != nil {
				cancel() // the others would wait for this rank forever
			}
		}()
	}
	wg.Wait()
	for r := range n {
		if errs[r] != nil || !strings.Contains(outs[r].String(), fmt.Sprintf("rank %d of %d: checked", r, n)) {
			t.Errorf("rank %d: %v\n%s", r, errs[r], outs[r].String())
		}
	}
	for line := range strings.Lines(outs[0].String()) {
		if _, timing, found := strings.Cut(line, ": allreduce goproc "); found {
			t.Log("allreduce goproc " + strings.TrimSpace(timing))
		}
	}
	t.Logf("%d rank processes: all-reduce of 1 KiB to 1 GiB and broadcast checked on each", n)
}

// ncclRank is one rank's process of TestNCCLRankPerProcess.
func ncclRank(t *testing.T) {
	rank := must[int](t)(strconv.Atoi(os.Getenv(ncclRankEnv)))
	n := must[int](t)(strconv.Atoi(os.Getenv(ncclRanksEnv)))
	var id nccl.UniqueID
	ok(t, id.UnmarshalText([]byte(os.Getenv(ncclIDEnv))))
	dev := must[*cuda.Device](t)(cuda.GetDevice(rank))
	defer dev.Close()
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	comm := must[nccl.Comm](t)(nccl.CommInitRank(dev.Context(), int32(n), id, int32(rank)))
	defer func() { ok(t, nccl.CommDestroy(comm)) }()
	start := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer start.Close()
	end := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer end.Close()
	for _, bytes := range []int{1 << 10, 1 << 20, 64 << 20, 1 << 30} {
		count := bytes / 4
		buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, count))
		allReduce := func() {
			ok(t, nccl.AllReduce(buf.Ptr(), buf.Ptr(), uint64(count), nccl.Float32, nccl.Sum, comm, s.Handle()))
		}
		// Every value of the first sum is checked; the timed rounds
		// sum sums.
		host := make([]float32, count)
		for i := range host {
			host[i] = float32(rank + 1 + i%7)
		}
		ok(t, buf.CopyFrom(host))
		allReduce()
		ok(t, s.Sync())
		ok(t, buf.CopyTo(host))
		for i, v := range host {
			if want := float32(n*(n+1)/2 + n*(i%7)); v != want {
				t.Fatalf("rank %d: all-reduce of %d bytes: value %d is %v, want %v", rank, bytes, i, v, want)
			}
		}
		allReduce()
		ok(t, s.Sync())
		for round := range multiRounds {
			ok(t, start.Record(s))
			allReduce()
			ok(t, end.Record(s))
			ok(t, s.Sync())
			if rank == 0 {
				d := must[float64](t)(elapsedSeconds(end, start))
				alg := float64(bytes) / d / 1e9
				t.Logf("allreduce goproc bytes=%d ranks=%d round=%d us=%.2f algbw=%.3f busbw=%.3f", bytes, n, round, d*1e6, alg, alg*2*float64(n-1)/float64(n))
			}
		}
		ok(t, buf.Close())
	}
	const count = 1 << 20
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, count))
	defer buf.Close()
	got := make([]float32, count)
	ok(t, buf.Set(float32(rank+10)))
	ok(t, nccl.Broadcast(buf.Ptr(), buf.Ptr(), count, nccl.Float32, int32(n-1), comm, s.Handle()))
	ok(t, s.Sync())
	ok(t, buf.CopyTo(got))
	if want := float32(n - 1 + 10); got[0] != want || got[count-1] != want {
		t.Fatalf("rank %d: broadcast from rank %d gave %v, want %v", rank, n-1, got[0], want)
	}
	if ae := must[nccl.Result](t)(nccl.CommGetAsyncError(comm)); ae != nccl.Success {
		t.Fatalf("rank %d: asynchronous error %v", rank, ae)
	}
	t.Logf("rank %d of %d: checked", rank, n)
}
