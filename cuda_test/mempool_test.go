//go:build cgo

package gputest

import (
	"os"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
)

// TestLayerSharedPool, on the fake driver (which imports a pool and its
// allocations in the exporting process, standing for another): a shared
// pool's allocation filled, the pool exported as a file and imported, the
// allocation's handle through text and binary, opened as a Buffer that
// reads and writes the same memory; what cannot be exported, allocated or
// opened is refused before the driver is called; imported on another
// device, the pool is given access there; closing unmaps, frees and
// destroys (the fake counts the pools and mappings live), and the last
// Device's Close destroys the pools left open. TestSharedPoolProcesses does
// it across processes on a GPU.
func TestLayerSharedPool(t *testing.T) {
	dev := fakeOnly(t)
	pools0, _ := fakeCounter("fakecuda_live_pools")
	mapped0, _ := fakeCounter("fakecuda_pool_ptrs_imported")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	pool := must[*cuda.SharedPool](t)(dev.NewSharedPool())
	if pool.Handle() == 0 || pool.Imported() {
		t.Fatalf("a new pool: handle %#x, imported %v", pool.Handle(), pool.Imported())
	}
	src := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	b := must[*cuda.Buffer[int32]](t)(cuda.AllocFromPool[int32](s, pool, len(src)))
	ok(t, s.Sync())
	ok(t, b.CopyFrom(src))

	f := must[*os.File](t)(pool.ExportFile())
	imp := must[*cuda.SharedPool](t)(dev.ImportSharedPool(f))
	ok(t, f.Close())
	if !imp.Imported() {
		t.Errorf("the imported pool says it is not")
	}
	h := must[cuda.PoolPtrHandle](t)(b.PoolPtrHandle())
	var fromText, fromBin cuda.PoolPtrHandle
	ok(t, fromText.UnmarshalText([]byte(h.String())))
	ok(t, fromBin.UnmarshalBinary(must[[]byte](t)(h.MarshalBinary())))
	if h.Size() != 32 || fromText != h || fromBin != h || len(h.String()) != 107 || !strings.HasPrefix(h.String(), "cupoolptr1:") {
		t.Fatalf("handle %v of %d bytes; round trips: text %v, binary %v (107 characters)", h, h.Size(), fromText, fromBin)
	}
	o := must[*cuda.Buffer[int32]](t)(cuda.OpenPoolBuffer[int32](imp, fromText))
	got := make([]int32, len(src))
	ok(t, o.CopyTo(got))
	if o.Len() != len(src) || got[0] != 1 || got[7] != 8 {
		t.Fatalf("the opened allocation: %d values reading %v, want %v", o.Len(), got, src)
	}
	ok(t, o.Set(-9))
	ok(t, b.CopyTo(got))
	if got[0] != -9 || got[7] != -9 {
		t.Fatalf("the exporter reads %v after the opened buffer's Set(-9)", got)
	}
	if again := must[cuda.PoolPtrHandle](t)(o.PoolPtrHandle()); again != h {
		t.Errorf("the opened buffer's handle %v, want the one it was opened with", again)
	}
	if n, fake := fakeCounter("fakecuda_pool_ptrs_imported"); fake && n != mapped0+1 {
		t.Errorf("%d allocations mapped, want 1", n-mapped0)
	}

	// Refusals before the driver is called.
	plain := must[*cuda.Buffer[int32]](t)(cuda.Alloc[int32](dev, 4))
	defer plain.Close()
	_, err := plain.PoolPtrHandle()
	isErr(t, "PoolPtrHandle of cuMemAlloc memory", err, cuda.ErrInvalidOptions, "not memory of a shared pool")
	_, err = b.IPCHandle()
	isErr(t, "IPCHandle of shared pool memory", err, cuda.ErrInvalidOptions, "PoolPtrHandle")
	v := must[*cuda.Buffer[int32]](t)(b.Slice(1, 3))
	_, err = v.PoolPtrHandle()
	isErr(t, "PoolPtrHandle of a view", err, cuda.ErrInvalidOptions, "view")
	type three struct{ A, B, C int32 }
	_, err = cuda.OpenPoolBuffer[three](imp, h)
	isErr(t, "opening 32 bytes as 12-byte values", err, cuda.ErrMismatch, "no whole number")
	_, err = cuda.OpenPoolBuffer[int32](pool, h)
	isErr(t, "opening in the exporting pool", err, cuda.ErrInvalidOptions, "this process's own")
	_, err = cuda.OpenPoolBuffer[int32](imp, cuda.PoolPtrHandle{})
	isErr(t, "opening the zero handle", err, cuda.ErrInvalid, "zero PoolPtrHandle")
	_, err = cuda.AllocFromPool[int32](s, imp, 4)
	isErr(t, "allocating from an imported pool", err, cuda.ErrInvalidOptions, "imported")
	_, err = cuda.AllocFromPool[int32](s, pool, 0)
	isErr(t, "allocating 0 values", err, cuda.ErrInvalidOptions, "from 1")
	_, err = imp.ExportFile()
	isErr(t, "exporting an imported pool", err, cuda.ErrInvalidOptions, "imported")
	var bad cuda.PoolPtrHandle
	isErr(t, "a handle's text cut short", bad.UnmarshalText([]byte(h.String()[:50])), cuda.ErrMalformedHandle, "characters long")
	isErr(t, "an IPC memory handle's text", bad.UnmarshalText([]byte(must[cuda.IPCMemHandle](t)(plain.IPCHandle()).String())), cuda.ErrMalformedHandle, "cupoolptr1:")
	if bad != (cuda.PoolPtrHandle{}) {
		t.Errorf("a refused text changed the handle: %v", bad)
	}

	// On another device (which nothing else here holds): the imported pool
	// is given access there, and the pools left open go with the last
	// Device's Close.
	if n := must[int](t)(cuda.DeviceCount()); n > 1 {
		sets0, _ := fakeCounter("fakecuda_pool_access_sets")
		d2 := must[*cuda.Device](t)(cuda.GetDevice(n - 1))
		f2 := must[*os.File](t)(pool.ExportFile())
		imp2 := must[*cuda.SharedPool](t)(d2.ImportSharedPool(f2))
		ok(t, f2.Close())
		if sets, _ := fakeCounter("fakecuda_pool_access_sets"); sets != sets0+1 {
			t.Errorf("device %d was given access %d times, want once", n-1, sets-sets0)
		}
		o2 := must[*cuda.Buffer[int32]](t)(cuda.OpenPoolBuffer[int32](imp2, h))
		ok(t, o2.CopyTo(got))
		if got[0] != -9 || o2.Device() != d2 {
			t.Errorf("the allocation opened on device %d reads %v", n-1, got)
		}
		ok(t, o2.Close())
		left := must[*cuda.SharedPool](t)(d2.NewSharedPool())
		if n, _ := fakeCounter("fakecuda_live_pools"); n != pools0+4 {
			t.Errorf("%d pools live, want 4", n-pools0)
		}
		ok(t, d2.Close())
		waitCounter(t, "fakecuda_live_pools", pools0+2)
		waitCounter(t, "fakecuda_pool_ptrs_imported", mapped0+1)
		_, err = left.ExportFile()
		isErr(t, "exporting a pool of a closed device", err, cuda.ErrClosed, "device")
	}

	// Closing: the mapping first, then the allocation and the pools.
	ok(t, o.Close())
	ok(t, b.Close())
	ok(t, imp.Close())
	ok(t, pool.Close())
	_, err = pool.ExportFile()
	isErr(t, "exporting a closed pool", err, cuda.ErrClosed, "closed")
	waitCounter(t, "fakecuda_pool_ptrs_imported", mapped0)
	waitCounter(t, "fakecuda_live_pools", pools0)
}

// sharedPoolEnv carries the allocation's handle to TestSharedPoolProcesses'
// child; the pool's file descriptor is its fd 3 (exec.Cmd.ExtraFiles).
const sharedPoolEnv = "CUDAGEN_TEST_SHARED_POOL"

// TestSharedPoolProcesses shares a pool's allocation with a child process:
// the pool's file descriptor travels as the child's fd 3, the
// allocation's handle as text in its environment; the child imports the
// pool on the last GPU (another than the exporter's where there are two),
// opens the allocation, checks the values, writes others and closes both;
// the parent then reads the child's values. A driver or device that
// cannot share pools through file descriptors skips, saying so.
func TestSharedPoolProcesses(t *testing.T) {
	if text := os.Getenv(sharedPoolEnv); text != "" {
		sharedPoolChild(t, text)
		return
	}
	dev := gpu(t) // not on the fake driver, which has one process's state (TestLayerSharedPool runs there)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	pool, err := dev.NewSharedPool()
	if err != nil {
		t.Skipf("skipping: the device cannot share memory pools here: %v", err)
	}
	defer pool.Close()
	const n = 1 << 16
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)
	}
	b := must[*cuda.Buffer[float32]](t)(cuda.AllocFromPool[float32](s, pool, n))
	defer b.Close()
	ok(t, s.Sync())
	ok(t, b.CopyFrom(src))
	f := must[*os.File](t)(pool.ExportFile())
	defer f.Close()
	h := must[cuda.PoolPtrHandle](t)(b.PoolPtrHandle())
	out := runChild(t, "TestSharedPoolProcesses", sharedPoolEnv+"="+h.String(), []*os.File{f})
	checkChildSet(t, b, out)
}

func sharedPoolChild(t *testing.T, text string) {
	var h cuda.PoolPtrHandle
	ok(t, h.UnmarshalText([]byte(text)))
	f := os.NewFile(3, "shared pool")
	defer f.Close()
	n := must[int](t)(cuda.DeviceCount())
	dev := must[*cuda.Device](t)(cuda.GetDevice(n - 1))
	defer dev.Close()
	pool := must[*cuda.SharedPool](t)(dev.ImportSharedPool(f))
	b := must[*cuda.Buffer[float32]](t)(cuda.OpenPoolBuffer[float32](pool, h))
	got := make([]float32, b.Len())
	ok(t, b.CopyTo(got))
	if got[0] != 0 || got[len(got)-1] != float32(len(got)-1) {
		t.Fatalf("child: the opened allocation reads %v … %v", got[0], got[len(got)-1])
	}
	ok(t, b.Set(-1))
	ok(t, dev.Sync())
	ok(t, b.Close())
	ok(t, pool.Close())
	ok(t, dev.Sync())
	t.Logf("child: checked and wrote %d values on device %d through the imported pool", len(got), n-1)
}
