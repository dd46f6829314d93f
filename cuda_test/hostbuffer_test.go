//go:build cgo

package gputest

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
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
