//go:build cuda11.8 || (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

// The tests of the bound functions on the fake NVRTC. The generator keeps
// the build line above the tags of the versions that bind NVRTC.
//
//cudagen:bound

package nvrtc

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/internal/libtest"
)

// onFake runs the test named run in a child process on the fake NVRTC,
// in a build that binds it.
func onFake(t *testing.T, run string) {
	t.Helper()
	libtest.Bound(t, BuildTag, "NVRTC", unboundWhy)
	libtest.OnFake(t, withCgo, run, "CUDAGEN_LIBNVRTC", "testdata/fakenvrtc.c")
}

func TestFake(t *testing.T) {
	onFake(t, "TestFakeChild")
}

func TestFakeChild(t *testing.T) {
	libtest.InFake(t, Load, Version)
	archs, err := GetSupportedArchs()
	if err != nil || len(archs) != 3 || archs[0] != 75 || archs[2] != 90 {
		t.Fatalf("GetSupportedArchs: %v, %v; the fake has [75 80 90]", archs, err)
	}

	// Slices that share a count are refused before the call.
	p, err := CreateProgram("x", "x.cu", []string{"a"}, nil)
	if !errors.Is(err, ErrInvalidSize) || p != 0 {
		t.Fatalf("CreateProgram with 1 header and 0 names: %v, %v; want ErrInvalidSize and no program", p, err)
	}

	p, err = CreateProgram("#include \"k.h\"\nextern \"C\" __global__ void k() {}\n", "k.cu", []string{"#define N 4\n"}, []string{"k.h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddNameExpression(p, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := GetLoweredName(p, "k"); !errors.Is(err, ErrorNoLoweredNamesBeforeCompilation) {
		t.Fatalf("GetLoweredName before compiling: %v, want NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION", err)
	}
	runtime.GC() // nothing of Go's is kept by the library
	if err := CompileProgram(p, []string{"--gpu-architecture=compute_90", "-DN=4"}); err != nil {
		t.Fatal(err)
	}
	ptx, err := GetPTX(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ptx) == 0 || ptx[len(ptx)-1] != 0 || !bytes.Contains(ptx, []byte("--gpu-architecture=compute_90 -DN=4")) || !bytes.Contains(ptx, []byte("k.cu")) {
		t.Fatalf("GetPTX: %q; want the fake's PTX naming k.cu and the options, ending in NUL", ptx)
	}
	if log, err := GetProgramLog(p); err != nil || log != "" {
		t.Fatalf("GetProgramLog after a clean compile: %q, %v", log, err)
	}
	if name, err := GetLoweredName(p, "k"); err != nil || name != "_Z6loweredv" {
		t.Fatalf("GetLoweredName: %q, %v", name, err)
	}
	if _, err := GetLoweredName(p, "other"); !errors.Is(err, ErrorNameExpressionNotValid) {
		t.Fatalf("GetLoweredName of a name never added: %v", err)
	}
	if _, err := GetCUBIN(p); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "nvrtcGetCUBINSize") {
		t.Fatalf("GetCUBIN from a library without it: %v, want ErrNotSupported naming the function", err)
	}
	if err := DestroyProgram(&p); err != nil || p != 0 {
		t.Fatalf("DestroyProgram: %v, program %v after", err, p)
	}
	q := Program(0)
	if err := DestroyProgram(&q); !errors.Is(err, ErrorInvalidProgram) {
		t.Fatalf("DestroyProgram of no program: %v", err)
	}

	// A failed compile: the result, the function and the log.
	p, err = CreateProgram("__global__ void k() {}\n#error bad\n", "bad.cu", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer DestroyProgram(&p)
	err = CompileProgram(p, nil)
	var e *Error
	if !errors.Is(err, ErrorCompilation) || !errors.As(err, &e) || e.Func != "nvrtcCompileProgram" ||
		!strings.HasPrefix(err.Error(), "cuda: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6): ") || !strings.Contains(err.Error(), "GetProgramLog") {
		t.Fatalf("CompileProgram of bad source: %v", err)
	}
	log, err := GetProgramLog(p)
	if err != nil || !strings.Contains(log, "bad.cu(2): error: #error") || strings.ContainsRune(log, 0) {
		t.Fatalf("GetProgramLog: %q, %v; want the fake's message for line 2, without its NUL", log, err)
	}
	if err := CompileProgram(p, []string{"bogus"}); !errors.Is(err, ErrorInvalidOption) {
		t.Fatalf("CompileProgram with an option NVRTC does not know: %v", err)
	}
}

// TestFirstCalls: calls racing to be the first (each resolving the
// library) all succeed, and -race finds no unsynchronized access.
func TestFirstCalls(t *testing.T) {
	onFake(t, "TestFirstCallsChild")
}

func TestFirstCallsChild(t *testing.T) {
	libtest.InChild(t)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, _, err := Version()
			if err == nil {
				_, err = GetNumSupportedArchs()
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
