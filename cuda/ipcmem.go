package cuda

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
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
	h    driver.IPCMemHandle
	size uint64
}

// ipcMemForm is IPCMemHandle's text and binary form.
var ipcMemForm = memHandleForm{magic: "cuipcmem", name: "IPCMemHandle", op: "decode IPC memory handle"}

// NewIPCMemHandle makes a handle of the driver's handle h (from C's
// cuIpcGetMemHandle) and the exported memory's length in bytes.
func NewIPCMemHandle(h driver.IPCMemHandle, size uint64) IPCMemHandle {
	return IPCMemHandle{h: h, size: size}
}

// Driver returns the driver's handle, for C peers (cuIpcOpenMemHandle).
func (h IPCMemHandle) Driver() driver.IPCMemHandle { return h.h }

// Size is the exported memory's length in bytes.
func (h IPCMemHandle) Size() uint64 { return h.size }

// AppendText appends the text form of h to b (encoding.TextAppender).
func (h IPCMemHandle) AppendText(b []byte) ([]byte, error) {
	return ipcMemForm.appendText(b, h.size, &h.h.Reserved), nil
}

// MarshalText returns the text form of h (encoding.TextMarshaler).
func (h IPCMemHandle) MarshalText() ([]byte, error) { return h.AppendText(nil) }

// String returns the text form of h.
func (h IPCMemHandle) String() string {
	b, _ := h.MarshalText()
	return string(b)
}

// UnmarshalText sets h from its text form (encoding.TextUnmarshaler).
func (h *IPCMemHandle) UnmarshalText(text []byte) error {
	if h == nil {
		return nilHandlePtrErr(ipcMemForm.op)
	}
	return ipcMemForm.unmarshalText(text, &h.size, &h.h.Reserved)
}

// AppendBinary appends the binary form of h to b (encoding.BinaryAppender).
func (h IPCMemHandle) AppendBinary(b []byte) ([]byte, error) {
	return ipcMemForm.appendBinary(b, h.size, &h.h.Reserved), nil
}

// MarshalBinary returns the binary form of h (encoding.BinaryMarshaler).
func (h IPCMemHandle) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }

// UnmarshalBinary sets h from its binary form (encoding.BinaryUnmarshaler).
func (h *IPCMemHandle) UnmarshalBinary(data []byte) error {
	if h == nil {
		return nilHandlePtrErr(ipcMemForm.op)
	}
	return ipcMemForm.unmarshalBinary(data, &h.size, &h.h.Reserved)
}

// memHandleForm is the text and binary form of a handle of device memory
// for another process: a length in bytes and the driver's 64 bytes
// (IPCMemHandle, PoolPtrHandle). Text: magic, "1:", and the length (8
// bytes little-endian) and the 64 bytes in unpadded base64url; binary:
// magic, "1", the length and the 64 bytes.
type memHandleForm struct {
	magic string // "cuipcmem"
	name  string // the Go type, in messages
	op    string // the decode's operation, in errors
}

const memHandlePayload = 8 + 64

func (f memHandleForm) textLen() int {
	return len(f.magic) + 2 + ipcEncoding.EncodedLen(memHandlePayload)
}
func (f memHandleForm) binLen() int { return len(f.magic) + 1 + memHandlePayload }

func payload(size uint64, data *[64]byte) [memHandlePayload]byte {
	var b [memHandlePayload]byte
	binary.LittleEndian.PutUint64(b[:8], size)
	copy(b[8:], data[:])
	return b
}

func setPayload(p []byte, size *uint64, data *[64]byte) {
	*size = binary.LittleEndian.Uint64(p[:8])
	copy(data[:], p[8:])
}

func (f memHandleForm) appendText(b []byte, size uint64, data *[64]byte) []byte {
	if b == nil {
		b = make([]byte, 0, f.textLen())
	}
	p := payload(size, data)
	return ipcEncoding.AppendEncode(append(b, f.magic+"1:"...), p[:])
}

func (f memHandleForm) appendBinary(b []byte, size uint64, data *[64]byte) []byte {
	if b == nil {
		b = make([]byte, 0, f.binLen())
	}
	p := payload(size, data)
	return append(append(b, f.magic+"1"...), p[:]...)
}

// unmarshalText sets size and data from text, or leaves them and returns
// an error matching ErrMalformedHandle.
func (f memHandleForm) unmarshalText(text []byte, size *uint64, data *[64]byte) error {
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
	setPayload(buf[:], size, data)
	return nil
}

// unmarshalBinary is unmarshalText for the binary form.
func (f memHandleForm) unmarshalBinary(b []byte, size *uint64, data *[64]byte) error {
	v, n, ok := ipcPrefixVersion(b, f.magic, 0)
	if !ok || v != 1 || len(b) != f.binLen() {
		return &Error{Op: f.op, Detail: fmt.Sprintf("got %d bytes that are not a version 1 handle's binary form (%d bytes starting with %q)", len(b), f.binLen(), f.magic+"1"),
			Fix: "pass the bytes " + f.name + ".MarshalBinary made, whole", Err: ErrMalformedHandle}
	}
	setPayload(b[n:], size, data)
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
	if err := b.enter(op); err != nil {
		return IPCMemHandle{}, err
	}
	defer b.r.Exit()
	switch {
	case b.ipc != nil:
		return *b.ipc, nil
	case b.parent != nil:
		return IPCMemHandle{}, &Error{Op: op, Detail: fmt.Sprintf("%v is a view: the driver exports whole allocations", b),
			Fix: "export the buffer the view is of, and take the view in the other process", Err: ErrInvalidOptions}
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
	return IPCMemHandle{h: h, size: uint64(b.n) * uint64(unsafe.Sizeof(*new(T)))}, nil
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
	size := uint64(unsafe.Sizeof(*new(T)))
	if err := checkElem(op, reflect.TypeFor[T]()); err != nil {
		return nil, err
	}
	if h == (IPCMemHandle{}) {
		return nil, &Error{Op: op, Detail: "the handle is the zero IPCMemHandle", Fix: "pass a handle Buffer.IPCHandle made", Err: ErrInvalid}
	}
	if h.size%size != 0 || h.size/size > uint64(maxLen(size)) {
		return nil, &Error{Op: op, Detail: fmt.Sprintf("the memory's %d bytes are no whole number of %d-byte %s values", h.size, size, reflect.TypeFor[T]()),
			Fix: "open it with the element type it was exported with", Err: ErrMismatch}
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
	r := lifetime.NewHandle(&d.p.life, uintptr(ptr), kindIPCMemory, &d.p.life.Open)
	if r == nil {
		_ = driver.IPCCloseMemHandleCtx(d.p.ctx, ptr)
		return nil, hostMemErr(op)
	}
	if !d.p.add(r, d) {
		_ = driver.IPCCloseMemHandleCtx(d.p.ctx, ptr)
		return nil, closedErr(op, "device")
	}
	b := &Buffer[T]{ptr: ptr, n: int(h.size / size), p: d.p, dev: d, r: r, ipc: &h}
	b.cleanup = backstop(b, r)
	return b, nil
}

// maxLen is the most values of size bytes an int counts in bytes.
func maxLen(size uint64) int { return int(uint64(^uint(0)>>1) / size) }
