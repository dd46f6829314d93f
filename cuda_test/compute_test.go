//go:build cgo

package gputest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// computePTX has the kernels of the compute tests, in PTX that a GPU runs
// and the fake driver reads (testdata/fakecuda.c runs add_one on the host):
// add_one(float *p, unsigned n) adds 1 to p[i] for each thread
// i = blockIdx.x*blockDim.x + threadIdx.x below n, in blocks of at most 256
// threads (.maxntid); takes_pair(unsigned a, float2 v) does nothing, its
// second parameter aligned to 8 bytes as C aligns a float2. It has no NUL
// byte: LoadModule appends one.
const computePTX = `.version 6.0
.target sm_50
.address_size 64

.visible .entry add_one(.param .u64 add_one_p, .param .u32 add_one_n)
.maxntid 256, 1, 1
{
	.reg .pred %p1;
	.reg .b32 %r<6>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [add_one_p];
	ld.param.u32 %r1, [add_one_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	add.f32 %f2, %f1, 0f3F800000;
	st.global.f32 [%rd4], %f2;
DONE:
	ret;
}

.visible .entry takes_pair(.param .u32 takes_pair_a, .param .align 8 .b8 takes_pair_v[8])
{
	ret;
}
`

// computeSetup loads computePTX on dev and finds add_one.
func computeSetup(t *testing.T, dev *cuda.Device) (*cuda.Module, *cuda.Kernel) {
	t.Helper()
	m := must[*cuda.Module](t)(dev.LoadModule([]byte(computePTX)))
	t.Cleanup(func() { m.Close() })
	return m, must[*cuda.Kernel](t)(m.Kernel("add_one"))
}

// paramsKnown is whether Kernel.Params must be known: the build has
// cuFuncGetParamInfo (12.4 and later) and so has the driver.
func paramsKnown(t *testing.T) bool {
	v, err := cuda.DriverVersion()
	ok(t, err)
	return driver.HeaderVersion >= 12040 && v >= 12040
}

// waitAtLeast waits, on the fake driver, for counter name to reach at
// least want: where other tests' closed objects may still be freed on
// their contexts' goroutines, adding to it.
func waitAtLeast(t *testing.T, name string, want int64) {
	t.Helper()
	var v int64
	for i := 0; i < 6000; i++ { // a minute, as waitCounter
		if v, _ = fakeCounter(name); v >= want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s is %d a minute on, want at least %d", name, v, want)
}

// waitCounter waits, on the fake driver, for counter name to reach want
// (the flusher unloads and frees after Close returns), and says whether it
// did.
func waitCounter(t *testing.T, name string, want int64) bool {
	t.Helper()
	var v int64
	for i := 0; i < 6000; i++ { // a minute: the flusher's work, on a busy machine
		if v, _ = fakeCounter(name); v == want {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s is %d a minute on, want %d", name, v, want)
	return false
}

// isErr checks that err is a *cuda.Error matching target whose message
// contains each of words.
func isErr(t *testing.T, what string, err, target error, words ...string) {
	t.Helper()
	var ce *cuda.Error
	if !errors.Is(err, target) || !errors.As(err, &ce) {
		t.Errorf("%s: %v, want a *cuda.Error matching %v", what, err, target)
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
	if !strings.HasPrefix(err.Error(), "cuda: ") {
		t.Errorf("%s: %q does not begin with \"cuda: \"", what, err)
	}
}

// Modules load from PTX (a NUL appended) and from a file, find their
// kernels, report their parameters where the driver can and their
// attributes, refuse what the driver would misread, and once closed refuse
// every use with ErrClosed; the driver's module is unloaded once, by the
// flusher, and an adopted one never.
func TestLayerModuleKernels(t *testing.T) {
	released(t) // the earlier tests' objects destroyed: the counts start from here
	dev := gpu(t)
	_, fake := fakeCounter("fakecuda_live_modules")
	live0, _ := fakeCounter("fakecuda_live_modules")
	unloads0, _ := fakeCounter("fakecuda_module_unloads")
	m, k := computeSetup(t, dev)
	if m.Handle() == 0 || k.Handle() == 0 || k.Module() != m || k.Name() != "add_one" || m.Device() != dev {
		t.Errorf("accessors: module %#x, kernel %#x, %v, %q, %v", m.Handle(), k.Handle(), k.Module(), k.Name(), m.Device())
	}
	if fake {
		waitCounter(t, "fakecuda_live_modules", live0+1)
	}

	params, known := k.Params()
	if want := paramsKnown(t); known != want {
		t.Errorf("Params known: %v, want %v (driver.HeaderVersion %d)", known, want, driver.HeaderVersion)
	}
	if known && (len(params) != 2 || params[0] != (cuda.KernelParam{Offset: 0, Size: 8}) || params[1] != (cuda.KernelParam{Offset: 8, Size: 4})) {
		t.Errorf("add_one's parameters: %+v, want [{0 8} {8 4}]", params)
	}
	if known {
		params[0].Size = 99 // the caller's copy
		if again, _ := k.Params(); again[0].Size != 8 {
			t.Errorf("Params returned the kernel's own slice")
		}
	}
	a := must[cuda.KernelAttributes](t)(k.Attributes())
	if a.MaxThreadsPerBlock != 256 || a.PTXVersion != 50 || a.Registers <= 0 {
		t.Errorf("add_one's attributes: %+v, want MaxThreadsPerBlock 256 (.maxntid), PTXVersion 50 (.target sm_50) and some registers", a)
	}

	_, err := m.Kernel("no_such_kernel")
	isErr(t, "Kernel of a missing name", err, driver.ErrorNotFound, "no_such_kernel", "extern \"C\"")
	_, err = dev.LoadModule(nil)
	isErr(t, "LoadModule(nil)", err, driver.ErrorInvalidImage, "empty")
	_, err = dev.LoadModule([]byte("\x7fELF\x02\x01\x01"))
	isErr(t, "LoadModule of a cut ELF", err, driver.ErrorInvalidImage, "ELF")

	// The image is the driver's copy once LoadModule returns.
	img := []byte(computePTX)
	m3 := must[*cuda.Module](t)(dev.LoadModule(img))
	clear(img)
	must[*cuda.Kernel](t)(m3.Kernel("takes_pair"))
	ok(t, m3.Close())
	var nild *cuda.Device
	_, err = nild.LoadModuleFile("compute.ptx")
	isErr(t, "LoadModuleFile on a nil Device", err, cuda.ErrInvalid, "device")

	path := filepath.Join(t.TempDir(), "compute.ptx")
	ok(t, os.WriteFile(path, []byte(computePTX), 0o644))
	m2 := must[*cuda.Module](t)(dev.LoadModuleFile(path))
	must[*cuda.Kernel](t)(m2.Kernel("takes_pair"))
	ok(t, m2.Close())
	_, err = dev.LoadModuleFile(filepath.Join(t.TempDir(), "missing.ptx"))
	isErr(t, "LoadModuleFile of a missing file", err, fs.ErrNotExist, "missing.ptx")

	// Adopted: Close releases the wrapper only.
	ad := must[*cuda.Module](t)(dev.AdoptModule(m.Handle()))
	ka := must[*cuda.Kernel](t)(ad.Kernel("add_one"))
	ok(t, ad.Close())
	_, err = ad.Kernel("add_one")
	isErr(t, "Kernel of a closed adopted module", err, cuda.ErrClosed, "module is closed")
	_, err = ka.Attributes()
	isErr(t, "Attributes of a closed adopted module's kernel", err, cuda.ErrClosed, "kernel's module is closed")
	_, err = dev.AdoptModule(0)
	isErr(t, "AdoptModule(0)", err, cuda.ErrInvalid)
	if !errors.Is(err, cuda.ErrInvalidHandle) {
		t.Errorf("AdoptModule(0): %v, want it to match ErrInvalidHandle too", err)
	}
	must[*cuda.Kernel](t)(m.Kernel("add_one")) // the module itself is still loaded

	// Closed: every use refused, Close idempotent, one unload.
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	ok(t, m.Close())
	ok(t, m.Close())
	_, err = m.Kernel("add_one")
	isErr(t, "Kernel of a closed module", err, cuda.ErrClosed, "module is closed")
	_, err = k.Attributes()
	isErr(t, "Attributes of a closed module's kernel", err, cuda.ErrClosed)
	err = s.Launch(k, cuda.LaunchConfig{}, driver.Arg(driver.DevicePtr(0)), driver.Arg(uint32(0)))
	isErr(t, "Launch of a closed module's kernel", err, cuda.ErrClosed, "kernel's module is closed")
	if fake {
		waitCounter(t, "fakecuda_live_modules", live0)
		waitCounter(t, "fakecuda_module_unloads", unloads0+3) // m, m2 and m3, not the adopted wrapper
	}

	var nilm *cuda.Module
	isErr(t, "Close of a nil Module", nilm.Close(), cuda.ErrInvalid)
	_, err = nilm.Kernel("add_one")
	isErr(t, "Kernel of a nil Module", err, cuda.ErrInvalid)
	var nilk *cuda.Kernel
	_, err = nilk.Attributes()
	isErr(t, "Attributes of a nil Kernel", err, cuda.ErrInvalid)
	if _, known := nilk.Params(); known || nilk.Handle() != 0 || nilm.Handle() != 0 || nilk.String() != "cuda kernel <invalid>" || nilm.String() != "cuda module <invalid>" {
		t.Errorf("nil Kernel and Module accessors")
	}
}

// A launch reaches the kernel with its arguments and the configuration's
// grid and block, 0 dimensions counting as 1: add_one adds 1 to exactly the
// elements its threads cover.
func TestLayerLaunch(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	_, fake := fakeCounter("fakecuda_launches")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	const n = 1000
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i)
	}
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
	defer buf.Close()
	got := make([]float32, n)
	check := func(what string, covered int, add float32) {
		t.Helper()
		ok(t, s.Sync())
		ok(t, buf.CopyTo(got))
		for i := range got {
			want := float32(i)
			if i < covered {
				want += add
			}
			if got[i] != want {
				t.Fatalf("%s: element %d is %v, want %v", what, i, got[i], want)
			}
		}
	}
	dims := func(what string, g, b [3]int64) {
		t.Helper()
		if !fake {
			return
		}
		var have [6]int64
		for i, name := range []string{"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"} {
			have[i], _ = fakeCounter("fakecuda_last_" + name)
		}
		if want := [6]int64{g[0], g[1], g[2], b[0], b[1], b[2]}; have != want {
			t.Errorf("%s: the driver got grid and block %v, want %v", what, have, want)
		}
	}

	cfg := cuda.Linear(n, 256)
	if cfg != (cuda.LaunchConfig{Grid: cuda.Dim3{X: 4}, Block: cuda.Dim3{X: 256}}) {
		t.Errorf("Linear(1000, 256) = %+v", cfg)
	}
	ok(t, s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(n))))
	dims("Linear(1000, 256)", [3]int64{4, 1, 1}, [3]int64{256, 1, 1})
	check("a launch covering every element", n, 1)

	ok(t, buf.CopyFrom(host))
	ok(t, s.Launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 128}}, buf.Arg(), driver.Arg(uint32(n))))
	dims("2 blocks of 128", [3]int64{2, 1, 1}, [3]int64{128, 1, 1})
	check("2 blocks of 128 threads", 256, 1)

	ok(t, buf.CopyFrom(host))
	ok(t, s.Launch(k, cuda.LaunchConfig{}, buf.Arg(), driver.Arg(uint32(n))))
	dims("the zero LaunchConfig", [3]int64{1, 1, 1}, [3]int64{1, 1, 1})
	check("the zero LaunchConfig: one thread", 1, 1)

	// On the default streams too, and the copy after it on the legacy
	// default stream needs no Sync.
	ok(t, buf.CopyFrom(host))
	ok(t, dev.DefaultStream().Launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1, Y: 3}, Block: cuda.Dim3{X: 10, Z: 2}, SharedMem: 64}, buf.Arg(), driver.Arg(uint32(n))))
	dims("a launch with Y and Z set", [3]int64{1, 3, 1}, [3]int64{10, 1, 2})
	if sh, _ := fakeCounter("fakecuda_last_shmem"); fake && sh != 64 {
		t.Errorf("SharedMem reached the driver as %d, want 64", sh)
	}
	ok(t, buf.CopyTo(got))
	if got[9] != 10 || got[10] != 10 {
		t.Errorf("after a launch of 10 threads along X on the default stream: %v %v, want 10 10", got[9], got[10])
	}

	if c := cuda.Linear(0, 0); c != (cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 256}}) {
		t.Errorf("Linear(0, 0) = %+v, want one block of 256", c)
	}
	if c := cuda.Linear(1<<62, 1); c.Grid.X != 1<<32-1 {
		t.Errorf("Linear(1<<62, 1) has %d blocks, want MaxUint32", c.Grid.X)
	}
}

// What Launch refuses before the driver is called: the driver's launch
// count does not move.
func TestLayerLaunchRefused(t *testing.T) {
	dev := gpu(t)
	m, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 16))
	defer buf.Close()
	args := []driver.KernelArg{buf.Arg(), driver.Arg(uint32(16))}
	// A launch that passes first: arguments of its types pass later
	// without the checks, and the refusals below must still be made.
	ok(t, s.Launch(k, cuda.LaunchConfig{}, args...))
	launches, fake := fakeCounter("fakecuda_launches")

	err := s.Launch(k, cuda.LaunchConfig{Block: cuda.Dim3{X: 16, Y: 32}}, args...)
	isErr(t, "a block of 512 threads", err, cuda.ErrInvalidOptions, "512 threads", "at most 256")
	err = s.Launch(k, cuda.LaunchConfig{SharedMem: -1}, args...)
	isErr(t, "SharedMem -1", err, cuda.ErrInvalidOptions, "SharedMem -1")
	err = s.Launch(nil, cuda.LaunchConfig{}, args...)
	isErr(t, "a nil kernel", err, cuda.ErrInvalid, "kernel")
	var nils *cuda.Stream
	isErr(t, "a nil stream", nils.Launch(k, cuda.LaunchConfig{}, args...), cuda.ErrInvalid, "stream")
	if paramsKnown(t) {
		err = s.Launch(k, cuda.LaunchConfig{}, buf.Arg())
		isErr(t, "one argument of two", err, cuda.ErrMismatch, "takes 2 parameters", "1 arguments")
		err = s.Launch(k, cuda.LaunchConfig{}, buf.Arg(), driver.Arg(16)) // an int is 8 bytes
		isErr(t, "an int for a C unsigned", err, cuda.ErrMismatch, "argument 1", "int of 8 bytes", "takes 4 bytes")
		// The driver places each argument at its parameter's offset: a
		// [2]float32 (Go aligns it to 4) is a float2 (C aligns it to 8).
		pair := must[*cuda.Kernel](t)(m.Kernel("takes_pair"))
		ok(t, s.Launch(pair, cuda.LaunchConfig{}, driver.Arg(uint32(1)), driver.ArgStruct([2]float32{1, 2})))
		launches++
		err = s.Launch(pair, cuda.LaunchConfig{}, driver.Arg(uint32(1)), driver.ArgStruct([3]float32{1, 2, 3}))
		isErr(t, "a [3]float32 for a float2", err, cuda.ErrMismatch, "argument 1", "12 bytes", "takes 8 bytes")
	} else {
		t.Log("the driver or the build cannot tell kernels' parameters: the argument checks are not made")
	}
	err = s.Launch(k, cuda.LaunchConfig{}, buf.Arg(), driver.KernelArg{})
	isErr(t, "a zero KernelArg", err, cuda.ErrInvalid, "argument 1", "zero KernelArg")
	err = s.Launch(k, cuda.LaunchConfig{}, buf.Arg(), driver.ArgStruct(struct{ P *int }{}))
	isErr(t, "a struct holding a Go pointer", err, cuda.ErrInvalidType, "argument 1", "Go pointers")
	if n, _ := fakeCounter("fakecuda_launches"); fake && n != launches {
		t.Errorf("the refused launches reached the driver: %d launches, want %d", n, launches)
	}
	ok(t, s.Close())
	isErr(t, "a closed stream", s.Launch(k, cuda.LaunchConfig{}, args...), cuda.ErrClosed, "stream is closed")

	// A kernel of another device's module.
	if n, _ := cuda.DeviceCount(); n >= 2 {
		dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
		defer dev1.Close()
		_, k1 := computeSetup(t, dev1)
		isErr(t, "a kernel of device 1 on a stream of device 0", dev.DefaultStream().Launch(k1, cuda.LaunchConfig{}, args...), cuda.ErrWrongDevice, "device 1", "device 0")
	} else {
		t.Log("one device: the launch across devices is not tried")
	}
}

// Launch and the copies allocate nothing in steady state.
func TestLayerLaunchNoAllocations(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	host := make([]float32, 64)
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
	defer buf.Close()
	bigHost := make([]float32, 6<<20)
	big := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, len(bigHost)))
	defer big.Close()
	ok(t, big.CopyFrom(bigHost)) // the staging memory
	cfg := cuda.Linear(len(host), 64)
	var failed error
	for name, f := range map[string]func() error{
		"Launch":   func() error { return s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(len(host)))) },
		"CopyFrom": func() error { return buf.CopyFrom(host) },
		"CopyTo":   func() error { return buf.CopyTo(host) },
		// In chunks staged by several goroutines.
		"CopyFrom of 24 MiB": func() error { return big.CopyFrom(bigHost) },
		"CopyTo of 24 MiB":   func() error { return big.CopyTo(bigHost) },
	} {
		failed = nil
		runs := 1000
		if strings.HasSuffix(name, "MiB") {
			runs = 10
		}
		n := testing.AllocsPerRun(runs, func() {
			if err := f(); err != nil && failed == nil {
				failed = err
			}
		})
		if failed != nil {
			t.Errorf("%s failed: %v", name, failed)
		}
		if n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
	ok(t, s.Sync())
}

// Buffers copy values of any plain type both ways, refuse lengths other
// than theirs before the driver is called, refuse element types with Go
// pointers, and once closed refuse every copy with ErrClosed and report
// address 0; the driver's memory is freed once, by the flusher.
func TestLayerBuffer(t *testing.T) {
	released(t) // the earlier tests' objects destroyed: the counts start from here
	dev := gpu(t)
	allocs0, fake := fakeCounter("fakecuda_live_allocs")
	bytes0, _ := fakeCounter("fakecuda_alloc_bytes")
	frees0, _ := fakeCounter("fakecuda_mem_frees")

	type pair struct {
		A int32
		B float64
	}
	src := []pair{{1, 1.5}, {-2, 2.5}, {3, -3.5}}
	b := must[*cuda.Buffer[pair]](t)(cuda.Alloc[pair](dev, len(src)))
	if b.Len() != 3 || b.Ptr() == 0 || b.Device() != dev || !strings.Contains(b.String(), "buffer of 3") {
		t.Errorf("accessors: Len %d, Ptr %#x, %v, %q", b.Len(), b.Ptr(), b.Device(), b)
	}
	if n, _ := fakeCounter("fakecuda_alloc_bytes"); fake && n != bytes0+3*16 {
		t.Errorf("the driver allocated %d bytes, want 48", n-bytes0)
	}
	syncs0, _ := fakeCounter("fakecuda_event_syncs")
	ok(t, b.CopyFrom(src))
	// The transfer from staging memory is asynchronous: CopyFrom waits for
	// the event recorded after it.
	if n, _ := fakeCounter("fakecuda_event_syncs"); fake && n < syncs0+1 {
		t.Errorf("CopyFrom waited for no event: its transfer may be under way")
	}
	dst := make([]pair, 3)
	ok(t, b.CopyTo(dst))
	if dst[0] != src[0] || dst[1] != src[1] || dst[2] != src[2] {
		t.Errorf("round trip: %v, want %v", dst, src)
	}
	isErr(t, "CopyFrom of 2 values into 3", b.CopyFrom(src[:2]), cuda.ErrMismatch, "src holds 2 values", "buffer 3")
	isErr(t, "CopyTo of 3 values into 4", b.CopyTo(make([]pair, 4)), cuda.ErrMismatch, "dst holds 4 values")

	// Element types.
	_, err := cuda.Alloc[*int](dev, 1)
	isErr(t, "Alloc[*int]", err, cuda.ErrInvalidType, "*int")
	_, err = cuda.Alloc[struct{ S string }](dev, 1)
	isErr(t, "Alloc of a struct with a string", err, cuda.ErrInvalidType)
	_, err = cuda.Alloc[[]float32](dev, 1)
	isErr(t, "Alloc[[]float32]", err, cuda.ErrInvalidType)
	_, err = cuda.Alloc[struct{}](dev, 1)
	isErr(t, "Alloc[struct{}]", err, cuda.ErrInvalidType, "size 0")
	_, err = cuda.Alloc[struct {
		A int32
		_ [0]int32 // Go pads the struct to 8 bytes, C would not
	}](dev, 1)
	isErr(t, "Alloc of a struct ending in a zero-length array", err, cuda.ErrInvalidType)
	_, err = cuda.Alloc[float32](dev, -1)
	isErr(t, "Alloc of -1 values", err, cuda.ErrInvalidOptions, "-1 values")
	_, err = cuda.Alloc[float64](dev, 1<<61)
	isErr(t, "Alloc of 2^61 float64", err, cuda.ErrInvalidOptions)
	if n, _ := fakeCounter("fakecuda_live_allocs"); fake && n != allocs0+1 {
		t.Errorf("the refused Allocs reached the driver: %d allocations, want %d", n, allocs0+1)
	}

	// An empty buffer holds no memory.
	e := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 0))
	if e.Len() != 0 || e.Ptr() != 0 {
		t.Errorf("empty buffer: Len %d, Ptr %#x", e.Len(), e.Ptr())
	}
	ok(t, e.CopyFrom(nil))
	ok(t, e.CopyTo([]float32{}))
	isErr(t, "CopyFrom of 1 value into an empty buffer", e.CopyFrom([]float32{1}), cuda.ErrMismatch)
	ok(t, e.Close())

	// Closed.
	ok(t, b.Close())
	ok(t, b.Close())
	if b.Ptr() != 0 {
		t.Errorf("Ptr of a closed buffer: %#x, want 0", b.Ptr())
	}
	isErr(t, "CopyFrom of a closed buffer", b.CopyFrom(src), cuda.ErrClosed, "buffer is closed")
	isErr(t, "CopyTo of a closed buffer", b.CopyTo(dst), cuda.ErrClosed, "buffer is closed")
	if fake {
		waitCounter(t, "fakecuda_live_allocs", allocs0)
		waitCounter(t, "fakecuda_mem_frees", frees0+1) // the empty buffer freed nothing
	}

	var nilb *cuda.Buffer[float32]
	isErr(t, "CopyFrom of a nil Buffer", nilb.CopyFrom(nil), cuda.ErrInvalid, "buffer")
	isErr(t, "Close of a nil Buffer", nilb.Close(), cuda.ErrInvalid, "buffer")
	if nilb.Len() != 0 || nilb.Ptr() != 0 || nilb.Device() != nil || nilb.String() != "cuda buffer <invalid>" {
		t.Errorf("nil Buffer accessors")
	}
	_, err = cuda.Alloc[float32](nil, 1)
	isErr(t, "Alloc on a nil Device", err, cuda.ErrInvalid, "device")
}

// The last Device's Close closes its modules and buffers, which then refuse
// use with ErrClosed naming the device; the package unloads and frees them
// (the driver's calls, before the context's release) and Done follows.
func TestLayerComputeClosedWithDevice(t *testing.T) {
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	released(t)
	c0 := readCounters()
	dev := must[*cuda.Device](t)(cuda.GetDevice(0)) // the only open Device here
	frees0, fake := fakeCounter("fakecuda_mem_frees")
	unloads0, _ := fakeCounter("fakecuda_module_unloads")
	m := must[*cuda.Module](t)(dev.LoadModule([]byte(computePTX)))
	k := must[*cuda.Kernel](t)(m.Kernel("add_one"))
	b1 := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 8))
	b2 := must[*cuda.Buffer[int64]](t)(cuda.Alloc[int64](dev, 8))
	ok(t, dev.Close())
	isErr(t, "CopyFrom after the device closed", b1.CopyFrom(make([]float32, 8)), cuda.ErrClosed, "buffer's device is closed")
	isErr(t, "CopyTo after the device closed", b2.CopyTo(make([]int64, 8)), cuda.ErrClosed, "device")
	_, err := m.Kernel("add_one")
	isErr(t, "Kernel after the device closed", err, cuda.ErrClosed, "module's device is closed")
	_, err = k.Attributes()
	isErr(t, "Attributes after the device closed", err, cuda.ErrClosed, "device")
	_, err = cuda.Alloc[float32](dev, 1)
	isErr(t, "Alloc on a closed device", err, cuda.ErrClosed)
	_, err = dev.LoadModule([]byte(computePTX))
	isErr(t, "LoadModule on a closed device", err, cuda.ErrClosed)
	select {
	case <-dev.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done not closed 30s after the last Device closed")
	}
	if fake {
		if n, _ := fakeCounter("fakecuda_mem_frees"); n != frees0+2 {
			t.Errorf("the package freed %d buffers, want 2", n-frees0)
		}
		if n, _ := fakeCounter("fakecuda_module_unloads"); n != unloads0+1 {
			t.Errorf("the package unloaded %d modules, want 1", n-unloads0)
		}
	}
	ok(t, b1.Close()) // nothing left to free
	ok(t, m.Close())
	settle(t, c0)
}

// Modules and buffers never closed are released by the garbage collector,
// counted in Leaked.
func TestLayerComputeLeaked(t *testing.T) {
	released(t) // the earlier tests' objects destroyed: the counts start from here
	dev := gpu(t)
	frees0, fake := fakeCounter("fakecuda_mem_frees")
	unloads0, _ := fakeCounter("fakecuda_module_unloads")
	before := cuda.Leaked()
	func() {
		must[*cuda.Module](t)(dev.LoadModule([]byte(computePTX)))
		must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 8))
	}()
	for i := 0; i < 100 && cuda.Leaked()-before < 2; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := cuda.Leaked() - before; n != 2 {
		t.Errorf("Leaked grew by %d, want 2 (a module and a buffer)", n)
	}
	if fake {
		waitCounter(t, "fakecuda_mem_frees", frees0+1)
		waitCounter(t, "fakecuda_module_unloads", unloads0+1)
	}
}

// Close racing with launches (prepared or not) and copies in other
// goroutines: each call either runs whole or is refused with ErrClosed, and
// no driver call runs with an unloaded module or freed memory (the fake refuses those with
// INVALID_HANDLE and INVALID_VALUE, which would surface here).
func TestLayerComputeCloseRacesWithUse(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	for round := 0; round < 200; round++ {
		m := must[*cuda.Module](t)(dev.LoadModule([]byte(computePTX)))
		k := must[*cuda.Kernel](t)(m.Kernel("add_one"))
		host := make([]float32, 256)
		b := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		start := make(chan struct{})
		for g := 0; g < 4; g++ {
			// Goroutines 2 and 3 launch prepared launches, one each.
			l := must[*cuda.PreparedLaunch](t)(k.Prepare(cuda.Linear(256, 256), driver.Arg(driver.DevicePtr(0)), driver.Arg(uint32(0))))
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := make([]float32, 256)
				<-start
				var kerr, berr error
				for i := 0; i < 200 && (kerr == nil || berr == nil); i++ {
					switch {
					case kerr == nil && g < 2:
						kerr = s.Launch(k, cuda.Linear(256, 256), driver.Arg(driver.DevicePtr(0)), driver.Arg(uint32(0)))
					case kerr == nil:
						kerr = s.LaunchPrepared(l)
					}
					if berr == nil {
						if g%2 == 0 {
							berr = b.CopyFrom(h)
						} else {
							berr = b.CopyTo(h)
						}
					}
				}
				for _, err := range []error{kerr, berr} {
					if err != nil && !errors.Is(err, cuda.ErrClosed) {
						errs <- err
						return
					}
				}
			}()
		}
		close(start)
		runtime.Gosched()
		ok(t, m.Close())
		ok(t, b.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: a call racing with Close: %v", round, err)
		}
	}
	ok(t, s.Sync())
}

// A buffer's free waits for its context's pending work, as the driver's
// does: it waits on the context's own goroutine, never on the flusher, so
// that other objects' destroys go on meanwhile. The fake's free gate
// stands for work that does not end: a stream closed after the buffer is
// destroyed while the free still waits (a state).
func TestLayerBufferFreeOffFlusher(t *testing.T) {
	dev := fakeOnly(t)
	waitCounter(t, "fakecuda_frees_waiting", 0) // the earlier tests' frees done
	if !fakeSet("fakecuda_gate_free", 1) {
		t.Fatal("the fake driver has no free gate")
	}
	opened := true
	defer func() {
		if opened {
			fakeSet("fakecuda_gate_free", 0)
		}
	}()
	b := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 16))
	ok(t, b.Close())
	// Its free waits at the gate (an earlier test's buffers, freed after
	// their work, may wait there too).
	for i := 0; ; i++ {
		if n, _ := fakeCounter("fakecuda_frees_waiting"); n >= 1 {
			break
		}
		if i == 6000 {
			t.Fatal("no free reached the fake's gate in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The fake watches this stream's handle: it reports the handle's
	// destroy itself (earlier tests' late destroys move the count of live
	// handles too).
	s := must[*cuda.Stream](t)(dev.NewStream())
	if !fakeSet("fakecuda_watch_handle", int64(s.Handle())) || !fakeSet("fakecuda_watched_destroyed", 0) {
		t.Fatal("the fake driver cannot watch a handle")
	}
	ok(t, s.Close())
	if !waitCounter(t, "fakecuda_watched_destroyed", 1) {
		t.Fatal("a stream closed while a buffer's free waits was not destroyed: the free holds the flusher")
	}
	if n, _ := fakeCounter("fakecuda_frees_waiting"); n < 1 {
		t.Fatal("no free waits at the gate any more, with the gate closed")
	}
	fakeSet("fakecuda_gate_free", 0)
	opened = false
	waitCounter(t, "fakecuda_frees_waiting", 0)
}
