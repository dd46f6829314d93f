package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// pair and index are a struct and a named integer among the arguments the
// tests pack.
type pair struct{ X, Y float32 }
type index int32

// The arguments are packed as C lays out the kernel's parameters: each at
// its type's alignment.
func TestLaunchArgsPacking(t *testing.T) {
	buf := make([]byte, 64)
	offs := make([]uint16, 16)
	n, err := packArgs(buf, offs, []any{int8(-1), int32(7), DevicePtr(0x1122334455667788), uint16(9), pair{1.5, -2}, index(3), float64(0.25), true})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	checks := []struct {
		off  int
		got  uint64
		want uint64
	}{
		{0, uint64(buf[0]), 0xff},
		{4, uint64(le.Uint32(buf[4:])), 7},
		{8, le.Uint64(buf[8:]), 0x1122334455667788},
		{16, uint64(le.Uint16(buf[16:])), 9},
		{20, uint64(le.Uint32(buf[20:])), uint64(math.Float32bits(1.5))},
		{24, uint64(le.Uint32(buf[24:])), uint64(math.Float32bits(-2))},
		{28, uint64(le.Uint32(buf[28:])), 3},
		{32, le.Uint64(buf[32:]), math.Float64bits(0.25)},
		{40, uint64(buf[40]), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("offset %d: %#x, want %#x", c.off, c.got, c.want)
		}
	}
	if want := []uint16{0, 4, 8, 16, 20, 28, 32, 40}; !slices.Equal(offs[:8], want) {
		t.Errorf("offsets %v, want %v", offs[:8], want)
	}
	if n != 41 {
		t.Errorf("%d bytes used, want 41", n)
	}
}

// An argument that holds Go pointers, or none at all, is refused before
// the call with an error naming it; too many bytes are refused too.
func TestLaunchArgsRefused(t *testing.T) {
	x := 1
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{int32(1), &x}, "kernel argument 1 is a *int"},
		{[]any{"text"}, "kernel argument 0 is a string"},
		{[]any{[]float32{1}}, "kernel argument 0 is a []float32"},
		{[]any{nil}, "kernel argument 0 is nil"},
		{[]any{struct{ P *int }{&x}}, "holds Go pointers"},
		{[]any{[40000]byte{}}, "more than 32764 bytes"},
	} {
		err := LaunchArgs(0, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "cuda: ") {
			t.Errorf("%T: %v, want an error containing %q", c.args[len(c.args)-1], err, c.want)
		}
		if errors.Is(err, ErrNoDriver) {
			t.Errorf("%T reached the driver", c.args[len(c.args)-1])
		}
	}
}

// A launch packs its arguments without allocating (here without a driver:
// the call fails after packing, at the entry point).
func TestLaunchArgsAllocatesNothing(t *testing.T) {
	a, b := DevicePtr(0x1000), DevicePtr(0x2000)
	n, s := int32(1024), float32(2)
	if err := LaunchArgs(0, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, 0, a, b, n, s); !errors.Is(err, ErrNoDriver) {
		t.Fatalf("without a driver: %v", err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = LaunchArgs(0, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, 0, a, b, n, s, a, b, n, s, a, b, n, s, a, b, n, s)
	})
	if allocs != 0 {
		t.Errorf("a 16-argument launch allocates %v times", allocs)
	}
}

// The packing alone, for 4 and 16 arguments (8-byte integers, as the launch
// benchmarks pass): what LaunchArgs adds to the raw form's crossing, beside
// building kernelParams in C; under typed/, of LaunchArgsOf's KernelArgs.
func BenchmarkPackArgs(b *testing.B) {
	var buf [stackArgBytes]byte
	var offs [stackArgs]uint16
	v := [16]uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	b.Run("args=4", func(b *testing.B) {
		for b.Loop() {
			if _, err := packArgs(buf[:], offs[:], []any{v[0], v[1], v[2], v[3]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("args=16", func(b *testing.B) {
		for b.Loop() {
			if _, err := packArgs(buf[:], offs[:], []any{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed/args=4", func(b *testing.B) {
		for b.Loop() {
			if _, err := packArgs(buf[:], offs[:], asAnys([]KernelArg{Arg(v[0]), Arg(v[1]), Arg(v[2]), Arg(v[3])})); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed/args=16", func(b *testing.B) {
		for b.Loop() {
			if _, err := packArgs(buf[:], offs[:], asAnys([]KernelArg{Arg(v[0]), Arg(v[1]), Arg(v[2]), Arg(v[3]), Arg(v[4]), Arg(v[5]), Arg(v[6]), Arg(v[7]),
				Arg(v[8]), Arg(v[9]), Arg(v[10]), Arg(v[11]), Arg(v[12]), Arg(v[13]), Arg(v[14]), Arg(v[15])})); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Every number type packArgs stores without reflection is stored with its
// own size and bytes, at its alignment: each value has all its bytes set,
// after a 1-byte argument that pushes it to its alignment.
func TestLaunchArgsNumbers(t *testing.T) {
	ne := binary.NativeEndian
	type named uint64 // a named integer: packed through reflection
	for _, c := range []struct {
		v    any
		want []byte
	}{
		{DevicePtr(0x0102030405060708), ne.AppendUint64(nil, 0x0102030405060708)},
		{uint64(0x8182838485868788), ne.AppendUint64(nil, 0x8182838485868788)},
		{int64(-0x0102030405060708), ne.AppendUint64(nil, uint64(0xfefdfcfbfaf9f8f8))},
		{int(-2), ne.AppendUint64(nil, math.MaxUint64-1)},
		{uint(0x1112131415161718), ne.AppendUint64(nil, 0x1112131415161718)},
		{uintptr(0x2122232425262728), ne.AppendUint64(nil, 0x2122232425262728)},
		{float64(-1.5), ne.AppendUint64(nil, math.Float64bits(-1.5))},
		{named(0x3132333435363738), ne.AppendUint64(nil, 0x3132333435363738)},
		{int32(-0x01020304), ne.AppendUint32(nil, 0xfefdfcfc)},
		{uint32(0x81828384), ne.AppendUint32(nil, 0x81828384)},
		{float32(0.75), ne.AppendUint32(nil, math.Float32bits(0.75))},
		{int16(-0x0102), ne.AppendUint16(nil, 0xfefe)},
		{uint16(0x8182), ne.AppendUint16(nil, 0x8182)},
		{int8(-3), []byte{0xfd}},
		{uint8(0xa5), []byte{0xa5}},
		{true, []byte{1}},
		{false, []byte{0}},
	} {
		buf := make([]byte, 32)
		for i := range buf {
			buf[i] = 0xee
		}
		offs := make([]uint16, 2)
		n, err := packArgs(buf, offs, []any{uint8(0x5a), c.v})
		if err != nil {
			t.Fatalf("%T: %v", c.v, err)
		}
		size := len(c.want)
		if offs[1] != uint16(size) || n != 2*size || buf[0] != 0x5a {
			t.Errorf("%T: offset %d, %d bytes, first byte %#x; want offset %d, %d bytes, 0x5a", c.v, offs[1], n, buf[0], size, 2*size)
			continue
		}
		if got := buf[size : 2*size]; !slices.Equal(got, c.want) {
			t.Errorf("%T: bytes % x, want % x", c.v, got, c.want)
		}
	}
}

// LaunchArgsOf packs what LaunchArgs packs: the same bytes at the same
// offsets, for every scalar type and for ArgStruct's structs and arrays.
func TestLaunchArgsOfPacksAsLaunchArgs(t *testing.T) {
	type flag bool
	anyArgs := []any{int8(-1), int32(7), DevicePtr(0x1122334455667788), uint16(9), pair{1.5, -2}, index(3), float64(0.25), true,
		uint8(0xa5), int16(-2), uint32(0x81828384), int64(-5), int(-6), uint(7), uintptr(0x2122232425262728), float32(0.75),
		[3]uint16{1, 2, 3}, flag(true), uint64(0x8182838485868788)}
	typed := []KernelArg{Arg(int8(-1)), Arg(int32(7)), Arg(DevicePtr(0x1122334455667788)), Arg(uint16(9)), ArgStruct(pair{1.5, -2}), Arg(index(3)), Arg(0.25), Arg(true),
		Arg(uint8(0xa5)), Arg(int16(-2)), Arg(uint32(0x81828384)), Arg(int64(-5)), Arg(-6), Arg(uint(7)), Arg(uintptr(0x2122232425262728)), Arg(float32(0.75)),
		ArgStruct([3]uint16{1, 2, 3}), Arg(flag(true)), Arg(uint64(0x8182838485868788))}
	wantBuf, gotBuf := make([]byte, 256), make([]byte, 256)
	wantOffs, gotOffs := make([]uint16, 32), make([]uint16, 32)
	wn, err := packArgs(wantBuf, wantOffs, anyArgs)
	if err != nil {
		t.Fatal(err)
	}
	gn, err := packArgs(gotBuf, gotOffs, asAnys(typed))
	if err != nil {
		t.Fatal(err)
	}
	if gn != wn || !bytes.Equal(gotBuf, wantBuf) || !slices.Equal(gotOffs, wantOffs) {
		t.Errorf("LaunchArgsOf packs %d bytes % x at %v;\nLaunchArgs %d bytes % x at %v", gn, gotBuf[:gn], gotOffs[:len(typed)], wn, wantBuf[:wn], wantOffs[:len(anyArgs)])
	}
}

// What Go cannot check at compile time is refused before the call, with
// an error naming the argument.
func TestLaunchArgsOfRefused(t *testing.T) {
	x := 1
	for _, c := range []struct {
		args []KernelArg
		want string
	}{
		{[]KernelArg{Arg(int32(1)), {}}, "kernel argument 1 is nil (or the zero KernelArg)"},
		{[]KernelArg{ArgStruct(struct{ P *int }{&x})}, "holds Go pointers"},
		{[]KernelArg{ArgStruct(&x)}, "kernel argument 0 is a *int"},
		{[]KernelArg{ArgStruct([]float32{1})}, "kernel argument 0 is a []float32"},
		{[]KernelArg{ArgStruct([40000]byte{})}, "more than 32764 bytes"},
	} {
		err := LaunchArgsOf(0, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "cuda: ") {
			t.Errorf("%v, want an error containing %q", err, c.want)
		}
		if errors.Is(err, ErrNoDriver) {
			t.Errorf("%q reached the driver", c.want)
		}
	}
	// More than the stack's 32 arguments take the pool's buffer.
	many := make([]KernelArg, 40)
	for i := range many {
		many[i] = Arg(uint64(i))
	}
	if err := LaunchArgsOf(0, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, many...); !errors.Is(err, ErrNoDriver) {
		t.Errorf("40 arguments, without a driver: %v", err)
	}
}

// A typed launch allocates nothing either (here without a driver: the call
// fails after packing, at the entry point).
func TestLaunchArgsOfAllocatesNothing(t *testing.T) {
	a, b := DevicePtr(0x1000), DevicePtr(0x2000)
	n, s := int32(1024), float32(2)
	if err := LaunchArgsOf(0, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, 0, Arg(a), Arg(b), Arg(n), Arg(s)); !errors.Is(err, ErrNoDriver) {
		t.Fatalf("without a driver: %v", err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = LaunchArgsOf(0, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, 0, Arg(a), Arg(b), Arg(n), Arg(s), Arg(a), Arg(b), Arg(n), Arg(s),
			Arg(a), Arg(b), Arg(n), Arg(s), Arg(a), Arg(b), Arg(n), Arg(s))
	})
	if allocs != 0 {
		t.Errorf("a 16-argument typed launch allocates %v times", allocs)
	}
	p := pair{1, 2}
	allocs = testing.AllocsPerRun(100, func() {
		_ = LaunchArgsOf(0, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, 0, Arg(a), ArgStruct(p), Arg(n))
	})
	if allocs != 0 {
		t.Errorf("a typed launch with a struct allocates %v times", allocs)
	}
}
