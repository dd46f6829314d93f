package driver

// Synchronous 2D and 3D copies with Go memory on the host side. The
// copy structs' host sides are HostPtr (C memory), since the asynchronous
// copies and graph memcpy nodes use them after the call returns; a
// synchronous copy is done when it returns, so it may take Go memory: the
// ...Host forms take it as []byte, check before the call that it holds
// every byte the copy reads or writes, and pin it for the call.

import (
	"fmt"
	"runtime"
	"unsafe"
)

// span is how many bytes from the start of a host buffer a copy side
// touches: the rows of its box, from (x, y, z) with the given pitch and
// height (the rows of a slice), width bytes wide.
func span(x, y, z, pitch, height, width, rows, depth uint64) (uint64, bool) {
	if width == 0 || rows == 0 || depth == 0 {
		return 0, true
	}
	first := (z*height+y)*pitch + x
	last := ((depth-1)*height + (rows - 1)) * pitch
	end := first + last + width
	// Reject overflow: each term is at most end.
	if end < first || end < last || pitch != 0 && (z*height+y) > (^uint64(0)-x)/pitch {
		return 0, false
	}
	return end, true
}

// hostSide checks one host side of a copy and returns its address: b
// must be nil (the struct's own host pointer is used) or hold need bytes
// of a host side whose struct pointer is 0.
func hostSide(fn, side string, b []byte, mt Memorytype, have HostPtr, need uint64, ok bool, pin *runtime.Pinner) (HostPtr, error) {
	if b == nil {
		return have, nil
	}
	switch {
	case mt != MemorytypeHost:
		return 0, fmt.Errorf("cuda: %s: %s is given as Go memory, but its memory type is %v: %w (set %sMemoryType to MemorytypeHost, or pass nil)", fn, side, mt, ErrorInvalidValue, side)
	case have != 0:
		return 0, fmt.Errorf("cuda: %s: %s is given twice, as Go memory and as %sHost: %w (leave %sHost 0)", fn, side, side, ErrorInvalidValue, side)
	case !ok || uint64(len(b)) < need:
		return 0, fmt.Errorf("cuda: %s: %s holds %d bytes, but the copy's pitch, height and depth reach %d: %w (pass a larger slice, or check the copy's extent)", fn, side, len(b), need, ErrorInvalidValue)
	case len(b) == 0:
		return 0, nil
	}
	pin.Pin(&b[0])
	return HostPtr(unsafe.Pointer(&b[0])), nil
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

func memcpy2DHost(ctx Context, fn string, pCopy *Memcpy2DParams, src, dst []byte, call func(Context, *Memcpy2DParams) error) error {
	if pCopy == nil {
		return fmt.Errorf("cuda: %s: pCopy is nil: %w (pass the copy's parameters)", fn, ErrorInvalidValue)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	c := *pCopy
	var err error
	n, ok := span(c.SrcXInBytes, c.SrcY, 0, c.SrcPitch, 0, c.WidthInBytes, c.Height, 1)
	if c.SrcHost, err = hostSide(fn, "Src", src, c.SrcMemoryType, c.SrcHost, n, ok, &pin); err != nil {
		return err
	}
	n, ok = span(c.DstXInBytes, c.DstY, 0, c.DstPitch, 0, c.WidthInBytes, c.Height, 1)
	if c.DstHost, err = hostSide(fn, "Dst", dst, c.DstMemoryType, c.DstHost, n, ok, &pin); err != nil {
		return err
	}
	err = call(ctx, &c)
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return err
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
	const fn = "cuMemcpy3D"
	if pCopy == nil {
		return fmt.Errorf("cuda: %s: pCopy is nil: %w (pass the copy's parameters)", fn, ErrorInvalidValue)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	c := *pCopy
	var err error
	n, ok := span(c.SrcXInBytes, c.SrcY, c.SrcZ, c.SrcPitch, c.SrcHeight, c.WidthInBytes, c.Height, c.Depth)
	if c.SrcHost, err = hostSide(fn, "Src", src, c.SrcMemoryType, c.SrcHost, n, ok, &pin); err != nil {
		return err
	}
	n, ok = span(c.DstXInBytes, c.DstY, c.DstZ, c.DstPitch, c.DstHeight, c.WidthInBytes, c.Height, c.Depth)
	if c.DstHost, err = hostSide(fn, "Dst", dst, c.DstMemoryType, c.DstHost, n, ok, &pin); err != nil {
		return err
	}
	err = Memcpy3DCtx(ctx, &c)
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return err
}

// Memcpy3DPeerHost is Memcpy3DPeer with host sides in Go memory, as
// Memcpy3DHost.
func Memcpy3DPeerHost(pCopy *Memcpy3DPeerParams, src, dst []byte) error {
	return Memcpy3DPeerHostCtx(0, pCopy, src, dst)
}

// Memcpy3DPeerHostCtx is Memcpy3DPeerHost making ctx current first.
func Memcpy3DPeerHostCtx(ctx Context, pCopy *Memcpy3DPeerParams, src, dst []byte) error {
	const fn = "cuMemcpy3DPeer"
	if pCopy == nil {
		return fmt.Errorf("cuda: %s: pCopy is nil: %w (pass the copy's parameters)", fn, ErrorInvalidValue)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	c := *pCopy
	var err error
	n, ok := span(c.SrcXInBytes, c.SrcY, c.SrcZ, c.SrcPitch, c.SrcHeight, c.WidthInBytes, c.Height, c.Depth)
	if c.SrcHost, err = hostSide(fn, "Src", src, c.SrcMemoryType, c.SrcHost, n, ok, &pin); err != nil {
		return err
	}
	n, ok = span(c.DstXInBytes, c.DstY, c.DstZ, c.DstPitch, c.DstHeight, c.WidthInBytes, c.Height, c.Depth)
	if c.DstHost, err = hostSide(fn, "Dst", dst, c.DstMemoryType, c.DstHost, n, ok, &pin); err != nil {
		return err
	}
	err = Memcpy3DPeerCtx(ctx, &c)
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return err
}
