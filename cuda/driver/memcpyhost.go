package driver

// Synchronous 2D and 3D copies with Go memory on the host side. The
// copy structs' host sides are HostPtr (C memory), since the asynchronous
// copies and graph memcpy nodes use them after the call returns; a
// synchronous copy is done when it returns, so it may take Go memory: the
// ...Host forms take it as []byte, check before the call that it holds
// every byte the copy reads or writes, and pin it for the call.

import (
	"fmt"
	"math/bits"
	"runtime"
	"unsafe"
)

// span is how many bytes from the start of a host buffer a copy side
// touches: the rows of its box, from (x, y, z) with the given pitch and
// height (the rows of a slice), width bytes wide; false where the figure
// overflows 64 bits (no slice holds it).
func span(x, y, z, pitch, height, width, rows, depth uint64) (uint64, bool) {
	if width == 0 || rows == 0 || depth == 0 {
		return 0, true
	}
	// ((z+depth-1)*height + y+rows-1)*pitch + x + width, every step checked.
	var over uint64
	add := func(a, b uint64) uint64 {
		s, c := bits.Add64(a, b, 0)
		over |= c
		return s
	}
	mul := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		over |= hi
		return lo
	}
	lastRow := add(mul(add(z, depth-1), height), add(y, rows-1))
	end := add(add(mul(lastRow, pitch), x), width)
	return end, over == 0
}

// copySide is one side of a 2D or 3D copy, as its struct has it.
type copySide struct {
	name                   string // "Src", "Dst"
	x, y, z, pitch, height uint64
	mt                     Memorytype
	host                   *HostPtr
}

// hostSides checks the host sides given as Go memory (src, dst: nil for
// none) against the copy's extent, pins them for the call and stores their
// addresses in the struct's copy; width, rows and depth are the copy's.
func hostSides(fn string, src, dst []byte, sides [2]copySide, width, rows, depth uint64, pin *runtime.Pinner) error {
	for i, b := range [2][]byte{src, dst} {
		sd := sides[i]
		if b == nil {
			continue
		}
		need, ok := span(sd.x, sd.y, sd.z, sd.pitch, sd.height, width, rows, depth)
		switch {
		case sd.mt != MemorytypeHost:
			return fmt.Errorf("cuda: %s: %s is given as Go memory, but its memory type is %v: %w (set %sMemoryType to MemorytypeHost, or pass nil)", fn, sd.name, sd.mt, ErrorInvalidValue, sd.name)
		case *sd.host != 0:
			return fmt.Errorf("cuda: %s: %s is given twice, as Go memory and as %sHost: %w (leave %sHost 0)", fn, sd.name, sd.name, ErrorInvalidValue, sd.name)
		case !ok || uint64(len(b)) < need:
			return fmt.Errorf("cuda: %s: %s holds %d bytes, but the copy's pitch, height and depth reach %d: %w (pass a larger slice, or check the copy's extent)", fn, sd.name, len(b), need, ErrorInvalidValue)
		case len(b) > 0:
			pin.Pin(&b[0])
			*sd.host = HostPtr(unsafe.Pointer(&b[0]))
		}
	}
	return nil
}

// Memcpy2DHost is Memcpy2D with host sides in Go memory: src and dst,
// where not nil, are the source's and destination's host memory (their
// memory type MemorytypeHost, SrcHost and DstHost left 0), each checked
// to hold every byte the copy touches, (Y+Height-1)×Pitch + XInBytes +
// WidthInBytes, before the call.
func Memcpy2DHost(pCopy *Memcpy2DParams, src, dst []byte) error {
	return Memcpy2DHostCtx(0, pCopy, src, dst)
}

// Memcpy2DHostCtx is Memcpy2DHost making ctx current first.
func Memcpy2DHostCtx(ctx Context, pCopy *Memcpy2DParams, src, dst []byte) error {
	return memcpy2DHost(ctx, "cuMemcpy2D", pCopy, src, dst, Memcpy2DCtx)
}

// Memcpy2DUnalignedHost is Memcpy2DUnaligned with host sides in Go
// memory, as Memcpy2DHost.
func Memcpy2DUnalignedHost(pCopy *Memcpy2DParams, src, dst []byte) error {
	return Memcpy2DUnalignedHostCtx(0, pCopy, src, dst)
}

// Memcpy2DUnalignedHostCtx is Memcpy2DUnalignedHost making ctx current first.
func Memcpy2DUnalignedHostCtx(ctx Context, pCopy *Memcpy2DParams, src, dst []byte) error {
	return memcpy2DHost(ctx, "cuMemcpy2DUnaligned", pCopy, src, dst, Memcpy2DUnalignedCtx)
}

// hostCopy runs call on a copy of *pCopy whose host sides given as Go
// memory (src, dst: nil for none) are checked, pinned for the call and
// stored in it (hostSides); sides gives a copy's two sides and its width,
// rows and depth.
func hostCopy[P any](ctx Context, fn string, pCopy *P, src, dst []byte, sides func(*P) ([2]copySide, [3]uint64), call func(Context, *P) error) error {
	if pCopy == nil {
		return nilCopy(fn)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	c := *pCopy
	sd, ext := sides(&c)
	if err := hostSides(fn, src, dst, sd, ext[0], ext[1], ext[2], &pin); err != nil {
		return err
	}
	return call(ctx, &c)
}

func memcpy2DHost(ctx Context, fn string, pCopy *Memcpy2DParams, src, dst []byte, call func(Context, *Memcpy2DParams) error) error {
	return hostCopy(ctx, fn, pCopy, src, dst, func(c *Memcpy2DParams) ([2]copySide, [3]uint64) {
		return [2]copySide{
			{"Src", c.SrcXInBytes, c.SrcY, 0, c.SrcPitch, 0, c.SrcMemoryType, &c.SrcHost},
			{"Dst", c.DstXInBytes, c.DstY, 0, c.DstPitch, 0, c.DstMemoryType, &c.DstHost},
		}, [3]uint64{c.WidthInBytes, c.Height, 1}
	}, call)
}

// Memcpy3DHost is Memcpy3D with host sides in Go memory: src and dst,
// where not nil, are the source's and destination's host memory (their
// memory type MemorytypeHost, SrcHost and DstHost left 0), each checked
// to hold every byte the copy touches, ((Z+Depth-1)×Height' + Y+Height-1)
// ×Pitch + XInBytes + WidthInBytes (Height' the side's own height), before
// the call.
func Memcpy3DHost(pCopy *Memcpy3DParams, src, dst []byte) error {
	return Memcpy3DHostCtx(0, pCopy, src, dst)
}

// Memcpy3DHostCtx is Memcpy3DHost making ctx current first.
func Memcpy3DHostCtx(ctx Context, pCopy *Memcpy3DParams, src, dst []byte) error {
	return hostCopy(ctx, "cuMemcpy3D", pCopy, src, dst, sides3D, Memcpy3DCtx)
}

// Memcpy3DPeerHost is Memcpy3DPeer with host sides in Go memory, as
// Memcpy3DHost.
func Memcpy3DPeerHost(pCopy *Memcpy3DPeerParams, src, dst []byte) error {
	return Memcpy3DPeerHostCtx(0, pCopy, src, dst)
}

// Memcpy3DPeerHostCtx is Memcpy3DPeerHost making ctx current first.
func Memcpy3DPeerHostCtx(ctx Context, pCopy *Memcpy3DPeerParams, src, dst []byte) error {
	return hostCopy(ctx, "cuMemcpy3DPeer", pCopy, src, dst, func(c *Memcpy3DPeerParams) ([2]copySide, [3]uint64) {
		return sides3D((*Memcpy3DParams)(unsafe.Pointer(c)))
	}, Memcpy3DPeerCtx)
}

// sides3D gives a 3D copy's two sides and its width, rows and depth. It
// reads a Memcpy3DPeerParams too: CUDA_MEMCPY3D_PEER is CUDA_MEMCPY3D with
// its contexts where CUDA_MEMCPY3D has reserved words, so the two Go
// structs differ only in those two fields' names and types, of one size
// (TestMemcpy3DPeerLayout), and a *Memcpy3DPeerParams may be read as a
// *Memcpy3DParams.
func sides3D(c *Memcpy3DParams) ([2]copySide, [3]uint64) {
	return [2]copySide{
		{"Src", c.SrcXInBytes, c.SrcY, c.SrcZ, c.SrcPitch, c.SrcHeight, c.SrcMemoryType, &c.SrcHost},
		{"Dst", c.DstXInBytes, c.DstY, c.DstZ, c.DstPitch, c.DstHeight, c.DstMemoryType, &c.DstHost},
	}, [3]uint64{c.WidthInBytes, c.Height, c.Depth}
}

func nilCopy(fn string) error {
	return fmt.Errorf("cuda: %s: pCopy is nil: %w (pass the copy's parameters)", fn, ErrorInvalidValue)
}
