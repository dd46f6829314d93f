package nccl

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Stream is cudaStream_t, the driver's CUstream: an NCCL call takes a
// driver.Stream (the cuda package's Stream.Handle()) as it is.
type Stream = driver.Stream

// DevicePtr is a device address: the collectives take buffers the driver
// allocated (driver.MemAlloc, the cuda package's Buffer.Ptr) or MemAlloc's.
type DevicePtr = driver.DevicePtr

// HostPtr is page-locked or other C memory (Config.NetName's string).
type HostPtr = driver.HostPtr

// uniqueIDPrefix starts a UniqueID's text form.
const uniqueIDPrefix = "ncclid1:"

var uniqueIDEncoding = base64.RawURLEncoding.Strict()

// MarshalText returns the text form of id (encoding.TextMarshaler), for
// ranks that exchange it through a file, a pipe, an environment variable
// or a command line: "ncclid1:" and the 128 bytes in unpadded base64url
// (RFC 4648 §5), 179 characters in all.
func (id UniqueID) MarshalText() ([]byte, error) {
	b := make([]byte, 0, len(uniqueIDPrefix)+uniqueIDEncoding.EncodedLen(len(id.Internal)))
	b = append(b, uniqueIDPrefix...)
	return uniqueIDEncoding.AppendEncode(b, id.Internal[:]), nil
}

// String is the text form.
func (id UniqueID) String() string {
	b, _ := id.MarshalText()
	return string(b)
}

// UnmarshalText reads the text form MarshalText writes; on an error id is
// unchanged.
func (id *UniqueID) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	rest, ok := strings.CutPrefix(s, uniqueIDPrefix)
	if !ok {
		return fmt.Errorf("cuda: nccl: reading a unique ID: %q does not start with %q: pass the text UniqueID.MarshalText wrote: %w", clip(s), uniqueIDPrefix, ErrInvalidSize)
	}
	b, err := uniqueIDEncoding.DecodeString(rest)
	if err != nil || len(b) != len(id.Internal) {
		return fmt.Errorf("cuda: nccl: reading a unique ID: want %d bytes in unpadded base64url after %q, got %q: pass the text UniqueID.MarshalText wrote: %w", len(id.Internal), uniqueIDPrefix, clip(rest), ErrInvalidSize)
	}
	copy(id.Internal[:], b)
	return nil
}

// MarshalBinary returns the 128 bytes of id, as NCCL writes them.
func (id UniqueID) MarshalBinary() ([]byte, error) {
	return append([]byte(nil), id.Internal[:]...), nil
}

// UnmarshalBinary reads the 128 bytes MarshalBinary writes; on an error id
// is unchanged.
func (id *UniqueID) UnmarshalBinary(b []byte) error {
	if len(b) != len(id.Internal) {
		return fmt.Errorf("cuda: nccl: reading a unique ID: %d bytes, want %d: pass the bytes UniqueID.MarshalBinary wrote: %w", len(b), len(id.Internal), ErrInvalidSize)
	}
	copy(id.Internal[:], b)
	return nil
}

// clip shortens a bad input for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
