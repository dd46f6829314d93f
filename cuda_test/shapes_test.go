//go:build cgo

package gputest

// One test per C shape, through the generated layer (cuda/driver) only:
// a struct input, a struct output, an array input, a string buffer, a
// callback, a union-bearing struct, and stream capture end to end (where
// the cuda package records and waits with the EXTERNAL flags). Without a
// GPU each skips, saying so.

import (
	"bytes"
	"errors"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// storePTX is a one-thread kernel that stores a 32-bit value at a device address.
const storePTX = `.version 6.0
.target sm_50
.address_size 64

.visible .entry cudagen_store(.param .u64 cudagen_store_p, .param .u32 cudagen_store_v)
{
	.reg .b64 %rd<2>;
	.reg .b32 %r<2>;
	ld.param.u64 %rd1, [cudagen_store_p];
	ld.param.u32 %r1, [cudagen_store_v];
	st.global.u32 [%rd1], %r1;
	ret;
}
` + "\x00"

// shapeDevice is device 0's primary context and its device handle.
func shapeDevice(t *testing.T) (*cuda.Device, driver.Context, driver.Device) {
	t.Helper()
	dev := gpu(t)
	d, err := driver.DeviceGet(int32(dev.Ordinal()))
	ok(t, err)
	return dev, dev.Context(), d
}

// A struct input: cuMemcpy2D copies a 2-D region host → device → host.
func TestShapeMemcpy2D(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	const w, h, hostPitch, devPitch = 48, 8, 64, 128
	src := make([]byte, hostPitch*h)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	dst := make([]byte, hostPitch*h)
	dptr := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, devPitch*h))
	defer driver.MemFreeCtx(ctx, dptr)
	// Go memory on the host side: the Host form checks its extent and pins it.
	up := driver.Memcpy2DParams{SrcMemoryType: driver.MemorytypeHost, SrcPitch: hostPitch,
		DstMemoryType: driver.MemorytypeDevice, DstDevice: dptr, DstPitch: devPitch, WidthInBytes: w, Height: h}
	// The copy touches (h-1) pitches and one row: a slice a byte shorter is refused.
	if err := driver.Memcpy2DHostCtx(ctx, &up, src[:(h-1)*hostPitch+w-1], nil); !errors.Is(err, driver.ErrorInvalidValue) {
		t.Fatalf("a host slice one byte short of the copy's extent: got %v, want an error matching ErrorInvalidValue", err)
	}
	ok(t, driver.Memcpy2DHostCtx(ctx, &up, src, nil))
	down := driver.Memcpy2DParams{SrcMemoryType: driver.MemorytypeDevice, SrcDevice: dptr, SrcPitch: devPitch,
		DstMemoryType: driver.MemorytypeHost, DstPitch: hostPitch, WidthInBytes: w, Height: h}
	ok(t, driver.Memcpy2DHostCtx(ctx, &down, nil, dst))
	for y := 0; y < h; y++ {
		row := y * hostPitch
		if !bytes.Equal(dst[row:row+w], src[row:row+w]) {
			t.Fatalf("row %d: got %v, want %v", y, dst[row:row+w], src[row:row+w])
		}
		for x := w; x < hostPitch; x++ {
			if dst[row+x] != 0 {
				t.Fatalf("row %d byte %d outside the region was written", y, x)
			}
		}
	}
	if err := driver.Memcpy2DCtx(ctx, nil); err != driver.ErrorInvalidValue {
		t.Errorf("nil descriptor: %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
}

// A struct output: cuDeviceGetUuid, twice the same non-zero UUID.
func TestShapeDeviceGetUUID(t *testing.T) {
	_, _, d := shapeDevice(t)
	a := must[driver.UUID](t)(driver.DeviceGetUUID(d))
	b := must[driver.UUID](t)(driver.DeviceGetUUID(d))
	if a != b || a == (driver.UUID{}) {
		t.Fatalf("UUIDs %x and %x", a.Bytes, b.Bytes)
	}
	t.Logf("UUID %x", a.Bytes)
}

// A string buffer: cuDeviceGetPCIBusId in the DDDD:BB:DD.F form.
func TestShapeDeviceGetPCIBusID(t *testing.T) {
	_, _, d := shapeDevice(t)
	id := must[string](t)(driver.DeviceGetPCIBusID(d))
	if !regexp.MustCompile(`^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]$`).MatchString(id) {
		t.Fatalf("PCI bus id %q", id)
	}
	back := must[driver.Device](t)(driver.DeviceGetByPCIBusID(id))
	if back != d {
		t.Errorf("%s is device %d, want %d", id, back, d)
	}
	t.Logf("PCI bus id %s", id)
}

// loadStore loads storePTX with JIT options (an array input) and returns
// its kernel.
func loadStore(t *testing.T, ctx driver.Context) (driver.Module, driver.Function) {
	t.Helper()
	img := []byte(storePTX)
	info := make([]byte, 4096)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&info[0])
	opts := []driver.JITOption{driver.JITInfoLogBuffer, driver.JITInfoLogBufferSizeBytes, driver.JITOptimizationLevel}
	// Each value is an integer or an address (pinned above), as a uintptr.
	vals := []uintptr{uintptr(unsafe.Pointer(&info[0])), uintptr(len(info)), 3}
	mod, err := driver.ModuleLoadDataExCtx(ctx, img, opts, vals)
	ok(t, err)
	t.Logf("JIT info log: %q", strings.TrimRight(string(info), "\x00"))
	if _, err := driver.ModuleLoadDataExCtx(ctx, img, opts, vals[:2]); err == nil || !strings.Contains(err.Error(), "same length") {
		t.Errorf("slices of different lengths: %v", err)
	}
	fn := must[driver.Function](t)(driver.ModuleGetFunctionCtx(ctx, mod, "cudagen_store"))
	return mod, fn
}

// An array input (cuModuleLoadDataEx's JIT options) and a union-bearing
// struct (cuLaunchKernelEx with a launch attribute): the kernel stores a
// value that is read back.
func TestShapeModuleLoadDataExLaunchKernelEx(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	mod, fn := loadStore(t, ctx)
	defer driver.ModuleUnloadCtx(ctx, mod)
	dptr := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, 4))
	defer driver.MemFreeCtx(ctx, dptr)
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)

	var pin runtime.Pinner
	defer pin.Unpin()
	p, v := dptr, uint32(0xC0DA)
	attrs := make([]driver.LaunchAttribute, 1)
	attrs[0].Id = driver.LaunchAttributePriority
	*attrs[0].Value.Priority() = 0
	params := []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&v)}
	pin.Pin(&p)
	pin.Pin(&v)
	pin.Pin(&attrs[0])
	cfg := driver.LaunchConfig{GridDimX: 1, GridDimY: 1, GridDimZ: 1, BlockDimX: 1, BlockDimY: 1, BlockDimZ: 1, HStream: s, Attrs: &attrs[0], NumAttrs: 1}
	ok(t, driver.LaunchKernelExCtx(ctx, &cfg, fn, params[:], nil))
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	got := make([]uint32, 1)
	ok(t, driver.MemcpyDtoHCtx(ctx, driver.AsBytes(got), dptr))
	if got[0] != v {
		t.Fatalf("the kernel stored %#x, want %#x", got[0], v)
	}
}

// A callback: cuLaunchHostFunc runs a C function that sets a flag.
func TestShapeLaunchHostFunc(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)
	flag := newFlag()
	defer freeC(flag)
	ok(t, driver.LaunchHostFuncCtx(ctx, s, setFlagFn(), uintptr(flag))) // C memory: the driver keeps it until the function has run
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	if !flagSet(flag) {
		t.Fatal("the host function did not run")
	}
}

// Stream capture end to end: the cuda package records and waits with the
// EXTERNAL flags inside a capture; the graph is instantiated and launched;
// the external event completes only after the graph ran.
func TestShapeCaptureExternal(t *testing.T) {
	dev, ctx, _ := shapeDevice(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	run := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	// Load the spin kernel before capturing.
	ok(t, s.Spin(time.Microsecond))
	ok(t, dev.Sync())

	ok(t, driver.StreamBeginCaptureCtx(ctx, s.Handle(), driver.StreamCaptureModeRelaxed))
	st := must[driver.StreamCaptureStatus](t)(driver.StreamIsCapturingCtx(ctx, s.Handle()))
	if st != driver.StreamCaptureStatusActive {
		t.Fatalf("capture status %v", st)
	}
	ok(t, s.Spin(300*time.Millisecond))
	ok(t, s.Record(e, cuda.RecordExternal))
	ok(t, s.Wait(e, cuda.WaitExternal))
	g := must[driver.Graph](t)(driver.StreamEndCaptureCtx(ctx, s.Handle()))
	if g == 0 {
		t.Fatal("no graph captured")
	}
	defer driver.GraphDestroyCtx(ctx, g)
	nodes := must[[]driver.GraphNode](t)(driver.GraphGetNodesCtx(ctx, g))
	t.Logf("captured %d nodes", len(nodes))
	if len(nodes) < 3 {
		t.Errorf("captured %d nodes, want the kernel, the event record and the event wait", len(nodes))
	}
	x := must[driver.GraphExec](t)(driver.GraphInstantiateWithFlagsCtx(ctx, g, 0))
	defer driver.GraphExecDestroyCtx(ctx, x)
	// The graph has not run: nothing has been recorded into e by it.
	ok(t, driver.GraphLaunchCtx(ctx, x, run.Handle()))
	if err := driver.EventQueryCtx(ctx, e.Handle()); err != driver.ErrorNotReady {
		t.Errorf("right after the launch, with 300 ms of GPU work before the record node: %v, want CUDA_ERROR_NOT_READY", err)
	}
	ok(t, driver.EventSynchronizeCtx(ctx, e.Handle()))
	if err := driver.StreamQueryCtx(ctx, run.Handle()); err != nil {
		// The record node is the graph's last but one node: the stream may
		// still be finishing the wait node.
		ok(t, driver.StreamSynchronizeCtx(ctx, run.Handle()))
	}
	ok(t, driver.EventQueryCtx(ctx, e.Handle()))
}

// capturedChain captures three spins on a new stream: a graph (destroyed
// at cleanup) of three kernel nodes in a chain, and its nodes.
func capturedChain(t *testing.T) (driver.Context, driver.Graph, []driver.GraphNode) {
	t.Helper()
	dev, ctx, _ := shapeDevice(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	t.Cleanup(func() { s.Close() })
	ok(t, s.Spin(time.Microsecond)) // loads the kernel before the capture
	ok(t, dev.Sync())
	ok(t, driver.StreamBeginCaptureCtx(ctx, s.Handle(), driver.StreamCaptureModeRelaxed))
	for i := 0; i < 3; i++ {
		ok(t, s.Spin(time.Microsecond))
	}
	g := must[driver.Graph](t)(driver.StreamEndCaptureCtx(ctx, s.Handle()))
	t.Cleanup(func() { driver.GraphDestroyCtx(ctx, g) })
	return ctx, g, must[[]driver.GraphNode](t)(driver.GraphGetNodesCtx(ctx, g))
}

// checkChain checks edges (from[i] → to[i]) against a chain of nodes:
// len(nodes)-1 edges, each joining two of them.
func checkChain(t *testing.T, nodes, from, to []driver.GraphNode) {
	t.Helper()
	t.Logf("captured %d nodes, %d edges", len(nodes), len(from))
	if len(nodes) != 3 || len(from) != len(to) || len(from) != len(nodes)-1 {
		t.Errorf("%d nodes, %d→%d edge ends, want a chain of 3", len(nodes), len(from), len(to))
	}
	for i := range from {
		if !slices.Contains(nodes, from[i]) || !slices.Contains(nodes, to[i]) || from[i] == 0 {
			t.Errorf("edge %d: %#x → %#x joins no two captured nodes %v", i, from[i], to[i], nodes)
		}
	}
}
