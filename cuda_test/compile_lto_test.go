//go:build cgo

package gputest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/nvjitlink"
	"github.com/cudagen/cudagen/cuda/nvrtc"
)

// TestCompileLTO compiles add_one to LTO-IR with NVRTC, links it with
// nvJitLink (-lto) into a CUBIN for the device's architecture, loads and
// launches it; then links two LTO-IR objects, a saxpy kernel and the
// device function it calls, compiled apart (-rdc=true), into one CUBIN
// whose saxpy is checked; nvJitLink's error log comes back for an input
// it cannot link. It needs a GPU, NVRTC and nvJitLink of the build's toolkit.
func TestCompileLTO(t *testing.T) {
	dev := gpu(t)
	if _, err := nvjitlink.Load(); errors.Is(err, nvjitlink.ErrNoLibrary) {
		t.Skipf("skipping: no nvJitLink of this build's toolkit: %v", err)
	}
	o := cuda.CompileOptions{Name: "add_one.cu", Headers: map[string]string{"step.h": "#define STEP 1\n"}, Defines: map[string]string{"ONE": "1.0f"}, Output: cuda.OutputLTOIR}
	p, err := dev.Compile(compileSrc, o)
	if errors.Is(err, nvrtc.ErrNoLibrary) {
		t.Skipf("skipping: no NVRTC of this build's toolkit: %v", err)
	}
	ok(t, err)
	d := must[driver.Device](t)(driver.DeviceGet(int32(dev.Ordinal())))
	major := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, d))
	minor := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, d))
	opts := []string{fmt.Sprintf("-arch=sm_%d%d", major, minor), "-lto"}
	if h, err := nvjitlink.Create(opts); errors.Is(err, nvjitlink.ErrNotSupported) {
		// nvJitLink exports each toolkit's entry points under its
		// version (__nvJitLinkCreate_12_4): a newer library lacks them.
		t.Skipf("skipping: the loaded nvJitLink lacks this build's entry points: %v", err)
	} else {
		ok(t, err)
		ok(t, nvjitlink.Destroy(&h))
	}
	// link links LTO-IR objects into a CUBIN.
	link := func(objs map[string][]byte) []byte {
		t.Helper()
		h := must[nvjitlink.Handle](t)(nvjitlink.Create(opts))
		defer func() { ok(t, nvjitlink.Destroy(&h)) }()
		for name, image := range objs {
			ok(t, nvjitlink.AddData(h, nvjitlink.InputLTOIR, image, name))
		}
		ok(t, nvjitlink.Complete(h))
		return must[[]byte](t)(nvjitlink.GetLinkedCUBIN(h))
	}
	cubin := link(map[string][]byte{"add_one.ltoir": p.Image})
	m := must[*cuda.Module](t)(dev.LoadModule(cubin))
	defer m.Close()
	k := must[*cuda.Kernel](t)(m.Kernel("add_one"))
	host := []float32{1, 2, 3, 4}
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
	defer buf.Close()
	ok(t, dev.DefaultStream().Launch(k, cuda.Linear(len(host), 32), buf.Arg(), driver.Arg(uint32(len(host)))))
	got := make([]float32, len(host))
	ok(t, buf.CopyTo(got))
	if got[0] != 2 || got[3] != 5 {
		t.Fatalf("add_one linked from LTO-IR: %v, want [2 3 4 5]", got)
	}

	// Two objects: a kernel calling a device function that the other
	// defines (relocatable device code, -rdc=true), linked into one CUBIN.
	lib := `extern "C" __device__ float scaled(float x, float a) { return a * x; }`
	kern := `extern "C" __device__ float scaled(float x, float a);
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = scaled(x[i], a) + y[i];
}`
	rdc := []string{"-rdc=true"}
	pl := must[*cuda.Program](t)(dev.Compile(lib, cuda.CompileOptions{Name: "scaled.cu", Output: cuda.OutputLTOIR, Options: rdc}))
	pm := must[*cuda.Program](t)(dev.Compile(kern, cuda.CompileOptions{Name: "saxpy.cu", Output: cuda.OutputLTOIR, Options: rdc}))
	cubin2 := link(map[string][]byte{"saxpy.ltoir": pm.Image, "scaled.ltoir": pl.Image})
	m2 := must[*cuda.Module](t)(dev.LoadModule(cubin2))
	defer m2.Close()
	saxpy := must[*cuda.Kernel](t)(m2.Kernel("saxpy"))
	const n = 1000
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i), float32(2*i)
	}
	x := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, xs))
	defer x.Close()
	y := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, ys))
	defer y.Close()
	ok(t, dev.DefaultStream().Launch(saxpy, cuda.Linear(n, 128), driver.Arg(float32(3)), x.Arg(), y.Arg(), driver.Arg(uint32(n))))
	ok(t, y.CopyTo(ys))
	for i, v := range ys {
		if want := float32(3*i + 2*i); v != want {
			t.Fatalf("saxpy linked from two LTO-IR objects: y[%d] = %v, want %v", i, v, want)
		}
	}

	// An input that is not LTO-IR: the link fails, saying why in its log.
	bad := must[nvjitlink.Handle](t)(nvjitlink.Create(opts))
	defer func() { ok(t, nvjitlink.Destroy(&bad)) }()
	err = nvjitlink.AddData(bad, nvjitlink.InputLTOIR, []byte("not LTO-IR at all"), "bad.ltoir")
	if err == nil {
		err = nvjitlink.Complete(bad)
	}
	var le *nvjitlink.Error
	if !errors.As(err, &le) {
		t.Fatalf("linking garbage as LTO-IR: %v, want a *nvjitlink.Error", err)
	}
	log, _ := nvjitlink.GetErrorLog(bad)
	t.Logf("linked %d bytes of LTO-IR into a %d-byte CUBIN, and two objects (%d and %d bytes) into a %d-byte one whose saxpy ran; garbage refused: %v (log %q)",
		len(p.Image), len(cubin), len(pm.Image), len(pl.Image), len(cubin2), err, log)
}

// benchCompileSrc is the README's SAXPY kernel, as bench/pybench's
// COMPILE_SRC.
const benchCompileSrc = `extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}`

// BenchmarkCompile times NVRTC compiling benchCompileSrc to PTX for the
// device (Device.Compile: program creation, compilation, the log and the
// PTX), each compile apart: it reports their median, 10th and 90th
// percentiles in microseconds, as bench/pybench's compile mode does for
// cuda.core's Program on the same source.
func BenchmarkCompile(b *testing.B) {
	dev := gpu(b)
	o := cuda.CompileOptions{Name: "saxpy.cu"}
	if _, err := dev.Compile(benchCompileSrc, o); errors.Is(err, nvrtc.ErrNoLibrary) {
		b.Skipf("skipping: no NVRTC of this build's toolkit: %v", err)
	}
	var us []float64
	for b.Loop() {
		t0 := time.Now()
		_ = must[*cuda.Program](b)(dev.Compile(benchCompileSrc, o))
		us = append(us, float64(time.Since(t0).Nanoseconds())/1e3)
	}
	slices.Sort(us)
	at := func(q float64) float64 { return us[int(q*float64(len(us)-1))] } // pybench's _q
	b.ReportMetric(at(0.5), "median-us/compile")
	b.ReportMetric(at(0.1), "p10-us/compile")
	b.ReportMetric(at(0.9), "p90-us/compile")
}
