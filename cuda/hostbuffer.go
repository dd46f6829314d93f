package cuda

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// HostBuffer is page-locked host memory holding Len values of T (pinned
// memory: cuda.core's PinnedMemoryResource, cudarc's PinnedHostSlice),
// which the GPU's copy engines read and write directly. Slice is its
// memory as a Go slice: fill it, and Buffer.CopyFrom of that slice (or of
// part of it) runs at the copy engine's speed, with no staging through the
// CPU; Buffer.CopyTo into it likewise. T is checked as Alloc checks it.
//
// The memory is mapped apart from Go's heap and registered with the
// driver for every context (cuMemHostRegister, CU_MEMHOSTREGISTER_PORTABLE).
// Close, or the Close of the last open Device of its context, unregisters
// it and gives its pages back once no copy uses it; its addresses then
// stay reserved and unreadable, so that a slice kept past Close faults on
// its next use (like syscall.Mmap's after Munmap) rather than reach other
// memory, and a copy from or to it returns an error matching ErrClosed. The slice does not keep the HostBuffer reachable, so the garbage
// collector never frees it: Close it. A HostBuffer is safe for concurrent
// use, Close included; the values in its memory are the caller's to
// synchronize, as any slice's. The zero value and a nil *HostBuffer are
// not usable: Slice is nil, Close returns an error matching ErrInvalid.
type HostBuffer[T any] struct {
	data []T
	p    *ctxState
	dev  *Device
	r    *handle
}

// AllocHost allocates page-locked host memory for n values of type T,
// registered through d's context, for every context. Its contents are
// zero. n may be 0: the HostBuffer then holds no memory. A negative n, or
// one whose bytes do not fit an int, is refused with ErrInvalidOptions,
// and an element type with Go pointers or without a size with
// ErrInvalidType, before anything is allocated; a system other than 64-bit
// Linux returns an error matching ErrNotSupported. Page-locked memory is
// taken from the system's: allocate what the copies need, once, rather
// than per copy (each HostBuffer also keeps its range of address space
// after Close).
func AllocHost[T any](d *Device, n int) (*HostBuffer[T], error) {
	const op = "allocate page-locked host memory"
	size, err := enterAlloc[T](d, op, n)
	switch {
	case err != nil:
		return nil, err
	case !hostMemSupported:
		d.h.Exit()
		return nil, &Error{Op: op, Detail: "page-locked host memory is mapped on 64-bit Linux only",
			Fix: "copy from and to Go slices (Buffer.CopyFrom stages them)", Err: ErrNotSupported}
	}
	defer d.h.Exit()
	var mem []byte
	if n > 0 {
		var err error
		if mem, err = mapHost(n * size); err != nil {
			if err == syscall.ENOMEM {
				err = driver.ErrorOutOfMemory
			}
			return nil, &Error{Op: op, Detail: fmt.Sprintf("mapping %d bytes: %v", n*size, err),
				Fix: "free host memory, or allocate less", Err: err}
		}
		if err := driver.MemHostRegisterCtx(d.p.ctx, hostAddr(mem), uint64(cap(mem)), driver.MemhostregisterPortable); err != nil {
			unmapHost(mem)
			return nil, driverErr(op, err)
		}
	}
	undo := func() { // the memory was never handed out
		if mem != nil {
			_ = driver.MemHostUnregisterCtx(d.p.ctx, hostAddr(mem))
			unmapHost(mem)
		}
	}
	r := lifetime.NewHandle(&d.p.life, uintptr(hostAddr(mem)), kindHostMemory, &d.p.life.Open)
	if r == nil {
		undo()
		return nil, hostMemErr(op)
	}
	if mem != nil {
		pinned.add(mem, r) // before the device may close it: destroyHost finds it there
	}
	if !d.p.add(r, d) {
		pinned.remove(r.H, false)
		undo()
		return nil, closedErr(op, "device")
	}
	h := &HostBuffer[T]{p: d.p, dev: d, r: r}
	if n > 0 {
		h.data = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	}
	return h, nil
}

// Slice is the memory as a slice of Len values, valid until Close (nil for
// a nil, zero or closed HostBuffer, and for one of 0 values).
func (h *HostBuffer[T]) Slice() []T {
	if h == nil || h.r == nil || h.r.Closed() {
		return nil
	}
	return h.data
}

// Ptr is the memory's address (0 for a nil HostBuffer and one of 0
// values), for the driver's calls that take page-locked memory (the
// asynchronous copies of cuda/driver). It is valid until Close.
func (h *HostBuffer[T]) Ptr() driver.HostPtr {
	if h == nil || len(h.data) == 0 {
		return 0
	}
	return driver.HostPtr(h.r.H)
}

// Len is the number of values (0 for a nil HostBuffer).
func (h *HostBuffer[T]) Len() int { return nilOr(h, func(h *HostBuffer[T]) int { return len(h.data) }) }

// Device is the device it was allocated with (nil for a nil HostBuffer).
func (h *HostBuffer[T]) Device() *Device {
	return nilOr(h, func(h *HostBuffer[T]) *Device { return h.dev })
}

// String describes the memory.
func (h *HostBuffer[T]) String() string {
	if h == nil || h.r == nil {
		return "cuda host buffer <invalid>"
	}
	return fmt.Sprintf("page-locked host buffer of %d %v at %#x, registered on device %d", len(h.data), reflect.TypeFor[T](), h.r.H, h.p.ordinal)
}

// Close unregisters the memory and gives its pages back. Like Buffer.Close
// it never blocks: copies in flight from or to it finish normally, and the memory
// goes once none holds it. The slice must not be used after Close (its
// next use faults). It is idempotent and returns nil; a nil HostBuffer
// returns an error matching ErrInvalid.
func (h *HostBuffer[T]) Close() error {
	if h == nil || h.r == nil {
		return invalidErr("free page-locked host memory", "host buffer")
	}
	h.r.Close(false)
	return nil
}

// hostAddr is the address of mem's first byte (0 for none).
func hostAddr(mem []byte) driver.HostPtr {
	return driver.HostPtr(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
}

// pinnedRange is the memory of a HostBuffer: open, or closed (r nil) and
// kept, as its addresses are never mapped again.
type pinnedRange struct {
	start uintptr
	mem   []byte
	r     *handle
}

// pinnedRanges are the HostBuffers' memory, sorted by address: the copies
// look a slice up in it (lock-free: a copy of the list is stored on each
// change), to copy directly from or to page-locked memory, and to refuse a
// slice of a closed HostBuffer.
type pinnedRanges struct {
	mu   sync.Mutex
	list atomic.Pointer[[]pinnedRange]
}

var pinned pinnedRanges

func (x *pinnedRanges) add(mem []byte, r *handle) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var l []pinnedRange
	if p := x.list.Load(); p != nil {
		l = slices.Clone(*p)
	}
	i, _ := slices.BinarySearchFunc(l, r.H, cmpStart)
	l = slices.Insert(l, i, pinnedRange{start: r.H, mem: mem, r: r})
	x.list.Store(&l)
}

// remove takes the range at addr out of the list, or with keep marks it
// closed, and returns its memory (nil if there was none).
func (x *pinnedRanges) remove(addr uintptr, keep bool) []byte {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.list.Load()
	if p == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(*p, addr, cmpStart)
	if !ok || (*p)[i].r == nil {
		return nil
	}
	mem := (*p)[i].mem
	l := slices.Clone(*p)
	if keep {
		l[i].r = nil
	} else {
		l = slices.Delete(l, i, i+1)
	}
	x.list.Store(&l)
	return mem
}

func cmpStart(e pinnedRange, a uintptr) int { return cmp.Compare(e.start, a) }

// enter finds the HostBuffer whose memory holds all of data and counts a
// call in on it (its Exit ends it). nil where none does; nil and closed
// where that HostBuffer is closed or closing.
func (x *pinnedRanges) enter(data []byte) (h *handle, closed bool) {
	p := x.list.Load()
	if p == nil || len(data) == 0 {
		return nil, false
	}
	a := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	l := *p
	// The last range starting at or before a.
	i, ok := slices.BinarySearchFunc(l, a, cmpStart)
	if !ok {
		i--
	}
	if i < 0 || a-l[i].start > uintptr(len(l[i].mem)) || uintptr(len(data)) > uintptr(len(l[i].mem))-(a-l[i].start) {
		return nil, false
	}
	if l[i].r == nil || !l[i].r.Enter() {
		return nil, true
	}
	return l[i].r, false
}

// destroyHost unregisters the memory of a HostBuffer's retired handle h
// and gives its pages back, in order after p's other slow calls; its range
// stays in the table, closed.
func (p *ctxState) destroyHost(h *handle) {
	mem := pinned.remove(h.H, true)
	if mem == nil {
		return
	}
	p.later(func() {
		_ = driver.MemHostUnregisterCtx(p.ctx, hostAddr(mem))
		reserveHost(mem)
	})
}
