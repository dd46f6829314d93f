package cuda

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// IPCMemHandle names a Buffer's device memory for another process
// (cuIpcGetMemHandle) with the memory's length in bytes, so that the other
// process opens it as a Buffer of as many bytes (OpenIPCBuffer), on the
// exporter's GPU or another. Like IPCEventHandle it travels as text
// (MarshalText: "cuipcmem1:" and the length, 8 bytes little-endian, and
// the driver's 64 bytes in unpadded base64url, 106 characters) or binary
// (MarshalBinary: "cuipcmem1", the length and the driver's handle, 81
// bytes); any other input to UnmarshalText or UnmarshalBinary is an error
// matching ErrMalformedHandle that leaves the handle unchanged. The zero
// value is refused by OpenIPCBuffer. Handles are comparable.
type IPCMemHandle struct {
	memHandle[driver.IPCMemHandle]
}

// ipcMemForm is IPCMemHandle's text and binary form.
var ipcMemForm = memHandleForm{magic: "cuipcmem", name: "IPCMemHandle", op: "decode IPC memory handle", export: "Buffer.IPCHandle", what: "memory"}

// NewIPCMemHandle makes a handle of the driver's handle h (from C's
// cuIpcGetMemHandle) and the exported memory's length in bytes.
func NewIPCMemHandle(h driver.IPCMemHandle, size uint64) IPCMemHandle {
	return IPCMemHandle{memHandle[driver.IPCMemHandle]{h: h, size: size}}
}

// Driver returns the driver's handle, for C peers (cuIpcOpenMemHandle).
func (h IPCMemHandle) Driver() driver.IPCMemHandle { return h.h }

// UnmarshalText sets h from its text form (encoding.TextUnmarshaler).
func (h *IPCMemHandle) UnmarshalText(text []byte) error { return h.mem().unmarshalText(text) }

// UnmarshalBinary sets h from its binary form (encoding.BinaryUnmarshaler).
func (h *IPCMemHandle) UnmarshalBinary(data []byte) error { return h.mem().unmarshalBinary(data) }

// mem is h's memHandle (nil for a nil h).
func (h *IPCMemHandle) mem() *memHandle[driver.IPCMemHandle] {
	return nilOr(h, func(h *IPCMemHandle) *memHandle[driver.IPCMemHandle] { return &h.memHandle })
}

// memHandle is what IPCMemHandle and PoolPtrHandle hold, a handle of
// device memory for another process: the driver's 64 bytes (D, which picks
// the form: memHandleForm) and the memory's length in bytes. Its methods
// are theirs, promoted, but for the decoders, which theirs call through
// mem, so that a nil pointer reaches them and is refused.
type memHandle[D memDriverHandle] struct {
	h    D
	size uint64
}

// memDriverHandle is the driver's 64 bytes of a memHandle.
type memDriverHandle interface {
	driver.IPCMemHandle | driver.MemPoolPtrExportData
}

// memBytes is the layout of every memDriverHandle.
type memBytes = struct{ Reserved [64]byte }

// memHandleForm is the text and binary form of a memHandle. Text: magic,
// "1:", and the length (8 bytes little-endian) and the 64 bytes in
// unpadded base64url; binary: magic, "1", the length and the 64 bytes.
type memHandleForm struct {
	magic  string // "cuipcmem"
	name   string // the Go type, in messages
	op     string // the decode's operation, in errors
	export string // the method that makes one ("Buffer.IPCHandle"), in messages
	what   string // what its length is of ("memory"), in messages
}

const memHandlePayload = 8 + 64

func (f memHandleForm) textLen() int {
	return len(f.magic) + 2 + ipcEncoding.EncodedLen(memHandlePayload)
}
func (f memHandleForm) binLen() int { return len(f.magic) + 1 + memHandlePayload }

// form is the form of D's handles.
func (*memHandle[D]) form() memHandleForm {
	if _, ok := any(*new(D)).(driver.IPCMemHandle); ok {
		return ipcMemForm
	}
	return poolPtrForm
}

// payload is what both forms hold after their prefix: the length and the
// 64 bytes.
func (h memHandle[D]) payload() [memHandlePayload]byte {
	var b [memHandlePayload]byte
	binary.LittleEndian.PutUint64(b[:8], h.size)
	data := memBytes(h.h)
	copy(b[8:], data.Reserved[:])
	return b
}

// setPayload sets h from a payload.
func (h *memHandle[D]) setPayload(p []byte) {
	var data memBytes
	copy(data.Reserved[:], p[8:])
	h.h, h.size = D(data), binary.LittleEndian.Uint64(p[:8])
}

// Size is the memory's length in bytes: the exported memory's
// (IPCMemHandle), the allocation's (PoolPtrHandle).
func (h memHandle[D]) Size() uint64 { return h.size }

// AppendText appends the text form of h to b (encoding.TextAppender).
func (h memHandle[D]) AppendText(b []byte) ([]byte, error) {
	f := h.form()
	if b == nil {
		b = make([]byte, 0, f.textLen())
	}
	p := h.payload()
	return ipcEncoding.AppendEncode(append(b, f.magic+"1:"...), p[:]), nil
}

// MarshalText returns the text form of h (encoding.TextMarshaler).
func (h memHandle[D]) MarshalText() ([]byte, error) { return h.AppendText(nil) }

// String returns the text form of h.
func (h memHandle[D]) String() string {
	b, _ := h.MarshalText()
	return string(b)
}

// AppendBinary appends the binary form of h to b (encoding.BinaryAppender).
func (h memHandle[D]) AppendBinary(b []byte) ([]byte, error) {
	f := h.form()
	if b == nil {
		b = make([]byte, 0, f.binLen())
	}
	p := h.payload()
	return append(append(b, f.magic+"1"...), p[:]...), nil
}

// MarshalBinary returns the binary form of h (encoding.BinaryMarshaler).
func (h memHandle[D]) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }

// unmarshalText sets h from text, or leaves it and returns an error
// matching ErrMalformedHandle.
func (h *memHandle[D]) unmarshalText(text []byte) error {
	f := h.form()
	if h == nil {
		return nilHandlePtrErr(f.op)
	}
	v, n, ok := ipcPrefixVersion(text, f.magic, ':')
	switch {
	case !ok:
		return &Error{Op: f.op, Detail: fmt.Sprintf("the text %s does not start with %q", quoteShort(text), f.magic+"1:"),
			Fix: "pass the text " + f.name + ".MarshalText made", Err: ErrMalformedHandle}
	case v != 1:
		return &Error{Op: f.op, Detail: fmt.Sprintf("the handle is of encoding version %d, and this package knows version 1", v),
			Fix: "upgrade this program's cudagen module to the exporter's", Err: ErrMalformedHandle}
	case len(text) != f.textLen():
		return &Error{Op: f.op, Detail: fmt.Sprintf("the text is %d characters long, not %d (truncated or extended)", len(text), f.textLen()),
			Fix: "pass the whole text " + f.name + ".MarshalText made", Err: ErrMalformedHandle}
	}
	var buf [memHandlePayload]byte
	if m, err := ipcEncoding.Decode(buf[:], text[n:]); err != nil || m != len(buf) {
		return &Error{Op: f.op, Detail: fmt.Sprintf("the text after the prefix is not unpadded base64url: %v", err),
			Fix: "pass the text " + f.name + ".MarshalText made, unchanged", Err: ErrMalformedHandle}
	}
	h.setPayload(buf[:])
	return nil
}

// unmarshalBinary is unmarshalText for the binary form.
func (h *memHandle[D]) unmarshalBinary(b []byte) error {
	f := h.form()
	if h == nil {
		return nilHandlePtrErr(f.op)
	}
	v, n, ok := ipcPrefixVersion(b, f.magic, 0)
	if !ok || v != 1 || len(b) != f.binLen() {
		return &Error{Op: f.op, Detail: fmt.Sprintf("got %d bytes that are not a version 1 handle's binary form (%d bytes starting with %q)", len(b), f.binLen(), f.magic+"1"),
			Fix: "pass the bytes " + f.name + ".MarshalBinary made, whole", Err: ErrMalformedHandle}
	}
	h.setPayload(b[n:])
	return nil
}

// IPCHandle exports b's memory for another process (cuIpcGetMemHandle),
// which opens it with OpenIPCBuffer and sees and writes the same memory
// (order the two processes' work with an IPC event: Event.IPCHandle). b
// must stay open while the other process uses it: its Close frees the
// memory. A view (Slice), a Buffer of AllocAsync or AllocFromPool (pool
// memory, which the driver exports otherwise: PoolPtrHandle for a shared
// pool's) and an empty Buffer are refused with ErrInvalidOptions; a Buffer opened from a handle returns that handle, to
// pass on.
func (b *Buffer[T]) IPCHandle() (IPCMemHandle, error) {
	const op = "export buffer memory"
	return export(b, op, func() *IPCMemHandle { return b.ipc }, func() (IPCMemHandle, error) {
		switch {
		case b.pool != nil:
			return IPCMemHandle{}, &Error{Op: op, Detail: fmt.Sprintf("%v is memory of a shared pool, which cuIpcGetMemHandle does not export", b),
				Fix: "share it with Buffer.PoolPtrHandle, through the pool (SharedPool.ExportFile)", Err: ErrInvalidOptions}
		case b.r.Kind == kindPoolMemory:
			return IPCMemHandle{}, &Error{Op: op, Detail: fmt.Sprintf("%v is pool memory (AllocAsync), which cuIpcGetMemHandle does not export", b),
				Fix: "allocate the buffer to share with Alloc", Err: ErrInvalidOptions}
		case b.n == 0:
			return IPCMemHandle{}, &Error{Op: op, Detail: "the buffer is empty: it holds no memory to export", Fix: "export a buffer of at least one value", Err: ErrInvalidOptions}
		}
		h, err := driver.IPCGetMemHandleCtx(b.p.ctx, b.ptr)
		if err != nil {
			return IPCMemHandle{}, driverErr(op, err)
		}
		return NewIPCMemHandle(h, uint64(b.n)*uint64(unsafe.Sizeof(*new(T)))), nil
	})
}

// export is op, the export of b's memory for another process as a handle
// of type H, with b entered: a Buffer opened from a handle (opened, nil
// for memory of this process) returns that handle, a view is refused (the
// driver exports whole allocations), and get exports the rest (or refuses
// it).
func export[H, T any](b *Buffer[T], op string, opened func() *H, get func() (H, error)) (H, error) {
	var none H
	if err := b.enter(op); err != nil {
		return none, err
	}
	defer b.r.Exit()
	if h := opened(); h != nil {
		return *h, nil
	}
	if b.parent != nil {
		return none, &Error{Op: op, Detail: fmt.Sprintf("%v is a view: the driver exports whole allocations", b),
			Fix: "export the buffer the view is of, and take the view in the other process", Err: ErrInvalidOptions}
	}
	return get()
}

// OpenIPCBuffer opens in d's context the memory another process exported
// (cuIpcOpenMemHandle, with CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, so that
// d may be another GPU than the exporter's) as a Buffer of h.Size() bytes'
// values of T; a size that is no whole number of them is refused with
// ErrMismatch, the zero handle with ErrInvalid, before the driver is
// called. The driver refuses a handle of the same process. The Buffer's
// Close unmaps the memory in this process (cuIpcCloseMemHandle, on the
// context's own goroutine, as a free); the exporter's Buffer owns it and
// must stay open meanwhile.
func OpenIPCBuffer[T any](d *Device, h IPCMemHandle) (*Buffer[T], error) {
	const op = "open IPC buffer"
	n, err := openLen[T](op, h.memHandle)
	if err != nil {
		return nil, err
	}
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	d.p.life.Throttle()
	dh := h.h
	ptr, err := driver.IPCOpenMemHandleCtx(d.p.ctx, &dh, driver.IPCMemLazyEnablePeerAccess)
	if err != nil {
		return nil, driverErr(op, err)
	}
	r, err := d.register(op, "device", uintptr(ptr), kindIPCMemory, func() { _ = driver.IPCCloseMemHandleCtx(d.p.ctx, ptr) })
	if err != nil {
		return nil, err
	}
	return wrap(&Buffer[T]{ptr: ptr, n: n, ipc: &h}, d, r, false), nil
}

// openLen is the number of values of T in the memory h names, for op, its
// opening as a Buffer[T], before anything is called: T must be a type
// Alloc takes, h not the zero handle (ErrInvalid), and its length a whole
// number of T's that an int counts (ErrMismatch).
func openLen[T any, D memDriverHandle](op string, h memHandle[D]) (int, error) {
	f := h.form()
	size := uint64(unsafe.Sizeof(*new(T)))
	if err := checkElem(op, reflect.TypeFor[T]()); err != nil {
		return 0, err
	}
	if h == (memHandle[D]{}) {
		return 0, &Error{Op: op, Detail: "the handle is the zero " + f.name, Fix: "pass a handle " + f.export + " made", Err: ErrInvalid}
	}
	if h.size%size != 0 || h.size/size > uint64(maxLen(size)) {
		return 0, &Error{Op: op, Detail: fmt.Sprintf("the %s's %d bytes are no whole number of %d-byte %s values", f.what, h.size, size, reflect.TypeFor[T]()),
			Fix: "open it with the element type it was exported with", Err: ErrMismatch}
	}
	return int(h.size / size), nil
}

// maxLen is the most values of size bytes an int counts in bytes.
func maxLen(size uint64) int { return int(uint64(^uint(0)>>1) / size) }
