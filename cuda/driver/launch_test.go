package driver

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// The arguments are packed as C lays out the kernel's parameters: each at
// its type's alignment.
func TestLaunchArgsPacking(t *testing.T) {
	type pair struct{ X, Y float32 }
	type index int32
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
