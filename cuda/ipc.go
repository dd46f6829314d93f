package cuda

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/cudagen/cudagen/cuda/driver"
)

// ErrMalformedHandle: text or bytes that are not an encoded IPCEventHandle.
var ErrMalformedHandle = errors.New("cuda: malformed IPC event handle")

// IPCEventHandle names an IPC event across processes: the driver's handle
// (C's CUipcEventHandle, 64 bytes) and the exporter's options that the
// driver's handle does not hold (BlockingSync), so that the importing
// process's event has them (Options). Send its text or binary form to the
// other process, which passes the decoded handle to Device.OpenIPCEvent. An
// imported event's IPCHandle returns the handle it was opened with, so that
// it can be passed on to a third process. The zero value is a handle of 64
// zero bytes, which the driver refuses. Handles are comparable.
type IPCEventHandle struct {
	h        driver.IPCEventHandle
	blocking bool // the exporter's BlockingSync
	v1       bool // decoded from a version 1 form, which holds no options
}

// NewIPCEventHandle makes a handle of the driver's handle h (from C's
// cuIpcGetEventHandle) and the options the event was created with, of
// which the handle keeps BlockingSync (IPC is implied, Timing impossible).
func NewIPCEventHandle(h driver.IPCEventHandle, opts EventOptions) IPCEventHandle {
	return IPCEventHandle{h: h, blocking: opts.BlockingSync}
}

// Driver returns the driver's handle: the 64 bytes of C's CUipcEventHandle,
// for C peers, which open it with cuIpcOpenEventHandle.
func (h IPCEventHandle) Driver() driver.IPCEventHandle { return h.h }

// Options returns the exporting event's options as the handle holds them:
// IPC, and BlockingSync as the exporter chose it. A handle decoded from a
// version 1 form (which held no options) reports BlockingSync false.
func (h IPCEventHandle) Options() EventOptions {
	return EventOptions{IPC: true, BlockingSync: h.blocking}
}

// The encodings: text for JSON, flags, environment variables and argv;
// binary for binary protocols. Both are versioned, so that a handle of
// another kind or of a future encoding is refused, never misread.
//
// Version 2, which MarshalText and MarshalBinary write (for a handle decoded
// from version 1, they write version 1 again, so that a handle passed on is
// the same text and bytes):
//
//   - text: "cuipcev2:" followed by, in unpadded base64url (RFC 4648 §5),
//     one options byte and the driver's 64 bytes: 96 characters, safe in
//     URLs, file names and shell words;
//   - binary: the 8 bytes "cuipcev2", the options byte, the driver's 64
//     bytes: 73 bytes.
//
// The options byte has bit 0 for BlockingSync; other bits are refused.
//
// Version 1, still decoded: the text "cuipcev1:" followed by the 64 bytes in
// unpadded base64url (95 characters), and the binary form of the 64 bytes
// alone (the driver's handle as C's CUipcEventHandle holds it). It holds
// no options: the imported event reports BlockingSync false.
//
// Decoding accepts exactly these: anything else, a version this package
// does not know included (named in the message), is an error matching
// ErrMalformedHandle and leaves the handle unchanged, so that a truncated,
// corrupted or future handle never reaches the driver. A binary form of
// any later version starts with "cuipcev" and its version, and is never 64
// bytes long.

const (
	ipcMagic     = "cuipcev"
	ipcVersion   = 2
	ipcBlocking  = 1 << 0 // the options byte's BlockingSync bit
	ipcDriverLen = len(driver.IPCEventHandle{})
	ipcBinLen    = len(ipcMagic) + 1 + 1 + ipcDriverLen // magic, version, options, handle
)

var ipcEncoding = base64.RawURLEncoding.Strict()

// ipcTextLen is the length of a version's text form.
func ipcTextLen(version int) int {
	n := ipcDriverLen
	if version == 2 {
		n++ // the options byte
	}
	return len(ipcMagic) + 2 + ipcEncoding.EncodedLen(n)
}

// payload is what the text and binary forms of version 2 hold after their
// prefix: the options byte and the driver's 64 bytes.
func (h IPCEventHandle) payload() [1 + ipcDriverLen]byte {
	var b [1 + ipcDriverLen]byte
	if h.blocking {
		b[0] = ipcBlocking
	}
	copy(b[1:], h.h[:])
	return b
}

// AppendText appends the text form of h to b (encoding.TextAppender).
func (h IPCEventHandle) AppendText(b []byte) ([]byte, error) {
	if h.v1 {
		b = append(b, ipcMagic+"1:"...)
		return ipcEncoding.AppendEncode(b, h.h[:]), nil
	}
	b = append(b, ipcMagic+"2:"...)
	p := h.payload()
	return ipcEncoding.AppendEncode(b, p[:]), nil
}

// MarshalText returns the text form of h (encoding.TextMarshaler), so that
// encoding/json and friends hold a handle as a string.
func (h IPCEventHandle) MarshalText() ([]byte, error) {
	return h.AppendText(make([]byte, 0, ipcTextLen(2)))
}

// String returns the text form of h.
func (h IPCEventHandle) String() string {
	b, _ := h.MarshalText()
	return string(b)
}

// ipcPrefixVersion reads the version of a form that starts with magic
// and a decimal version number (then sep, for the text form). ok is false
// if it does not start so.
func ipcPrefixVersion(b []byte, magic string, sep byte) (version, n int, ok bool) {
	if !strings.HasPrefix(string(b), magic) {
		return 0, 0, false
	}
	i := len(magic)
	if i < len(b) && b[i] == '0' { // one text per version: no leading zero
		return 0, 0, false
	}
	for i < len(b) && i < len(magic)+4 && b[i] >= '0' && b[i] <= '9' {
		version = version*10 + int(b[i]-'0')
		i++
	}
	if i == len(magic) || sep != 0 && (i == len(b) || b[i] != sep) {
		return 0, 0, false
	}
	if sep != 0 {
		i++
	}
	return version, i, true
}

// unknownVersion is the error of a handle of a version this package does
// not know.
func unknownVersion(op string, v int) error {
	return &Error{Op: op, Detail: fmt.Sprintf("the handle is of encoding version %d, and this package knows versions 1 and 2", v),
		Fix: "upgrade this program's cudagen module to the exporter's, or have the exporter write version 2", Err: ErrMalformedHandle}
}

// setOptions sets h's options from a version 2 options byte.
func (h *IPCEventHandle) setOptions(op string, o byte) error {
	if o&^ipcBlocking != 0 {
		return &Error{Op: op, Detail: fmt.Sprintf("the options byte %#02x has bits this package does not know", o),
			Fix: "pass the handle IPCEventHandle made, unchanged", Err: ErrMalformedHandle}
	}
	h.blocking = o&ipcBlocking != 0
	return nil
}

// UnmarshalText sets h from its text form (encoding.TextUnmarshaler), of
// version 2 or 1. Input that is not exactly a text form made by MarshalText
// is an error matching ErrMalformedHandle, and h is left unchanged.
func (h *IPCEventHandle) UnmarshalText(text []byte) error {
	const op = "decode IPC event handle"
	if h == nil {
		return nilHandlePtrErr(op)
	}
	v, n, ok := ipcPrefixVersion(text, ipcMagic, ':')
	if !ok {
		return &Error{Op: op, Detail: fmt.Sprintf("the text %s does not start with %q and a version", quoteShort(text), ipcMagic+"2:"),
			Fix: "pass the text IPCEventHandle.MarshalText made", Err: ErrMalformedHandle}
	}
	if v != 1 && v != 2 {
		return unknownVersion(op, v)
	}
	if len(text) != ipcTextLen(v) {
		return &Error{Op: op, Detail: fmt.Sprintf("the text is %d characters long, not %d (truncated or extended)", len(text), ipcTextLen(v)),
			Fix: "pass the whole text IPCEventHandle.MarshalText made", Err: ErrMalformedHandle}
	}
	var buf [1 + ipcDriverLen]byte
	want := buf[:]
	if v == 1 {
		want = buf[1:]
	}
	m, err := ipcEncoding.Decode(want, text[n:])
	if err != nil || m != len(want) {
		return &Error{Op: op, Detail: fmt.Sprintf("the text after the prefix is not unpadded base64url: %v", err),
			Fix: "pass the text IPCEventHandle.MarshalText made, unchanged", Err: ErrMalformedHandle}
	}
	var x IPCEventHandle
	copy(x.h[:], buf[1:])
	if v == 1 {
		x.v1 = true
	} else if err := x.setOptions(op, buf[0]); err != nil {
		return err
	}
	*h = x
	return nil
}

// AppendBinary appends the binary form of h to b (encoding.BinaryAppender).
func (h IPCEventHandle) AppendBinary(b []byte) ([]byte, error) {
	if h.v1 {
		return append(b, h.h[:]...), nil
	}
	b = append(b, ipcMagic+"2"...)
	p := h.payload()
	return append(b, p[:]...), nil
}

// MarshalBinary returns the binary form of h (encoding.BinaryMarshaler).
func (h IPCEventHandle) MarshalBinary() ([]byte, error) {
	return h.AppendBinary(make([]byte, 0, ipcBinLen))
}

// UnmarshalBinary sets h from its binary form (encoding.BinaryUnmarshaler):
// version 2's 73 bytes, or version 1's 64 (the driver's handle alone). Any
// other input is an error matching ErrMalformedHandle, and h is left
// unchanged.
func (h *IPCEventHandle) UnmarshalBinary(data []byte) error {
	const op = "decode IPC event handle"
	if h == nil {
		return nilHandlePtrErr(op)
	}
	if len(data) == ipcDriverLen {
		*h = IPCEventHandle{v1: true}
		copy(h.h[:], data)
		return nil
	}
	v, n, ok := ipcPrefixVersion(data, ipcMagic, 0)
	if !ok {
		return &Error{Op: op, Detail: fmt.Sprintf("got %d bytes that do not start with %q: neither a handle's binary form (%d bytes) nor the driver's handle (%d)", len(data), ipcMagic+"2", ipcBinLen, ipcDriverLen),
			Fix: "pass the bytes IPCEventHandle.MarshalBinary made, whole", Err: ErrMalformedHandle}
	}
	if v != 2 {
		return unknownVersion(op, v)
	}
	if len(data) != ipcBinLen {
		return &Error{Op: op, Detail: fmt.Sprintf("got %d bytes, a version 2 handle is %d", len(data), ipcBinLen),
			Fix: "pass the bytes IPCEventHandle.MarshalBinary made, whole", Err: ErrMalformedHandle}
	}
	var x IPCEventHandle
	if err := x.setOptions(op, data[n]); err != nil {
		return err
	}
	copy(x.h[:], data[n+1:])
	*h = x
	return nil
}

// nilHandlePtrErr is the error of decoding into a nil *IPCEventHandle.
func nilHandlePtrErr(op string) error {
	return &Error{Op: op, Detail: "the handle pointer is nil", Fix: "decode into an IPCEventHandle variable (&h)", Err: ErrInvalid}
}

// quoteShort quotes text for an error message, cut to a readable length.
func quoteShort(text []byte) string {
	const max = 24
	if len(text) > max {
		return fmt.Sprintf("%q...", text[:max])
	}
	return fmt.Sprintf("%q", text)
}
