//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

// The tests of the bound functions on the fake nvJitLink. The generator
// keeps the build line above the tags of the versions that bind nvJitLink.
//
//cudagen:bound

package nvjitlink

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/internal/libtest"
	"github.com/cudagen/cudagen/cuda/internal/osthread"
	"github.com/cudagen/cudagen/internal/threadtest"
)

func TestFake(t *testing.T) {
	libtest.Bound(t, BuildTag, "nvJitLink", unboundWhy)
	libtest.OnFake(t, withCgo, "TestFakeChild", "CUDAGEN_LIBNVJITLINK", "testdata/fakenvjitlink.c")
}

func TestFakeChild(t *testing.T) {
	libtest.InFake(t, Load, Version)
	if _, err := Create(nil); !errors.Is(err, ErrorMissingArch) || !strings.HasPrefix(err.Error(), "cuda: nvJitLinkCreate: NVJITLINK_ERROR_MISSING_ARCH (2): ") {
		t.Fatalf("Create without -arch: %v", err)
	}
	h, err := Create([]string{"-arch=sm_90", "-lto"})
	if err != nil {
		t.Fatal(err)
	}
	a := []byte("LTO-IR of a")
	if err := AddData(h, InputLTOIR, a, "a.ltoir"); err != nil {
		t.Fatal(err)
	}
	copy(a, "overwritten") // the library copied it: nothing of Go's is kept
	runtime.GC()
	file := filepath.Join(t.TempDir(), "b.ltoir")
	if err := os.WriteFile(file, []byte("LTO-IR of b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AddFile(h, InputLTOIR, file); err != nil {
		t.Fatal(err)
	}
	if err := AddData(h, InputLTOIR, nil, "empty"); !errors.Is(err, ErrorInvalidInput) {
		t.Fatalf("AddData of no data: %v", err)
	}
	if err := Complete(h); err != nil {
		t.Fatal(err)
	}
	cubin, err := GetLinkedCUBIN(h)
	if want := "FAKECUBIN sm_90 a.ltoir;" + file + ";"; err != nil || string(cubin) != want {
		t.Fatalf("GetLinkedCUBIN: %q, %v; want %q", cubin, err, want)
	}
	if _, err := GetLinkedPTX(h); !errors.Is(err, ErrorInvalidInput) {
		t.Fatalf("GetLinkedPTX of a CUBIN link: %v", err)
	}
	if _, err := GetInfoLog(h); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "nvJitLinkGetInfoLogSize") {
		t.Fatalf("GetInfoLog from a library without it: %v, want ErrNotSupported naming the function", err)
	}
	if err := Destroy(&h); err != nil || h != 0 {
		t.Fatalf("Destroy: %v, handle %v after", err, h)
	}

	// A link's calls made from four OS threads: they all run on its
	// Create's, as the fake requires (the real library crashed otherwise).
	on := threadtest.Locked(t, 4)
	owned, live := osthread.Owned(), osthread.Live()
	var moved Handle
	steps := []func() error{
		func() (err error) { moved, err = Create([]string{"-arch=sm_90"}); return },
		func() error { return AddData(moved, InputPTX, []byte("ptx"), "a.ptx") },
		func() error { return Complete(moved) },
		func() (err error) { _, err = GetLinkedCUBIN(moved); return },
		func() error { return Destroy(&moved) },
	}
	for k, step := range steps {
		if err := on([]int{0, 1, 2, 3, 1}[k], step); err != nil {
			t.Fatalf("a link's step %d from thread %d: %v", k, []int{0, 1, 2, 3, 1}[k], err)
		}
	}
	// Destroyed, the link has let its thread go.
	if osthread.Owned() != owned || osthread.Live() != live {
		t.Fatalf("after Destroy %d handles own threads and %d threads serve, want %d and %d", osthread.Owned(), osthread.Live(), owned, live)
	}

	// A failed link: the result and the error log.
	h, err = Create([]string{"-arch=sm_80", "-ptx"})
	if err != nil {
		t.Fatal(err)
	}
	defer Destroy(&h)
	if err := AddData(h, InputPTX, []byte("ptx #bad"), "bad.ptx"); err != nil {
		t.Fatal(err)
	}
	err = Complete(h)
	var e *Error
	if !errors.Is(err, ErrorPTXCompile) || !errors.As(err, &e) || e.Func != "nvJitLinkComplete" || !strings.Contains(err.Error(), "GetErrorLog") {
		t.Fatalf("Complete of bad input: %v", err)
	}
	log, err := GetErrorLog(h)
	if err != nil || !strings.Contains(log, "fake PTX compile failure in bad.ptx;") || strings.ContainsRune(log, 0) {
		t.Fatalf("GetErrorLog: %q, %v", log, err)
	}

	// -ptx links to PTX, with its NUL.
	h2, err := Create([]string{"-arch=sm_80", "-ptx"})
	if err != nil {
		t.Fatal(err)
	}
	defer Destroy(&h2)
	if err := AddData(h2, InputPTX, []byte("ptx"), "ok.ptx"); err != nil {
		t.Fatal(err)
	}
	if err := Complete(h2); err != nil {
		t.Fatal(err)
	}
	if ptx, err := GetLinkedPTX(h2); err != nil || !bytes.Equal(ptx, []byte("FAKEPTX sm_80 ok.ptx;\x00")) {
		t.Fatalf("GetLinkedPTX: %q, %v", ptx, err)
	}
	if log, err := GetErrorLog(h2); err != nil || log != "" {
		t.Fatalf("GetErrorLog after a clean link: %q, %v", log, err)
	}
}
