package cuda

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// SharedPool is a memory pool of a device's whose allocations other
// processes map (cuMemPoolCreate with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR):
// the pool-based form of sharing memory, where IPCMemHandle is the
// allocation-based one. Its process allocates from it on a stream
// (AllocFromPool); it exports the pool once as a file descriptor
// (ExportFile), which reaches the other process as an open file does (an
// exec.Cmd's ExtraFiles, or a Unix socket's SCM_RIGHTS message:
// syscall.UnixRights); that process imports it (Device.ImportSharedPool),
// and then each allocation by its PoolPtrHandle, which travels as text like
// IPCMemHandle (OpenPoolBuffer). A file descriptor has no text form: it is
// the process's own.
//
// Close destroys the pool (cuMemPoolDestroy, which never waits: the driver
// releases the pool once its allocations are freed); so does the Close of
// the last open Device of its context. An imported pool's allocations must
// be closed in the importing process before the exporter frees them. The
// zero value and a nil *SharedPool are not usable: their methods return
// errors matching ErrInvalid.
type SharedPool struct {
	h driver.MemoryPool
	object
	imported bool
}

// NewSharedPool creates on d a memory pool whose allocations other
// processes can map. A device or driver that cannot share pools (Windows
// handles only, or no support for POSIX file descriptors: the device
// attribute CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES) gets the
// driver's error.
func (d *Device) NewSharedPool() (*SharedPool, error) {
	const op = "create shared memory pool"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	props := driver.MemPoolProps{AllocType: driver.MemAllocationTypePinned, HandleTypes: driver.MemHandleTypePosixFileDescriptor,
		Location: driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(d.p.ordinal)}}
	h, err := driver.MemPoolCreateCtx(d.p.ctx, &props)
	if err != nil {
		return nil, driverErr(op, err)
	}
	return d.adoptPool(op, h, false)
}

// adoptPool wraps a pool this package created or imported.
func (d *Device) adoptPool(op string, h driver.MemoryPool, imported bool) (*SharedPool, error) {
	r, err := d.register(op, "device", uintptr(h), kindSharedPool, func() { _ = driver.MemPoolDestroyCtx(d.p.ctx, h) })
	if err != nil {
		return nil, err
	}
	return wrap(&SharedPool{h: h, imported: imported}, d, r, false), nil
}

func (m *SharedPool) base() *object { return &m.object }

func (m *SharedPool) operand() operand { return operand{r: objectOf(m).r, name: "shared pool"} }

// Handle is the driver's pool (0 for a nil SharedPool). It stays valid
// until the pool is closed.
func (m *SharedPool) Handle() driver.MemoryPool {
	return nilOr(m, func(m *SharedPool) driver.MemoryPool { return m.h })
}

// Imported reports whether the pool is another process's, imported here.
func (m *SharedPool) Imported() bool { return m != nil && m.imported }

// Close destroys the pool; the driver keeps it until its allocations are
// freed. It never blocks, and is idempotent.
func (m *SharedPool) Close() error { return objectOf(m).close("close shared pool", "shared pool") }

// ExportFile exports the pool as a file descriptor of this process
// (cuMemPoolExportToShareableHandle), for another process to import with
// Device.ImportSharedPool; the caller closes the file once it has sent it.
// An imported pool is refused with ErrInvalidOptions.
func (m *SharedPool) ExportFile() (*os.File, error) {
	const op = "export shared pool"
	if err := m.operand().enter(op); err != nil {
		return nil, err
	}
	defer m.r.Exit()
	if m.imported {
		return nil, &Error{Op: op, Detail: "the pool was imported from another process", Fix: "export it in the process that created it", Err: ErrInvalidOptions}
	}
	fd, err := driver.MemPoolExportToShareableHandleOf(m.h, driver.MemHandleTypePosixFileDescriptorOf, 0)
	if err != nil {
		return nil, driverErr(op, err)
	}
	return os.NewFile(uintptr(fd), "cuda shared pool"), nil
}

// ImportSharedPool imports on d the pool another process exported
// (ExportFile) as the file f (cuMemPoolImportFromShareableHandle); f stays
// the caller's to close. d may be another GPU than the exporter's: it is
// given read and write access to the pool's memory (cuMemPoolSetAccess)
// where it has none, and the driver's refusal (GPUs that cannot reach each
// other) is the error.
func (d *Device) ImportSharedPool(f *os.File) (*SharedPool, error) {
	const op = "import shared pool"
	if f == nil {
		return nil, invalidErr(op, "file")
	}
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	fd := f.Fd()
	if fd > math.MaxInt32 {
		return nil, &Error{Op: op, Detail: fmt.Sprintf("file descriptor %d", fd), Fix: "pass the file the other process sent", Err: ErrInvalidOptions}
	}
	h, err := driver.MemPoolImportFromShareableHandleCtx(d.p.ctx, int32(fd), driver.MemHandleTypePosixFileDescriptor, 0)
	runtime.KeepAlive(f)
	if err != nil {
		return nil, driverErr(op, err)
	}
	// The pool's allocations are accessible from its own device; d, if
	// another, is given access (cuMemPoolSetAccess).
	loc := driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(d.p.ordinal)}
	flags, err := driver.MemPoolGetAccessCtx(d.p.ctx, h, &loc)
	if err == nil && flags != driver.MemAccessFlagsProtReadwrite {
		err = driver.MemPoolSetAccessCtx(d.p.ctx, h, []driver.MemAccessDesc{{Location: loc, Flags: driver.MemAccessFlagsProtReadwrite}})
	}
	if err != nil {
		_ = driver.MemPoolDestroyCtx(d.p.ctx, h)
		return nil, driverErr(op+": give the device access to the pool", err)
	}
	return d.adoptPool(op, h, true)
}

// AllocFromPool allocates n values of T from the shared pool m, ordered on
// s as AllocAsync's are (cuMemAllocFromPoolAsync); Close frees it as it
// frees AllocAsync's. n is from 1 (an empty allocation has nothing to
// share), s must be of m's context (ErrWrongDevice) and m not imported
// (ErrInvalidOptions: an imported pool maps its exporter's allocations,
// OpenPoolBuffer); the other refusals are AllocAsync's.
func AllocFromPool[T any](s *Stream, m *SharedPool, n int) (*Buffer[T], error) {
	const op = "allocate from shared pool"
	size := int(unsafe.Sizeof(*new(T)))
	if err := checkElem(op, reflect.TypeFor[T]()); err != nil {
		return nil, err
	}
	if n <= 0 || n > math.MaxInt/size {
		return nil, &Error{Op: op, Detail: fmt.Sprintf("%d values of %d bytes: a length is from 1 to %d", n, size, math.MaxInt/size),
			Fix: "pass the number of values the buffer holds", Err: ErrInvalidOptions}
	}
	if err := m.operand().enter(op); err != nil {
		return nil, err
	}
	defer m.r.Exit()
	if m.imported {
		return nil, &Error{Op: op, Detail: "the pool was imported from another process", Fix: "open its allocations with OpenPoolBuffer, or allocate from a pool of this process", Err: ErrInvalidOptions}
	}
	if err := s.enter(op); err != nil {
		return nil, err
	}
	defer s.r.Exit()
	if s.p != m.p && s.p.ctx != m.p.ctx {
		return nil, &Error{Op: op, Detail: whose("the pool", m.p, "the stream", s.p), Fix: "allocate on a stream of the pool's device", Err: ErrWrongDevice}
	}
	if err := notCapturing(op, s); err != nil {
		return nil, err
	}
	p := s.p
	p.life.Throttle()
	ptr, err := driver.MemAllocFromPoolAsyncCtx(p.ctx, uint64(n*size), m.h, s.h)
	if err != nil {
		return nil, driverErr(op, err)
	}
	return poolBuffer[T](op, s.dev, s.h, ptr, n, m, nil)
}

// poolBuffer wraps pool memory at ptr (0 for none) of d, allocated or
// imported on stream sh (AllocAsync's, an allocation of m, or an import of
// one: h), which Close frees with cuMemFreeAsync; where it cannot be
// wrapped, it is freed on sh.
func poolBuffer[T any](op string, d *Device, sh driver.Stream, ptr driver.DevicePtr, n int, m *SharedPool, h *PoolPtrHandle) (*Buffer[T], error) {
	r, err := d.register(op, "device", uintptr(ptr), kindPoolMemory, func() {
		if ptr != 0 {
			_ = driver.MemFreeAsyncCtx(d.p.ctx, ptr, sh)
		}
	})
	if err != nil {
		return nil, err
	}
	return wrap(&Buffer[T]{ptr: ptr, n: n, pool: m, poolPtr: h}, d, r, false), nil
}

// PoolPtrHandle names an allocation of a SharedPool for the processes that
// imported the pool (cuMemPoolExportPointer's 64 bytes), with its length in
// bytes: OpenPoolBuffer opens it there. It travels as text (MarshalText:
// "cupoolptr1:" and the length, 8 bytes little-endian, and the driver's 64
// bytes in unpadded base64url) or binary (MarshalBinary: "cupoolptr1", the
// length and the 64 bytes), as IPCMemHandle does, with the same errors.
// Handles are comparable.
type PoolPtrHandle struct {
	memHandle[driver.MemPoolPtrExportData]
}

var poolPtrForm = memHandleForm{magic: "cupoolptr", name: "PoolPtrHandle", op: "decode pool pointer handle", export: "Buffer.PoolPtrHandle", what: "allocation"}

// Driver returns the driver's export data, for C peers (cuMemPoolImportPointer).
func (h PoolPtrHandle) Driver() driver.MemPoolPtrExportData { return h.h }

// UnmarshalText sets h from its text form (encoding.TextUnmarshaler).
func (h *PoolPtrHandle) UnmarshalText(text []byte) error { return h.mem().unmarshalText(text) }

// UnmarshalBinary sets h from its binary form (encoding.BinaryUnmarshaler).
func (h *PoolPtrHandle) UnmarshalBinary(data []byte) error { return h.mem().unmarshalBinary(data) }

// mem is h's memHandle (nil for a nil h).
func (h *PoolPtrHandle) mem() *memHandle[driver.MemPoolPtrExportData] {
	return nilOr(h, func(h *PoolPtrHandle) *memHandle[driver.MemPoolPtrExportData] { return &h.memHandle })
}

// PoolPtrHandle exports b, an allocation of a SharedPool (AllocFromPool),
// for the processes that import the pool (cuMemPoolExportPointer); a
// Buffer opened from a handle returns that handle. Other memory, a view
// and an empty Buffer are refused with ErrInvalidOptions.
func (b *Buffer[T]) PoolPtrHandle() (PoolPtrHandle, error) {
	const op = "export pool allocation"
	return export(b, op, func() *PoolPtrHandle { return b.poolPtr }, func() (PoolPtrHandle, error) {
		if b.pool == nil {
			return PoolPtrHandle{}, &Error{Op: op, Detail: fmt.Sprintf("%v is not memory of a shared pool", b),
				Fix: "allocate the buffer to share with AllocFromPool (or share it with IPCHandle)", Err: ErrInvalidOptions}
		}
		data, err := driver.MemPoolExportPointerCtx(b.p.ctx, b.ptr)
		if err != nil {
			return PoolPtrHandle{}, driverErr(op, err)
		}
		return PoolPtrHandle{memHandle[driver.MemPoolPtrExportData]{h: data, size: uint64(b.n) * uint64(unsafe.Sizeof(*new(T)))}}, nil
	})
}

// OpenPoolBuffer maps in m's process the allocation h names, of the pool m
// was imported from (cuMemPoolImportPointer), as a Buffer of h.Size()
// bytes' values of T: a size that is no whole number of them is refused
// with ErrMismatch, the zero handle with ErrInvalid, a pool not imported
// with ErrInvalidOptions, before the driver is called. Its Close unmaps it
// (cuMemFreeAsync), which must happen before the exporter frees the
// allocation; the exporter orders its own work with the importer's
// through an IPC event (Event.IPCHandle).
func OpenPoolBuffer[T any](m *SharedPool, h PoolPtrHandle) (*Buffer[T], error) {
	const op = "open pool allocation"
	n, err := openLen[T](op, h.memHandle)
	if err != nil {
		return nil, err
	}
	if err := m.operand().enter(op); err != nil {
		return nil, err
	}
	defer m.r.Exit()
	if !m.imported {
		return nil, &Error{Op: op, Detail: "the pool is this process's own", Fix: "open allocations in a process that imported the pool (Device.ImportSharedPool)", Err: ErrInvalidOptions}
	}
	d := m.dev
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	d.p.life.Throttle()
	data := h.h
	ptr, err := driver.MemPoolImportPointerCtx(d.p.ctx, m.h, &data)
	if err != nil {
		return nil, driverErr(op, err)
	}
	return poolBuffer[T](op, d, 0, ptr, n, m, &h)
}
