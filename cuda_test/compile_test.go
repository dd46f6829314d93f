//go:build cgo

package gputest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/nvrtc"
)

// compileSrc is add_one in CUDA C++, with its scale from an in-memory
// header and a define: the fake NVRTC (cuda/nvrtc/testdata/fakenvrtc.c)
// makes an entry point the fake driver runs from it.
const compileSrc = `#include "step.h"
extern "C" __global__ void add_one(float *p, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] += STEP * ONE;
}
`

// TestLayerCompile compiles add_one with NVRTC for the device's compute
// capability, loads and launches it; a source that does not compile
// returns NVRTC's log in its error; bad options and a closed device are
// refused before NVRTC is called. In a build without NVRTC bindings, or
// on a GPU machine without NVRTC, Compile says so.
func TestLayerCompile(t *testing.T) {
	dev := gpu(t)
	o := cuda.CompileOptions{Name: "add_one.cu", Headers: map[string]string{"step.h": "#define STEP 1\n"}, Defines: map[string]string{"ONE": "1.0f"}, Std: "c++17", LineInfo: true}
	p, err := dev.Compile(compileSrc, o)
	if nvrtc.BuildTag == "" {
		if !errors.Is(err, nvrtc.ErrNoLibrary) || !strings.Contains(err.Error(), "has no NVRTC bindings") || !strings.HasPrefix(err.Error(), "cuda: compile: ") {
			t.Fatalf("Compile in a build without NVRTC bindings: %v; want an error matching nvrtc.ErrNoLibrary that says so", err)
		}
		return
	}
	if errors.Is(err, nvrtc.ErrNoLibrary) && os.Getenv("CUDAGEN_LIBNVRTC") == "" && !onFake() {
		t.Skipf("skipping: this machine has no NVRTC of the build's toolkit (%s): %v", nvrtc.HeaderVersion, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	d := must[driver.Device](t)(driver.DeviceGet(int32(dev.Ordinal())))
	major := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, d))
	minor := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, d))
	arch := fmt.Sprintf("--gpu-architecture=compute_%d%d", major, minor)
	if len(p.Options) == 0 || p.Options[0] != arch || !containsAll(p.Options, "-std=c++17", "-lineinfo", "-DONE=1.0f") {
		t.Errorf("options given NVRTC: %q; want %s first, then -std=c++17, -lineinfo and -DONE=1.0f", p.Options, arch)
	}
	if p.Output != cuda.OutputPTX || !bytes.Contains(p.Image, []byte(".entry add_one")) || p.Image[len(p.Image)-1] != 0 {
		t.Fatalf("Compile's PTX (%d bytes) has no entry add_one, or no NUL at its end", len(p.Image))
	}

	m, p2, err := dev.CompileModule(compileSrc, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !bytes.Equal(p2.Image, p.Image) {
		t.Errorf("CompileModule compiled other PTX than Compile")
	}
	k := must[*cuda.Kernel](t)(m.Kernel("add_one"))
	host := []float32{1, 2, 3, 4}
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
	defer buf.Close()
	s := dev.DefaultStream()
	ok(t, s.Launch(k, cuda.Linear(len(host), 32), buf.Arg(), driver.Arg(uint32(len(host)))))
	got := make([]float32, len(host))
	ok(t, buf.CopyTo(got))
	if got[0] != 2 || got[3] != 5 {
		t.Errorf("add_one compiled by NVRTC: %v, want [2 3 4 5]", got)
	}

	// A CUBIN for the device's own architecture (the fake NVRTC has none).
	oc := o
	oc.Output = cuda.OutputCUBIN
	cub, err := dev.Compile(compileSrc, oc)
	switch {
	case onFake() && !errors.Is(err, nvrtc.ErrNotSupported):
		t.Errorf("Compile to a CUBIN with the fake NVRTC, which lacks nvrtcGetCUBIN: %v; want nvrtc.ErrNotSupported", err)
	case !onFake() && (err != nil || len(cub.Image) == 0 || cub.Output != cuda.OutputCUBIN || cub.Options[0] != fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor)):
		t.Errorf("Compile to a CUBIN: %v", err)
	}

	// A source that does not compile: NVRTC's log in the error.
	_, err = dev.Compile("__global__ void k() {}\n#error no\n", cuda.CompileOptions{Name: "bad.cu"})
	var ce *cuda.Error
	if !errors.Is(err, nvrtc.ErrorCompilation) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "bad.cu does not compile:") || !strings.Contains(err.Error(), "bad.cu(2)") {
		t.Errorf("Compile of bad source: %v; want a *cuda.Error matching nvrtc.ErrorCompilation with NVRTC's log (bad.cu, line 2)", err)
	}
	_, err = dev.Compile(compileSrc, cuda.CompileOptions{Options: []string{"no-dash"}})
	if !errors.Is(err, nvrtc.ErrorInvalidOption) {
		t.Errorf("Compile with an option NVRTC does not know: %v; want nvrtc.ErrorInvalidOption", err)
	}
	_, err = dev.Compile(compileSrc, cuda.CompileOptions{Defines: map[string]string{"A=B": ""}})
	isErr(t, "Compile with a define that is no macro name", err, cuda.ErrInvalidOptions, "A=B")
	_, _, err = dev.CompileModule(compileSrc, cuda.CompileOptions{Output: cuda.OutputLTOIR})
	isErr(t, "CompileModule to LTO-IR", err, cuda.ErrInvalidOptions, "nvJitLink")

	d2 := gpu(t)
	ok(t, d2.Close())
	_, err = d2.Compile(compileSrc, cuda.CompileOptions{})
	isErr(t, "Compile on a closed device", err, cuda.ErrClosed, "closed")
}

// containsAll says whether every want is among have.
func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
