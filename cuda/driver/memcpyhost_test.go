package driver

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The Host forms check Go memory against the copy's extent before the
// call: a slice one byte short is refused, and so is a host side given
// twice or one whose memory type is not host. Nothing reaches the driver
// (none is loaded here), so a refusal is the check's.
func TestMemcpyHostRefusals(t *testing.T) {
	const w, h, d, pitch, height = 48, 8, 3, 64, 10
	need2D := uint64((h-1)*pitch + w)
	need3D := uint64(((d-1)*height+(h-1))*pitch + w)
	c2 := Memcpy2DParams{SrcMemoryType: MemorytypeHost, SrcPitch: pitch, DstMemoryType: MemorytypeDevice, DstDevice: 0x1000, DstPitch: pitch, WidthInBytes: w, Height: h}
	c3 := Memcpy3DParams{SrcMemoryType: MemorytypeHost, SrcPitch: pitch, SrcHeight: height, DstMemoryType: MemorytypeDevice, DstDevice: 0x1000, DstPitch: pitch, DstHeight: height, WidthInBytes: w, Height: h, Depth: d}
	c3p := Memcpy3DPeerParams{SrcMemoryType: MemorytypeHost, SrcPitch: pitch, SrcHeight: height, DstMemoryType: MemorytypeDevice, DstDevice: 0x1000, DstPitch: pitch, DstHeight: height, WidthInBytes: w, Height: h, Depth: d}
	offset := c2
	offset.SrcXInBytes, offset.SrcY = 5, 2
	twice := c2
	twice.SrcHost = 0x1000
	devSide := c2
	devSide.SrcMemoryType = MemorytypeDevice
	cases := []struct {
		name string
		call func([]byte) error
		need uint64
		want string
	}{
		{"2D", func(b []byte) error { return Memcpy2DHost(&c2, b, nil) }, need2D, "holds"},
		{"2D unaligned", func(b []byte) error { return Memcpy2DUnalignedHost(&c2, b, nil) }, need2D, "holds"},
		{"2D at (5, 2)", func(b []byte) error { return Memcpy2DHost(&offset, b, nil) }, need2D + 2*pitch + 5, "holds"},
		{"3D", func(b []byte) error { return Memcpy3DHost(&c3, b, nil) }, need3D, "holds"},
		{"3D peer", func(b []byte) error { return Memcpy3DPeerHost(&c3p, b, nil) }, need3D, "holds"},
		{"given twice", func(b []byte) error { return Memcpy2DHost(&twice, b, nil) }, 1 << 20, "given twice"},
		{"device side", func(b []byte) error { return Memcpy2DHost(&devSide, b, nil) }, 1 << 20, "memory type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call(make([]byte, c.need-1))
			if !errors.Is(err, ErrorInvalidValue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%d bytes: got %v, want a refusal matching ErrorInvalidValue that says %q", c.need-1, err, c.want)
			}
			// The right size passes the check and reaches the call, which
			// fails here only for want of a driver.
			if c.want == "holds" {
				if err := c.call(make([]byte, c.need)); errors.Is(err, ErrorInvalidValue) {
					t.Fatalf("%d bytes: refused: %v", c.need, err)
				}
			}
		})
	}
	if err := Memcpy2DHost(nil, nil, nil); !errors.Is(err, ErrorInvalidValue) {
		t.Fatalf("nil parameters: %v", err)
	}
}

// span counts the bytes a copy side touches, and refuses a box whose extent
// overflows 64 bits at any step (which would otherwise wrap to a small
// figure that a short slice passes).
func TestSpan(t *testing.T) {
	for _, c := range []struct {
		name                                       string
		x, y, z, pitch, height, width, rows, depth uint64
		want                                       uint64
		ok                                         bool
	}{
		{"2D", 3, 2, 0, 100, 0, 10, 4, 1, (2+3)*100 + 3 + 10, true},
		{"3D", 1, 1, 1, 64, 8, 16, 2, 3, ((1+2)*8+1+1)*64 + 1 + 16, true},
		{"empty", 5, 5, 5, 5, 5, 0, 1, 1, 0, true},
		{"rows times pitch overflows", 0, 0, 0, 1 << 33, 0, 1, 1<<31 + 1, 1, 0, false},
		{"depth times height overflows", 0, 0, 0, 1, 1 << 40, 1, 1, 1<<24 + 1, 0, false},
		{"the sum overflows", ^uint64(0) - 4, 0, 0, 1, 0, 8, 1, 1, 0, false},
	} {
		got, ok := span(c.x, c.y, c.z, c.pitch, c.height, c.width, c.rows, c.depth)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: span %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// Memcpy3DPeerHost reads its struct as a Memcpy3DParams (sides3D): the two
// have the same fields, of the same types at the same offsets, but for the
// two a peer copy has its contexts in, where a Memcpy3DParams has its
// reserved words, of the same size.
func TestMemcpy3DPeerLayout(t *testing.T) {
	a, p := reflect.TypeFor[Memcpy3DParams](), reflect.TypeFor[Memcpy3DPeerParams]()
	if a.Size() != p.Size() || a.NumField() != p.NumField() {
		t.Fatalf("Memcpy3DParams has %d bytes in %d fields, Memcpy3DPeerParams %d in %d", a.Size(), a.NumField(), p.Size(), p.NumField())
	}
	renamed := 0
	for i := range a.NumField() {
		fa, fp := a.Field(i), p.Field(i)
		if fa.Name != fp.Name {
			renamed++
		}
		if fa.Offset != fp.Offset || fa.Type.Size() != fp.Type.Size() || fa.Name == fp.Name && fa.Type != fp.Type {
			t.Errorf("field %d: %s %v at %d, but %s %v at %d", i, fa.Name, fa.Type, fa.Offset, fp.Name, fp.Type, fp.Offset)
		}
	}
	if renamed != 2 {
		t.Errorf("%d fields named differently, want 2 (the reserved words and the contexts)", renamed)
	}
}
