package cuda

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/ctype"
)

// Buffer is device memory holding Len values of type T (cudarc's
// CudaSlice<T>), allocated by Alloc in a device's context. T must be a type
// whose values hold no Go pointers and have a C layout: a number, a bool, a
// type defined on one (DevicePtr), or an array or a struct of such fields,
// laid out as C lays out the kernel's type (see driver.LaunchArgs for
// alignment). Go's type sets cannot say so, so Alloc checks it at run time.
//
// A Buffer is safe for concurrent use, Close included. Close frees the
// memory; so does the Close of the last open Device of its context, as for
// streams and events. Once it is closed, its copies return errors matching
// ErrClosed. The zero value and a nil *Buffer are not usable: their copies
// return errors matching ErrInvalid, their accessors zero values.
type Buffer[T any] struct {
	ptr    driver.DevicePtr
	n      int
	object // its r is the memory's: a view's is its parent's
	// A view (Slice) keeps its parent, the Buffer that owns the memory,
	// reachable (so that the parent's garbage-collection backstop cannot
	// free the memory under the view) and is closed on its own.
	parent     *Buffer[T]
	viewClosed atomic.Bool
	ipc        *IPCMemHandle  // the handle it was opened with (OpenIPCBuffer), nil for memory of this process
	pool       *SharedPool    // the shared pool it is an allocation of (AllocFromPool, OpenPoolBuffer), or nil
	poolPtr    *PoolPtrHandle // the handle it was opened with (OpenPoolBuffer)
}

// Alloc allocates device memory for n values of type T on d
// (cuMemAlloc). Its contents are undefined until written: CopyFrom, or a
// kernel. n may be 0: the Buffer then holds no memory (Ptr is 0). A
// negative n, or one whose bytes do not fit an int, is refused with
// ErrInvalidOptions, and an element type with Go pointers or without a
// size with ErrInvalidType, before the driver is called.
func Alloc[T any](d *Device, n int) (*Buffer[T], error) {
	const op = "allocate device memory"
	size, err := enterAlloc[T](d, op, n)
	if err != nil {
		return nil, err
	}
	defer d.h.Exit()
	d.p.life.Throttle()
	var ptr driver.DevicePtr
	if n > 0 {
		var err error
		if ptr, err = driver.MemAllocCtx(d.p.ctx, uint64(n*size)); err != nil {
			e := driverErr(op, err)
			if x, ok := e.(*Error); ok && errors.Is(err, driver.ErrorOutOfMemory) {
				x.Detail = fmt.Sprintf("the device has no %d bytes free for %d values of %s", n*size, n, reflect.TypeFor[T]())
				x.Fix = "close buffers you no longer use, or allocate less"
			}
			return nil, e
		}
	}
	r, err := d.register(op, "device", uintptr(ptr), kindMemory, func() {
		if n > 0 {
			_ = driver.MemFreeCtx(d.p.ctx, ptr)
		}
	})
	if err != nil {
		return nil, err
	}
	return wrap(&Buffer[T]{ptr: ptr, n: n}, d, r, false), nil
}

// AdoptBuffer wraps n values of T in device memory allocated elsewhere
// (another library's cuMemAlloc or cuMemAllocAsync) in d's context, at
// ptr, as a Buffer: copies, Set, Slice, Arg and the rest work on it as on
// Alloc's. Close releases the wrapper and never frees the memory, which its
// owner frees after closing the wrapper; closing d closes the wrapper.
// Before wrapping, the driver is asked for the allocation holding ptr
// (cuMemGetAddressRange): a ptr in none returns the driver's error, and n
// values reaching past the allocation's end are refused with
// ErrInvalidOptions, as Alloc's refusals are; a 0 ptr is refused with
// ErrInvalid. n may be 0 (the Buffer then holds no memory).
func AdoptBuffer[T any](d *Device, ptr driver.DevicePtr, n int) (*Buffer[T], error) {
	const op = "adopt device memory"
	size, err := enterAlloc[T](d, op, n)
	if err != nil {
		return nil, err
	}
	defer d.h.Exit()
	if ptr == 0 {
		return nil, &Error{Op: op, Detail: "the device pointer is 0", Fix: "pass memory from cuMemAlloc or cuMemAllocAsync", Err: ErrInvalid}
	}
	if n > 0 {
		base, bytes, err := driver.MemGetAddressRangeCtx(d.p.ctx, ptr)
		if err != nil {
			return nil, driverErr(op, err)
		}
		if end := uint64(ptr-base) + uint64(n)*uint64(size); end > bytes {
			return nil, &Error{Op: op, Detail: fmt.Sprintf("%d values of %d bytes at %#x reach %d bytes past the end of its allocation (%d bytes at %#x)", n, size, uint64(ptr), end-bytes, bytes, uint64(base)),
				Fix: "pass the number of values the memory holds", Err: ErrInvalidOptions}
		}
	}
	r, err := d.adoptHandle(op, uintptr(ptr))
	if err != nil {
		return nil, err
	}
	return wrap(&Buffer[T]{ptr: ptr, n: n}, d, r, true), nil
}

// AllocFrom allocates a Buffer of len(src) values on d and copies src into
// it: Alloc, then CopyFrom (the buffer is closed if the copy fails).
func AllocFrom[T any](d *Device, src []T) (*Buffer[T], error) {
	b, err := Alloc[T](d, len(src))
	return orClose(b, err, func(b *Buffer[T]) error { return b.CopyFrom(src) })
}

// allocSize checks an allocation of n values of T before anything is
// allocated (the element type, then n against the int range of its bytes)
// and returns the size of a T.
func allocSize[T any](op string, n int) (int, error) {
	if err := checkElem(op, reflect.TypeFor[T]()); err != nil {
		return 0, err
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	if n < 0 || n > math.MaxInt/size {
		return 0, &Error{Op: op, Detail: fmt.Sprintf("%d values of %d bytes: a length is from 0 to %d", n, size, math.MaxInt/size),
			Fix: "pass the number of values the buffer holds", Err: ErrInvalidOptions}
	}
	return size, nil
}

// enterAlloc is allocSize, then a call counted in on d (d.h.Exit ends it):
// an allocation's checks before the driver is called.
func enterAlloc[T any](d *Device, op string, n int) (int, error) {
	size, err := allocSize[T](op, n)
	if err != nil {
		return 0, err
	}
	return size, d.enter(op)
}

// plainElems caches checkElem's answer by type.
var plainElems atomic.Pointer[map[reflect.Type]bool]

// checkElem refuses an element type with Go pointers, no C layout or no
// size.
func checkElem(op string, t reflect.Type) error {
	if m := plainElems.Load(); m != nil && (*m)[t] {
		return nil
	}
	if t.Size() == 0 || !ctype.Plain(t) {
		return &Error{Op: op, Detail: fmt.Sprintf("the element type %s holds Go pointers, has no C layout or has size 0", t),
			Fix: "use numbers, bool, DevicePtr, or arrays and structs of them (device memory cannot hold Go pointers, slices, strings, maps or interfaces)", Err: ErrInvalidType}
	}
	next := map[reflect.Type]bool{t: true}
	if m := plainElems.Load(); m != nil {
		for k := range *m {
			next[k] = true
		}
	}
	plainElems.Store(&next) // a lost race drops an entry, asked again
	return nil
}

func (b *Buffer[T]) base() *object { return &b.object }

// operand is b's memory as an object of a call: a view's is its parent's.
func (b *Buffer[T]) operand() operand {
	if b == nil || b.r == nil {
		return operand{name: "buffer"}
	}
	if b.parent != nil {
		return operand{r: b.r, name: "viewed buffer"}
	}
	return operand{r: b.r, name: "buffer"}
}

// enter counts a call in on b's memory (b.r.Exit ends it); it fails once
// b, or a view's parent, is closed.
func (b *Buffer[T]) enter(op string) error {
	if err := b.operand().enter(op); err != nil {
		return err
	}
	if b.viewClosed.Load() {
		b.r.Exit()
		return closedErr(op, "buffer view")
	}
	return nil
}

// enterAs is enter with b named which ("source buffer") in errors.
func (b *Buffer[T]) enterAs(op, which string) error {
	if err := (operand{r: b.r, name: which}).enter(op); err != nil {
		return err
	}
	if b.viewClosed.Load() {
		b.r.Exit()
		return closedErr(op, which+" (a view)")
	}
	return nil
}

// Len is the number of values the buffer holds (0 for a nil Buffer).
func (b *Buffer[T]) Len() int { return nilOr(b, func(b *Buffer[T]) int { return b.n }) }

// Ptr is the device address of the buffer's first value: 0 for an empty,
// nil or closed Buffer (once Close has begun), so that a kernel given a
// closed buffer faults rather than writes memory allocated since.
func (b *Buffer[T]) Ptr() driver.DevicePtr {
	if b == nil || b.r == nil || b.r.Closed() || b.viewClosed.Load() {
		return 0
	}
	return b.ptr
}

// Arg is the buffer as a kernel argument: its device address (Ptr), for a
// parameter of type T* in the kernel. The kernel may use the memory until
// the buffer is closed: close it only once the work queued with it has
// completed.
func (b *Buffer[T]) Arg() driver.KernelArg { return driver.Arg(b.Ptr()) }

// Device is the Device the buffer was allocated through (nil for a nil
// Buffer).
func (b *Buffer[T]) Device() *Device { return objectOf(b).dev }

// String describes the buffer.
func (b *Buffer[T]) String() string {
	if b == nil || b.r == nil {
		return "cuda buffer <invalid>"
	}
	if b.parent != nil {
		return fmt.Sprintf("view of %d %v at %#x of a buffer of device %d", b.n, reflect.TypeFor[T](), uint64(b.ptr), b.p.ordinal)
	}
	return fmt.Sprintf("buffer of %d %v at %#x on device %d", b.n, reflect.TypeFor[T](), uint64(b.ptr), b.p.ordinal)
}

// bytesOf views s's values as bytes.
func bytesOf[T any](s []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// CopyFrom copies src, which must hold Len values, from host memory into
// the buffer, and returns once the values are in device memory, so that
// work queued afterwards on any stream reads them; Go memory is not kept.
// From a HostBuffer's memory (its Slice, or part of it) the copy engine
// reads the values directly (cuMemcpyHtoD), at its full speed (a closed
// HostBuffer's is refused with ErrClosed); from other
// memory they travel through page-locked staging memory of the context's
// (see CopyFromAsync), in chunks of 32 MiB: while the copy engine
// transfers one (cuMemcpyHtoDAsync), up to 16 goroutines (GOMAXPROCS at
// most) copy the next one in, each at least 1 MiB; they have done their
// parts when CopyFrom returns, and end. The transfers run on the legacy default stream: the copy starts
// after the work queued before on the context's blocking streams
// (DefaultStream, StreamOptions.Blocking), not after work on non-blocking
// streams (NewStream's default): synchronise those first. A length other
// than Len is refused with ErrMismatch before the driver is called.
func (b *Buffer[T]) CopyFrom(src []T) error {
	const op = "copy to device"
	return b.copyHost(op, "src", src, func(data []byte) error { return b.p.copyHtoD(op, b.ptr, data) })
}

// CopyTo copies the buffer's values into dst, which must hold Len values,
// and returns once they are there. Into a HostBuffer's memory the copy
// engine writes them directly (cuMemcpyDtoH); into other memory they
// travel as CopyFrom's do, the other way: up to 3 transfers of 32 MiB (cuMemcpyDtoHAsync) are queued
// ahead of the chunk that goroutines copy out of staging memory. Like
// CopyFrom it runs on the legacy default stream: it waits for the work
// queued before on the context's blocking streams, not for work on
// non-blocking streams (NewStream's default): synchronise those first. A
// length other than Len is refused with ErrMismatch before the driver is
// called.
func (b *Buffer[T]) CopyTo(dst []T) error {
	const op = "copy from device"
	return b.copyHost(op, "dst", dst, func(data []byte) error { return b.p.copyDtoH(op, data, b.ptr) })
}

// copyHost makes op, a copy between b and vals (a Go slice, named name in
// errors), with b entered: a length other than b's is refused, an empty b
// copies nothing, else transfer copies vals' bytes.
func (b *Buffer[T]) copyHost(op, name string, vals []T, transfer func(data []byte) error) error {
	if err := b.enter(op); err != nil {
		return err
	}
	defer b.r.Exit()
	if len(vals) != b.n {
		return b.lengthErr(op, name, len(vals))
	}
	if b.n == 0 {
		return nil
	}
	return transfer(bytesOf(vals))
}

func (b *Buffer[T]) lengthErr(op, name string, n int) error {
	return &Error{Op: op, Detail: fmt.Sprintf("%s holds %d values, and the buffer %d", name, n, b.n),
		Fix: "pass a slice of Len values (reslice it, or allocate a buffer of its length)", Err: ErrMismatch}
}

// Close frees the memory. It never blocks, never waits for another
// goroutine and calls the driver for nothing, and is idempotent: copies in
// flight on the buffer finish normally, and the package's flusher goroutine
// frees the memory once none holds it. Work already queued that uses the
// memory (a kernel given Arg) must complete first: close the buffer after
// synchronising that work. The Close of a view (Slice) releases the view
// only, never the memory; the Close of the buffer that owns the memory
// closes its views too (their calls return ErrClosed). It returns nil; a
// nil Buffer returns an error matching ErrInvalid.
func (b *Buffer[T]) Close() error {
	if b != nil && b.r != nil && b.parent != nil { // a view: closes itself only
		b.viewClosed.Store(true)
		return nil
	}
	return objectOf(b).close("free device memory", "buffer")
}
