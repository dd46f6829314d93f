package cuda

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ErrMalformedHandle: text or bytes that are not an encoded IPCEventHandle.
var ErrMalformedHandle = errors.New("cuda: malformed IPC event handle")

// ipcTextPrefix starts the text form of an IPCEventHandle. It names the
// kind and the encoding's version, so that a handle of another kind or a
// future encoding is refused rather than misread.
const ipcTextPrefix = "cuipcev1:"

var ipcEncoding = base64.RawURLEncoding.Strict()

// ipcTextLen is the length of the text form: the prefix and 64 bytes in
// base64url without padding.
var ipcTextLen = len(ipcTextPrefix) + ipcEncoding.EncodedLen(len(IPCEventHandle{}))

// The encodings: text for JSON, flags, environment variables and argv;
// binary (the driver's 64 bytes, as C's CUipcEventHandle holds them) for
// binary protocols and C peers.
//
// The text form is "cuipcev1:" followed by the 64 bytes in unpadded
// base64url (RFC 4648 §5): 95 characters, safe in URLs, file names and
// shell words. Decoding accepts exactly that: anything else is an error
// matching ErrMalformedHandle and leaves the handle unchanged, so a
// truncated or corrupted handle never reaches the driver.

// AppendText appends the text form of h to b (encoding.TextAppender).
func (h IPCEventHandle) AppendText(b []byte) ([]byte, error) {
	b = append(b, ipcTextPrefix...)
	return ipcEncoding.AppendEncode(b, h[:]), nil
}

// MarshalText returns the text form of h (encoding.TextMarshaler), so that
// encoding/json and friends carry a handle as a string.
func (h IPCEventHandle) MarshalText() ([]byte, error) {
	return h.AppendText(make([]byte, 0, ipcTextLen))
}

// String returns the text form of h.
func (h IPCEventHandle) String() string {
	b, _ := h.MarshalText()
	return string(b)
}

// UnmarshalText sets h from its text form (encoding.TextUnmarshaler). Input
// that is not exactly a text form made by MarshalText is an error matching
// ErrMalformedHandle, and h is left unchanged.
func (h *IPCEventHandle) UnmarshalText(text []byte) error {
	const op = "decode IPC event handle"
	if h == nil {
		return nilHandlePtrErr(op)
	}
	if !strings.HasPrefix(string(text), ipcTextPrefix) {
		return &Error{Op: op, Detail: fmt.Sprintf("the text %s does not start with %q", quoteShort(text), ipcTextPrefix),
			Fix: "pass the text IPCEventHandle.MarshalText made", Err: ErrMalformedHandle}
	}
	if len(text) != ipcTextLen {
		return &Error{Op: op, Detail: fmt.Sprintf("the text is %d characters long, not %d (truncated or extended)", len(text), ipcTextLen),
			Fix: "pass the whole text IPCEventHandle.MarshalText made", Err: ErrMalformedHandle}
	}
	var v IPCEventHandle
	n, err := ipcEncoding.Decode(v[:], text[len(ipcTextPrefix):])
	if err != nil || n != len(v) {
		return &Error{Op: op, Detail: fmt.Sprintf("the text after the prefix is not unpadded base64url: %v", err),
			Fix: "pass the text IPCEventHandle.MarshalText made, unchanged", Err: ErrMalformedHandle}
	}
	*h = v
	return nil
}

// AppendBinary appends the 64 bytes of h to b (encoding.BinaryAppender).
func (h IPCEventHandle) AppendBinary(b []byte) ([]byte, error) {
	return append(b, h[:]...), nil
}

// MarshalBinary returns the 64 bytes of h, laid out as C's CUipcEventHandle
// (encoding.BinaryMarshaler).
func (h IPCEventHandle) MarshalBinary() ([]byte, error) {
	return h.AppendBinary(make([]byte, 0, len(h)))
}

// UnmarshalBinary sets h from exactly 64 bytes (encoding.BinaryUnmarshaler).
// Any other length is an error matching ErrMalformedHandle, and h is left
// unchanged.
func (h *IPCEventHandle) UnmarshalBinary(data []byte) error {
	const op = "decode IPC event handle"
	if h == nil {
		return nilHandlePtrErr(op)
	}
	if len(data) != len(h) {
		return &Error{Op: op, Detail: fmt.Sprintf("got %d bytes, a handle is %d", len(data), len(h)),
			Fix: "pass the bytes IPCEventHandle.MarshalBinary made, whole", Err: ErrMalformedHandle}
	}
	copy(h[:], data)
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
