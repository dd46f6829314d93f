//go:build cgo

package gputest

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// hostSink keeps the read of a stale slice from being left out.
var hostSink float32

// A HostBuffer's memory is page-locked and zeroed; copies from and to it
// (or part of it) go directly by the copy engine, while a Go heap slice's
// are staged; misuse is refused before anything is allocated; Close
// unregisters it once no copy uses it, a slice kept past Close then faults
// instead of reaching other memory, and copies from or to it are refused
// with ErrClosed.
func TestLayerHostBuffer(t *testing.T) {
	dev := gpu(t)
	const n = 1 << 16
	regs0, fake := fakeCounter("fakecuda_live_host_registers")
	h := must[*cuda.HostBuffer[float32]](t)(cuda.AllocHost[float32](dev, n))
	s := h.Slice()
	if h.Len() != n || len(s) != n || h.Device() != dev {
		t.Fatalf("AllocHost(%d): Len %d, Slice of %d, device %v", n, h.Len(), len(s), h.Device())
	}
	if r, _ := fakeCounter("fakecuda_live_host_registers"); fake && r != regs0+1 {
		t.Errorf("registered ranges after AllocHost: %d, want %d", r, regs0+1)
	}
	for i := range s {
		if s[i] != 0 {
			t.Fatalf("value %d of new page-locked memory is %v, want 0", i, s[i])
		}
		s[i] = float32(i)
	}
	b := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, n))
	defer b.Close()
	copies0, _ := fakeCounter("fakecuda_registered_copies")
	ok(t, b.CopyFrom(s))
	v := must[*cuda.Buffer[float32]](t)(b.Slice(0, n/2))
	ok(t, v.CopyTo(s[n/2:])) // part of the memory: values 0 .. n/2-1 into the second half
	w := must[*cuda.Buffer[float32]](t)(b.Slice(n/2, n))
	ok(t, w.CopyFrom(s[n/2:])) // and back from it: the buffer's second half holds 0 .. n/2-1
	if c, _ := fakeCounter("fakecuda_registered_copies"); fake && c != copies0+3 {
		t.Errorf("direct copies from and to registered memory: %d, want 3", c-copies0)
	}
	for i := range n / 2 {
		if s[i] != float32(i) || s[n/2+i] != float32(i) {
			t.Fatalf("values %d and %d: %v and %v, want %d in both", i, n/2+i, s[i], s[n/2+i], i)
		}
	}
	heap := make([]float32, n)
	ok(t, b.CopyTo(heap))
	if heap[1] != 1 || heap[n/2+1] != 1 || heap[n-1] != n/2-1 {
		t.Errorf("a heap slice's copy: values %v, %v, %v; want 1, 1, %d", heap[1], heap[n/2+1], heap[n-1], n/2-1)
	}
	if c, _ := fakeCounter("fakecuda_registered_copies"); fake && c != copies0+3 {
		t.Errorf("a Go heap slice was copied as registered memory (%d direct copies, want 3)", c-copies0)
	}

	_, err := cuda.AllocHost[*int](dev, 1)
	isErr(t, "AllocHost of pointers", err, cuda.ErrInvalidType)
	_, err = cuda.AllocHost[float32](dev, -1)
	isErr(t, "AllocHost(-1)", err, cuda.ErrInvalidOptions, "-1")
	_, err = cuda.AllocHost[float32](nil, 1)
	isErr(t, "AllocHost on a nil device", err, cuda.ErrInvalid)
	isErr(t, "Close of a nil HostBuffer", (*cuda.HostBuffer[float32])(nil).Close(), cuda.ErrInvalid)
	z := must[*cuda.HostBuffer[float32]](t)(cuda.AllocHost[float32](dev, 0))
	if z.Len() != 0 || z.Slice() != nil {
		t.Errorf("AllocHost(0): Len %d, Slice %v", z.Len(), z.Slice())
	}
	ok(t, z.Close())

	ok(t, h.Close())
	ok(t, h.Close())
	if h.Slice() != nil {
		t.Error("Slice after Close is not nil")
	}
	// A copy from or to the closed memory is refused, never staged through
	// it: at once, and once the memory has gone (below).
	isErr(t, "CopyFrom a closed HostBuffer's slice", b.CopyFrom(s), cuda.ErrClosed, "host buffer")
	if fake {
		waitCounter(t, "fakecuda_live_host_registers", regs0)
	}
	// The memory goes after Close returns (on the context's goroutine of
	// slow calls): s then faults.
	faults := func() (faulted bool) {
		old := debug.SetPanicOnFault(true)
		defer func() {
			debug.SetPanicOnFault(old)
			faulted = recover() != nil
		}()
		hostSink = s[n-1]
		return false
	}
	deadline := time.Now().Add(time.Minute)
	for !faults() {
		if time.Now().After(deadline) {
			t.Fatal("a slice of a closed HostBuffer is still readable a minute after Close")
		}
		time.Sleep(10 * time.Millisecond)
	}
	isErr(t, "CopyTo a closed HostBuffer's slice, its memory gone", b.CopyTo(s), cuda.ErrClosed, "host buffer")
	isErr(t, "CopyFrom part of it", v.CopyFrom(s[:n/2]), cuda.ErrClosed, "host buffer")
}

// AdoptBuffer wraps device memory allocated elsewhere: copies, a view and
// a kernel work on it; Close releases the wrapper and never frees the
// memory, which its owner still uses and frees; a length past the
// allocation's end, a pointer in no allocation and a 0 pointer are refused
// before anything is wrapped; closing the adopting Device closes the
// wrapper.
func TestLayerAdoptBuffer(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	const n = 1024
	raw := must[driver.DevicePtr](t)(driver.MemAllocCtx(dev.Context(), 4*n))
	b := must[*cuda.Buffer[float32]](t)(cuda.AdoptBuffer[float32](dev, raw, n))
	if b.Ptr() != raw || b.Len() != n || b.Device() != dev {
		t.Fatalf("adopted buffer: Ptr %#x (want %#x), Len %d, device %v", b.Ptr(), raw, b.Len(), b.Device())
	}
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)
	}
	ok(t, b.CopyFrom(src))
	v := must[*cuda.Buffer[float32]](t)(b.Slice(n/2, n))
	ok(t, dev.DefaultStream().Launch(k, cuda.Linear(n/2, 64), v.Arg(), driver.Arg(uint32(n/2))))
	got := make([]float32, n)
	ok(t, b.CopyTo(got))
	if got[0] != 0 || got[n/2-1] != n/2-1 || got[n/2] != n/2+1 || got[n-1] != n {
		t.Fatalf("adopted memory after a copy and a kernel on its second half: %v %v %v %v", got[0], got[n/2-1], got[n/2], got[n-1])
	}
	// Part of the allocation, to its end: accepted; one value more: refused.
	tail := must[*cuda.Buffer[float32]](t)(cuda.AdoptBuffer[float32](dev, raw+4*(n-2), 2))
	ok(t, tail.Close())
	_, err := cuda.AdoptBuffer[float32](dev, raw+4*(n-2), 3)
	isErr(t, "AdoptBuffer past the allocation's end", err, cuda.ErrInvalidOptions, "past the end")
	_, err = cuda.AdoptBuffer[float32](dev, 0, 1)
	isErr(t, "AdoptBuffer of a 0 pointer", err, cuda.ErrInvalid)
	_, err = cuda.AdoptBuffer[*int](dev, raw, 1)
	isErr(t, "AdoptBuffer of pointers", err, cuda.ErrInvalidType)
	if _, err := cuda.AdoptBuffer[float32](dev, 8, 1); err == nil {
		t.Error("AdoptBuffer of a pointer in no allocation was accepted")
	}

	ok(t, b.Close())
	isErr(t, "CopyTo after Close", b.CopyTo(got), cuda.ErrClosed)
	// The memory outlives its wrapper: once a buffer closed after it has
	// had its memory freed (the context's destroys run in order), the
	// adopted memory is still an allocation.
	x := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 1))
	xp := x.Ptr()
	ok(t, x.Close())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, _, err := driver.MemGetAddressRangeCtx(dev.Context(), xp); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed buffer's memory is still allocated a minute after Close")
		}
	}
	if _, _, err := driver.MemGetAddressRangeCtx(dev.Context(), raw); err != nil {
		t.Errorf("the adopted memory was freed with its wrapper: %v", err)
	}

	same := must[*cuda.Device](t)(cuda.AdoptContext(dev.Context()))
	c := must[*cuda.Buffer[float32]](t)(cuda.AdoptBuffer[float32](same, raw, n))
	ok(t, same.Close())
	isErr(t, "adopted buffer of a closed Device", c.CopyTo(got), cuda.ErrClosed)
	ok(t, driver.MemFreeCtx(dev.Context(), raw))
}
