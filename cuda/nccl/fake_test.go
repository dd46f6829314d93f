package nccl

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/internal/libtest"
)

// view is the fake's "device" memory (host memory, as the fake's
// ncclMemAlloc makes it) as a Go slice.
func view[T any](p DevicePtr, n int) []T {
	return unsafe.Slice(*(**T)(unsafe.Pointer(&p)), n)
}

func TestFake(t *testing.T) {
	libtest.OnFake(t, withCgo, "TestFakeChild", "CUDAGEN_LIBNCCL", "testdata/fakenccl.c")
}

func alloc[T any](t *testing.T, vals ...T) DevicePtr {
	t.Helper()
	var z T
	p, err := MemAlloc(uint64(len(vals)) * uint64(unsafe.Sizeof(z)))
	if err != nil {
		t.Fatal(err)
	}
	copy(view[T](p, len(vals)), vals)
	t.Cleanup(func() { MemFree(p) })
	return p
}

func TestFakeChild(t *testing.T) {
	libtest.InChild(t)
	if v, err := GetVersion(); err != nil || v != 22203 {
		t.Fatalf("GetVersion: %d, %v", v, err)
	}
	comms := make([]Comm, 2)
	if err := CommInitAll(comms, nil); err != nil {
		t.Fatal(err)
	}
	for r, c := range comms {
		n, err1 := CommCount(c)
		rank, err2 := CommUserRank(c)
		dev, err3 := CommCuDevice(c)
		if err := errors.Join(err1, err2, err3); err != nil || n != 2 || rank != int32(r) || dev != int32(r) {
			t.Fatalf("comm %d: count %d, rank %d, device %d, %v", r, n, rank, dev, err)
		}
	}
	var stream Stream // the fake takes streams and does not use them

	// All-reduce of float32, both ranks in one group from one goroutine.
	send := []DevicePtr{alloc(t, float32(1), 2, 3), alloc(t, float32(10), 20, 30)}
	recv := []DevicePtr{alloc(t, float32(0), 0, 0), alloc(t, float32(0), 0, 0)}
	runtime.GC()
	err := Group(func() error {
		runtime.Gosched() // a goroutine may move between threads here; Group keeps it on one
		for r := range comms {
			if err := AllReduce(send[r], recv[r], 3, Float32, Sum, comms[r], stream); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range comms {
		if got := view[float32](recv[r], 3); got[0] != 11 || got[1] != 22 || got[2] != 33 {
			t.Fatalf("all-reduce on rank %d: %v, want [11 22 33]", r, got)
		}
	}

	// Broadcast from rank 1, all-gather and reduce-scatter of int64, from
	// one goroutine per rank.
	b := []DevicePtr{alloc(t, int64(0), 0), alloc(t, int64(7), 8)}
	g := []DevicePtr{alloc(t, int64(0), 0, 0, 0), alloc(t, int64(0), 0, 0, 0)}
	rs := []DevicePtr{alloc(t, int64(0)), alloc(t, int64(0))}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = errors.Join(
				Broadcast(b[r], b[r], 2, Int64, 1, comms[r], stream),
				AllGather(b[r], g[r], 2, Int64, comms[r], stream),
				ReduceScatter(b[r], rs[r], 1, Int64, Max, comms[r], stream),
			)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for r := range comms {
		if got := view[int64](b[r], 2); got[0] != 7 || got[1] != 8 {
			t.Errorf("broadcast on rank %d: %v, want [7 8]", r, got)
		}
		if got := view[int64](g[r], 4); got[0] != 7 || got[1] != 8 || got[2] != 7 || got[3] != 8 {
			t.Errorf("all-gather on rank %d: %v, want [7 8 7 8]", r, got)
		}
		if got := view[int64](rs[r], 1); got[0] != []int64{7, 8}[r] {
			t.Errorf("reduce-scatter (max) on rank %d: %v", r, got)
		}
	}

	// Send and receive.
	from, to := alloc(t, int32(5), 6), alloc(t, int32(0), 0)
	if err := Group(func() error {
		return errors.Join(Send(from, 2, Int32, 1, comms[0], stream), Recv(to, 2, Int32, 0, comms[1], stream))
	}); err != nil {
		t.Fatal(err)
	}
	if got := view[int32](to, 2); got[0] != 5 || got[1] != 6 {
		t.Errorf("send/recv: %v, want [5 6]", got)
	}

	// Errors: the function, the result, what to do; and one NCCL lacks.
	err = AllReduce(0, recv[0], 3, Float32, Sum, comms[0], stream)
	var e *Error
	if !errors.Is(err, InvalidArgument) || !errors.As(err, &e) || e.Func != "ncclAllReduce" || !strings.HasPrefix(err.Error(), "cuda: ncclAllReduce: ncclInvalidArgument (4): ") {
		t.Fatalf("AllReduce of no buffer: %v", err)
	}
	if _, err := CommRegister(comms[0], send[0], 12); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "ncclCommRegister") {
		t.Fatalf("CommRegister from a library without it: %v", err)
	}

	// A pre-multiplying sum with a host scalar: copied for the call and
	// read during it (the fake keeps what it read); a scalar of another
	// size than the data type's is refused before NCCL is called.
	op, err := RedOpCreatePreMulSumHost(float64(2.5), Float64, comms[0])
	if err != nil || op == 0 {
		t.Fatalf("RedOpCreatePreMulSumHost: %v, %v", op, err)
	}
	sym := library.Sym("fakenccl_last_scalar") // C memory of the fake's
	if read := **(**float64)(unsafe.Pointer(&sym)); read != 2.5 {
		t.Errorf("the scalar NCCL read: %v, want 2.5", read)
	}
	if err := RedOpDestroy(op, comms[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := RedOpCreatePreMulSumHost(float32(2), Float64, comms[0]); !errors.Is(err, ErrInvalidSize) || !strings.Contains(err.Error(), "float32") {
		t.Errorf("a float32 scalar for Float64 data: %v, want an error matching ErrInvalidSize", err)
	}

	// Ranks that call different collectives: an asynchronous error.
	if ae, err := CommGetAsyncError(comms[1]); err != nil || ae != Success {
		t.Fatalf("CommGetAsyncError before: %v, %v", ae, err)
	}
	if err := errors.Join(AllReduce(send[0], recv[0], 3, Float32, Sum, comms[0], stream), AllReduce(send[1], recv[1], 2, Float32, Sum, comms[1], stream)); err != nil {
		t.Fatal(err)
	}
	if ae, err := CommGetAsyncError(comms[1]); err != nil || ae != InvalidUsage || ae.String() != "ncclInvalidUsage" {
		t.Fatalf("CommGetAsyncError after mismatched all-reduces: %v, %v; want ncclInvalidUsage", ae, err)
	}

	// Ranks of one process joined by a unique ID passed as text.
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	text, _ := id.MarshalText()
	ranks := make([]Comm, 2)
	for r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine UniqueID
			if errs[r] = mine.UnmarshalText(text); errs[r] == nil {
				ranks[r], errs[r] = CommInitRank(0, 2, mine, int32(r))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Creation inside a group is refused before NCCL is called: NCCL would
	// write the communicator when the group ends, after the call.
	err = Group(func() error {
		_, err := CommInitRank(0, 2, id, 0)
		if err == nil {
			return errors.New("CommInitRank inside Group succeeded")
		}
		return errors.Join(err, CommInitAll(make([]Comm, 1), nil))
	})
	if !errors.Is(err, ErrInGroup) || !strings.Contains(err.Error(), "cuda: ncclCommInitRank: called inside a group") || !strings.Contains(err.Error(), "cuda: ncclCommInitAll: called inside a group") {
		t.Fatalf("creation inside Group: %v; want both refused with ErrInGroup", err)
	}
	cfg := DefaultConfig()
	cfg.Blocking = 0
	if _, err := CommInitRankConfig(0, 1, id, 0, &cfg); !errors.Is(err, ErrNonBlocking) {
		t.Fatalf("CommInitRankConfig with a non-blocking config: %v", err)
	}
	if _, err := CommInitRankConfig(0, 1, id, 0, &Config{}); !errors.Is(err, ErrInvalidSize) || !strings.Contains(err.Error(), "DefaultConfig") {
		t.Fatalf("CommInitRankConfig with a zero config: %v", err)
	}
	if err := CommInitAll(nil, nil); !errors.Is(err, ErrInvalidSize) {
		t.Fatalf("CommInitAll of no communicator: %v", err)
	}
	id2, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	cfg = DefaultConfig()
	one, err := CommInitRankConfig(0, 1, id2, 0, &cfg)
	if err != nil || one == 0 {
		t.Fatalf("CommInitRankConfig with DefaultConfig: %v, %v", one, err)
	}
	ranks = append(ranks, one)

	for r, c := range append(ranks, comms...) {
		if err := CommDestroy(c); err != nil {
			t.Fatalf("CommDestroy %d: %v", r, err)
		}
	}
	if err := AllReduce(send[0], recv[0], 3, Float32, Sum, comms[0], stream); !errors.Is(err, InvalidUsage) {
		t.Fatalf("AllReduce on a destroyed communicator: %v", err)
	}
}

// TestGroupEndsOnError: a failing f still ends the group, and Group
// returns f's error; a group ended twice is NCCL's error.
func TestGroupEndsOnError(t *testing.T) {
	libtest.OnFake(t, withCgo, "TestGroupEndsOnErrorChild", "CUDAGEN_LIBNCCL", "testdata/fakenccl.c")
}

func TestGroupEndsOnErrorChild(t *testing.T) {
	libtest.InChild(t)
	boom := errors.New("boom")
	if err := Group(func() error { return boom }); !errors.Is(err, boom) || strings.Contains(err.Error(), "ncclGroupEnd") {
		t.Fatalf("Group(f failing): %v; want f's error alone (the group ended)", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := GroupEnd(); !errors.Is(err, InvalidUsage) {
		t.Fatalf("GroupEnd with no group open on this thread: %v; want ncclInvalidUsage (Group ended its group)", err)
	}
}
