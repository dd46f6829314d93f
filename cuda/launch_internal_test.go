package cuda

import (
	"encoding/binary"
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A hazard launch packs each argument at its parameter's offset, whatever
// its size and alignment, and only a kernel whose parameters all lie within
// its stack buffer launches that way.
func TestHotLaunchPacking(t *testing.T) {
	type pair struct{ A, B int32 } // 8 bytes, 4-aligned
	params := []KernelParam{{0, 8}, {8, 4}, {12, 8}, {20, 1}, {24, 12}}
	offs := hotOffsets(params)
	if len(offs) != len(params) {
		t.Fatalf("hotOffsets of params within %d bytes: %v", hotArgBytes, offs)
	}
	k := &Kernel{params: params, offs: offs, known: true, hot: true}
	args := []driver.KernelArg{driver.Arg(uint64(0x0102030405060708)), driver.Arg(float32(1.5)),
		driver.ArgStruct(pair{-2, 3}), driver.Arg(uint8(9)), driver.ArgStruct([3]uint32{10, 11, 12})}
	var buf hotArgs
	if k.plan.Load() != nil || packSeen(&buf, nil, args) {
		t.Fatal("a kernel whose arguments were never checked has a plan, or packs")
	}
	if err := k.checkArgs("launch", args); err != nil {
		t.Fatal(err)
	}
	plan := k.plan.Load()
	if plan == nil || len(*plan) != len(params) {
		t.Fatalf("after the first check, the kernel's plan is %v", plan)
	}
	for i := range buf.b {
		buf.b[i] = 0xee
	}
	if !packSeen(&buf, *plan, args) {
		t.Fatal("the checked arguments do not pack")
	}
	le := binary.NativeEndian
	got := []uint64{le.Uint64(buf.b[0:]), uint64(le.Uint32(buf.b[8:])), uint64(le.Uint32(buf.b[12:])), uint64(le.Uint32(buf.b[16:])),
		uint64(buf.b[20]), uint64(le.Uint32(buf.b[24:])), uint64(le.Uint32(buf.b[28:])), uint64(le.Uint32(buf.b[32:]))}
	want := []uint64{0x0102030405060708, 0x3fc00000, 0xfffffffe, 3, 9, 10, 11, 12}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("packed value %d: %#x, want %#x", i, got[i], want[i])
		}
	}
	if buf.b[21] != 0xee || buf.b[36] != 0xee {
		t.Errorf("bytes between and after the parameters were written: %#x, %#x", buf.b[21], buf.b[36])
	}
	// An argument of another type (a float32 where a uint64 passed, an
	// int32 where a float32 passed) or another count: not packed.
	other := append([]driver.KernelArg(nil), args...)
	other[1] = driver.Arg(int32(1))
	wider := append([]driver.KernelArg(nil), args...)
	wider[0] = driver.Arg(float32(1))
	if packSeen(&buf, *plan, other) || packSeen(&buf, *plan, wider) || packSeen(&buf, *plan, args[:4]) {
		t.Error("arguments of other types, or fewer, pack as the checked ones")
	}
	for _, ps := range [][]KernelParam{{{0, 8}, {hotArgBytes - 4, 8}}, {{-1, 4}}, {{0, 0}}} {
		if offs := hotOffsets(ps); offs != nil {
			t.Errorf("hotOffsets(%v) = %v, want nil: not packed on the stack", ps, offs)
		}
	}
}
