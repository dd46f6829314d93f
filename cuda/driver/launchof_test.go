package driver

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// LaunchArgsOf packs what LaunchArgs packs: the same bytes at the same
// offsets, for every scalar type and for ArgStruct's structs and arrays.
func TestLaunchArgsOfPacksAsLaunchArgs(t *testing.T) {
	type pair struct{ X, Y float32 }
	type index int32
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
	type pair struct{ X, Y float32 }
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
