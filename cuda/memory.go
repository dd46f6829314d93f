package cuda

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Slice is a view of the values [from, to) of b: a Buffer of to-from
// values at b's address plus from values, sharing b's memory (cudarc's
// CudaSlice::slice). It copies, sets and passes as a kernel argument like
// any Buffer, and is usable while b is: once b (the buffer that owns the
// memory, for a view of a view) is closed, the view's calls return
// ErrClosed. The view's Close releases the view only and never frees the
// memory. A range outside 0 <= from <= to <= Len is refused with
// ErrInvalidOptions.
func (b *Buffer[T]) Slice(from, to int) (*Buffer[T], error) {
	const op = "slice buffer"
	if err := b.enter(op); err != nil {
		return nil, err
	}
	defer b.r.Exit()
	if from < 0 || from > to || to > b.n {
		return nil, &Error{Op: op, Detail: fmt.Sprintf("the range [%d, %d) is outside the buffer's %d values", from, to, b.n),
			Fix: "pass 0 <= from <= to <= Len", Err: ErrInvalidOptions}
	}
	owner := b
	if b.parent != nil {
		owner = b.parent
	}
	var zero T
	return &Buffer[T]{ptr: b.ptr + driver.DevicePtr(from*int(unsafe.Sizeof(zero))), n: to - from, object: object{p: b.p, dev: b.dev, r: b.r}, parent: owner}, nil
}

// memsetPattern is how the driver's memset sets v: as count values of
// esize (1, 2 or 4) bytes each equal to value; ok false where v's bytes do
// not repeat every 1, 2 or 4 bytes.
func memsetPattern[T any](v *T, n int) (value uint32, esize, count int, ok bool) {
	size := int(unsafe.Sizeof(*v))
	bs := unsafe.Slice((*byte)(unsafe.Pointer(v)), size)
	repeats := func(k int) bool {
		if size%k != 0 {
			return false
		}
		for i := k; i < size; i++ {
			if bs[i] != bs[i-k] {
				return false
			}
		}
		return true
	}
	switch {
	case repeats(1):
		return uint32(bs[0]), 1, n * size, true
	case repeats(2):
		return uint32(bs[0]) | uint32(bs[1])<<8, 2, n * size / 2, true
	case repeats(4):
		return uint32(bs[0]) | uint32(bs[1])<<8 | uint32(bs[2])<<16 | uint32(bs[3])<<24, 4, n * size / 4, true
	}
	return 0, 0, 0, false
}

// memset queues the driver's memset of b to v on stream h (0: the legacy
// default stream).
func (b *Buffer[T]) memset(op string, v T, h driver.Stream) error {
	value, esize, count, ok := memsetPattern(&v, b.n)
	if !ok {
		return &Error{Op: op, Detail: fmt.Sprintf("a %s value whose %d bytes do not repeat every 1, 2 or 4 bytes: the driver's memset writes only such patterns", reflect.TypeFor[T](), unsafe.Sizeof(v)),
			Fix: "copy a slice of the value with CopyFrom instead", Err: ErrInvalidOptions}
	}
	var err error
	switch esize { // little-endian, as the value's bytes lie in memory
	case 1:
		err = driver.MemsetD8AsyncCtx(b.p.ctx, b.ptr, uint8(value), uint64(count), h)
	case 2:
		err = driver.MemsetD16AsyncCtx(b.p.ctx, b.ptr, uint16(value), uint64(count), h)
	default:
		err = driver.MemsetD32AsyncCtx(b.p.ctx, b.ptr, value, uint64(count), h)
	}
	return driverErr(op, err)
}

// Set sets every value of b to v with the driver's memset, and returns once
// the values are in device memory. Like CopyFrom it runs on the legacy
// default stream (after the work queued before on the context's blocking
// streams, not on non-blocking ones: synchronise those first). v's bytes
// must repeat every 1, 2 or 4 bytes, as every number's do for 0, a
// float32's and an int32's always do, and a struct's of equal float32
// fields: other values are refused with ErrInvalidOptions before the driver
// is called (copy them with CopyFrom).
func (b *Buffer[T]) Set(v T) error {
	const op = "set device memory"
	if err := b.enter(op); err != nil {
		return err
	}
	defer b.r.Exit()
	if b.n == 0 {
		return nil
	}
	if err := b.memset(op, v, 0); err != nil {
		return err
	}
	return driverErr(op+" (wait for the memset)", driver.StreamSynchronizeCtx(b.p.ctx, 0))
}

// SetAsync queues on s the setting of every value of b to v, as Set does,
// and returns at once: work queued on s afterwards sees the values. During
// a capture of s it is captured as a memset node. s must be of b's context
// (ErrWrongDevice).
func (b *Buffer[T]) SetAsync(s *Stream, v T) error {
	const op = "set device memory on a stream"
	if err := b.enterWith(op, s, nil); err != nil {
		return err
	}
	defer b.r.Exit()
	defer s.r.Exit()
	if b.n == 0 {
		return nil
	}
	return b.memset(op, v, s.h)
}

// enterWith enters b and s (s.r.Exit and b.r.Exit end them), and checks
// that s is of b's context, or of other's where other is not nil (the
// other buffer of a copy).
func (b *Buffer[T]) enterWith(op string, s *Stream, other *ctxState) error {
	if s == nil || s.r == nil {
		return invalidErr(op, "stream")
	}
	if err := b.enter(op); err != nil {
		return err
	}
	if err := s.enter(op); err != nil {
		b.r.Exit()
		return err
	}
	if b.p != s.p && b.p.ctx != s.p.ctx && (other == nil || other != s.p && other.ctx != s.p.ctx) {
		s.r.Exit()
		b.r.Exit()
		return &Error{Op: op, Detail: whose("the buffer", b.p, "the stream", s.p),
			Fix: "use a stream of the buffer's device (Buffer.Device)", Err: ErrWrongDevice}
	}
	return nil
}

// notCapturing refuses a copy through staging memory into a stream being
// captured: the graph would copy the package's staging memory at each
// launch, long after the call.
func notCapturing(op string, s *Stream) error {
	return s.refuseCapture(op, "is being captured, and a copy from or to a Go slice cannot be replayed (its page-locked staging memory is the package's, reused once the copy is done)",
		"copy before the capture, or capture copies between buffers and kernels only", driver.ErrorStreamCaptureUnsupported)
}

// CopyFromAsync copies src, which must hold Len values, into b on s: it
// copies src into page-locked staging memory of the package's, queues the
// transfer from there on s (cuMemcpyHtoDAsync) and returns; src may be
// changed or reused at once, and work queued on s afterwards sees the
// values. The staging memory is the context's, reused once the transfer
// is done, and freed with the context. A length other than Len is
// refused with ErrMismatch, a stream of another context with
// ErrWrongDevice, and a stream being captured with an error matching
// driver.ErrorStreamCaptureUnsupported, before anything is queued.
func (b *Buffer[T]) CopyFromAsync(s *Stream, src []T) error {
	const op = "copy to device on a stream"
	return b.copyStaged(op, s, "src", src, func(st *staging, data []byte) error {
		parallelCopy(st.p.Bytes(len(data)), data)
		if err := driver.MemcpyHtoDAsyncCtx(b.p.ctx, b.ptr, st.p, uint64(len(data)), s.h); err != nil {
			b.p.unstage(st)
			return driverErr(op, err)
		}
		b.p.unstageAfter(st, s.h)
		return nil
	})
}

// CopyToAsync queues on s the copy of b's values into dst, which must hold
// Len values, and returns: the values are in dst once the work queued on
// s up to here has completed (s.Sync, or an event recorded on s after it:
// Event.Wait); until then dst must be neither read nor written. The
// transfer goes through page-locked staging memory of the package's
// (cuMemcpyDtoHAsync), from which a host function queued after it on s
// (cuLaunchHostFunc) copies the values into dst: work queued on s
// afterwards starts once dst holds them. dst stays reachable until then.
// The refusals are CopyFromAsync's.
func (b *Buffer[T]) CopyToAsync(s *Stream, dst []T) error {
	const op = "copy from device on a stream"
	return b.copyStaged(op, s, "dst", dst, func(st *staging, data []byte) error {
		if err := driver.MemcpyDtoHAsyncCtx(b.p.ctx, st.p, b.ptr, uint64(len(data)), s.h); err != nil {
			b.p.unstage(st)
			return driverErr(op, err)
		}
		p := b.p
		if err := driver.LaunchHostFuncGoCtx(p.ctx, s.h, func() {
			parallelCopy(data, st.p.Bytes(len(data)))
			p.unstage(st) // no driver call: a host function must make none
		}); err != nil {
			p.unstageAfter(st, s.h)
			return driverErr(op, err)
		}
		return nil
	})
}

// copyStaged makes op, a copy between b and vals (a Go slice, named name in
// errors) on s through staging memory, with b and s entered: a stream of
// another context, a length other than b's and a capturing stream are
// refused, an empty b copies nothing, else queue queues the transfer of
// vals' bytes through st, staging memory of at least as many.
func (b *Buffer[T]) copyStaged(op string, s *Stream, name string, vals []T, queue func(st *staging, data []byte) error) error {
	if err := b.enterWith(op, s, nil); err != nil {
		return err
	}
	defer b.r.Exit()
	defer s.r.Exit()
	if len(vals) != b.n {
		return b.lengthErr(op, name, len(vals))
	}
	if b.n == 0 {
		return nil
	}
	if err := notCapturing(op, s); err != nil {
		return err
	}
	data := bytesOf(vals)
	st, err := b.p.stage(op, len(data))
	if err != nil {
		return err
	}
	return queue(st, data)
}

// staging is page-locked host memory of a context, for the asynchronous
// copies from and to Go slices, with a private event recorded after the
// last transfer that reads it.
type staging struct {
	p       driver.HostPtr
	size    int
	ev      driver.Event
	pending bool // ev was recorded after a transfer that may not be done
}

// stagingPool is a context's idle staging memory (ctxState.staging).
type stagingPool struct {
	mu   sync.Mutex
	idle []*staging
}

// maxIdleStaging bounds the idle staging buffers a context keeps.
const maxIdleStaging = 4

// stage returns staging memory of at least size bytes that no transfer
// uses: an idle one whose transfer is done, else a new one (cuMemHostAlloc,
// in steps of 64 KiB).
func (p *ctxState) stage(op string, size int) (*staging, error) {
	sp := &p.staging
	sp.mu.Lock()
	var st *staging
	for i, x := range sp.idle {
		if x.size >= size {
			st = x
			sp.idle = append(sp.idle[:i], sp.idle[i+1:]...)
			break
		}
	}
	sp.mu.Unlock()
	if st != nil {
		if !st.pending || driver.EventQueryCtx(p.ctx, st.ev) == nil {
			st.pending = false
			return st, nil
		}
		p.unstage(st) // its transfer is under way: another
	}
	if size > math.MaxInt-(64<<10) {
		return nil, &Error{Op: op, Detail: fmt.Sprintf("%d bytes of staging memory", size), Fix: "copy less at once", Err: ErrInvalidOptions}
	}
	alloc := (size + 64<<10 - 1) / (64 << 10) * (64 << 10)
	h, err := driver.MemHostAllocCtx(p.ctx, uint64(alloc), 0)
	if err != nil {
		e := driverErr(op+": allocate page-locked staging memory", err)
		if x, ok := e.(*Error); ok && errors.Is(err, driver.ErrorOutOfMemory) {
			x.Fix = "copy less at once, or free page-locked memory"
		}
		return nil, e
	}
	ev, err := driver.EventCreateCtx(p.ctx, driver.EventDisableTiming)
	if err != nil {
		_ = driver.MemFreeHostCtx(p.ctx, h)
		return nil, driverErr(op+": create the staging memory's event", err)
	}
	return &staging{p: h, size: alloc, ev: ev}, nil
}

// unstageAfter records st's event on stream h, after the transfer that
// uses st, and makes st idle: it is reused once the event completes.
func (p *ctxState) unstageAfter(st *staging, h driver.Stream) {
	if driver.EventRecordCtx(p.ctx, st.ev, h) != nil {
		// Its transfer's end cannot be told: it is freed after the
		// context's work (the free waits for it).
		p.later(func() { p.freeStaging(st) })
		return
	}
	st.pending = true
	p.unstage(st)
}

// unstage makes st idle, or frees it (later, off the caller's path) if
// enough are idle. It makes no driver call: a host function calls it.
func (p *ctxState) unstage(st *staging) {
	sp := &p.staging
	sp.mu.Lock()
	if len(sp.idle) < maxIdleStaging {
		sp.idle = append(sp.idle, st)
		st = nil
	}
	sp.mu.Unlock()
	if st != nil {
		p.later(func() { p.freeStaging(st) })
	}
}

// freeStaging frees st once its transfer is done. On the context's slow
// calls.
func (p *ctxState) freeStaging(st *staging) {
	if st.pending {
		_ = driver.EventSynchronizeCtx(p.ctx, st.ev)
	}
	_ = driver.EventDestroyCtx(p.ctx, st.ev)
	_ = driver.MemFreeHostCtx(p.ctx, st.p)
}

// freeAllStaging frees the idle staging memory, as the context is
// released. On the context's slow calls.
func (p *ctxState) freeAllStaging() {
	sp := &p.staging
	sp.mu.Lock()
	idle := sp.idle
	sp.idle = nil
	sp.mu.Unlock()
	for _, st := range idle {
		p.freeStaging(st)
	}
}

// AllocAsync allocates device memory for n values of type T from the
// device's default memory pool, ordered on s (cuMemAllocAsync): the memory
// is usable by the work queued on s from now on, and by work on other
// streams once ordered after s (Stream.WaitStream, or s.Sync: the
// synchronous copies, CopyFrom and CopyTo, run on the legacy default
// stream, which does not wait for a non-blocking s). Close gives it back to
// the pool (cuMemFreeAsync on the legacy default stream) once no call
// holds it; as for Alloc's buffers, close it only after the work that uses
// it has completed. The refusals are Alloc's, and a stream being captured
// is refused with an error matching driver.ErrorStreamCaptureUnsupported
// (a captured allocation belongs to the graph).
func AllocAsync[T any](s *Stream, n int) (*Buffer[T], error) {
	const op = "allocate device memory on a stream"
	size, err := allocSize[T](op, n)
	if err != nil {
		return nil, err
	}
	if err := s.enter(op); err != nil {
		return nil, err
	}
	defer s.r.Exit()
	if err := notCapturing(op, s); err != nil {
		return nil, err
	}
	d, p := s.dev, s.p
	p.life.Throttle()
	var ptr driver.DevicePtr
	if n > 0 {
		var err error
		if ptr, err = driver.MemAllocAsyncCtx(p.ctx, uint64(n*size), s.h); err != nil {
			e := driverErr(op, err)
			if x, ok := e.(*Error); ok && errors.Is(err, driver.ErrorOutOfMemory) {
				x.Detail = fmt.Sprintf("the device's pool has no %d bytes for %d values of %s", n*size, n, reflect.TypeFor[T]())
				x.Fix = "close buffers you no longer use, or allocate less"
			}
			return nil, e
		}
	}
	return poolBuffer[T](op, d, s.h, ptr, n, nil, nil)
}

// CopyFromBuffer queues on s the copy of src's values into b, which must
// hold as many (Len), and returns: work queued on s afterwards sees them.
// Buffers of one context copy with cuMemcpyDtoDAsync (captured as a copy
// node during a capture of s); buffers of two devices, or of two contexts,
// with cuMemcpyPeerAsync, which goes over the devices' link once
// Device.EnablePeerAccess has turned access on between them (it returns
// whether it did), and is staged through host memory by the driver
// otherwise. s must be of b's or src's context
// (ErrWrongDevice). Another length is refused with ErrMismatch, and
// overlapping ranges of one memory (views) with ErrInvalidOptions, before
// anything is queued. Both buffers must stay open until the copy has
// completed, as for a kernel's arguments.
func (b *Buffer[T]) CopyFromBuffer(s *Stream, src *Buffer[T]) error {
	const op = "copy between buffers"
	if src == nil || src.r == nil {
		return invalidErr(op, "source buffer")
	}
	if err := b.enterWith(op, s, src.p); err != nil {
		return err
	}
	defer b.r.Exit()
	defer s.r.Exit()
	if err := src.enterAs(op, "source buffer"); err != nil {
		return err
	}
	defer src.r.Exit()
	if src.n != b.n {
		return b.lengthErr(op, "src", src.n)
	}
	if b.n == 0 {
		return nil
	}
	size := uint64(b.n) * uint64(unsafe.Sizeof(*new(T)))
	if b.p == src.p || b.p.ctx == src.p.ctx {
		if b.ptr < src.ptr+driver.DevicePtr(size) && src.ptr < b.ptr+driver.DevicePtr(size) {
			return &Error{Op: op, Detail: fmt.Sprintf("the ranges at %#x and %#x of %d bytes overlap", uint64(b.ptr), uint64(src.ptr), size),
				Fix: "copy between ranges that do not overlap (through a third buffer)", Err: ErrInvalidOptions}
		}
		return driverErr(op, driver.MemcpyDtoDAsyncCtx(s.p.ctx, b.ptr, src.ptr, size, s.h))
	}
	return driverErr(op, driver.MemcpyPeerAsyncCtx(s.p.ctx, b.ptr, b.p.ctx, src.ptr, src.p.ctx, size, s.h))
}
