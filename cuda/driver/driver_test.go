package driver

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// The tests of this package run without a driver, for real: the loader is
// pointed at a library that does not exist (CI has no libcuda at all). The
// GPU suite (cuda_test) covers the driver.
func TestMain(m *testing.M) {
	if os.Getenv(abiChildEnv) == "" { // the ABI check's child runs against its fake
		os.Setenv("CUDAGEN_LIBCUDA", "/nonexistent/cudagen-test/libcuda.so.1")
	}
	os.Exit(m.Run())
}

func TestNoDriverEveryCall(t *testing.T) {
	if len(noDriverCalls) != len(Functions) {
		t.Fatalf("%d calls for %d functions", len(noDriverCalls), len(Functions))
	}
	for _, c := range noDriverCalls {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", c.name, r)
				}
			}()
			err = c.call()
		}()
		if !errors.Is(err, ErrNoDriver) {
			t.Errorf("%s: got %v, want an error matching ErrNoDriver", c.name, err)
			continue
		}
		msg := err.Error()
		if !cgoEnabled {
			// Built without cgo: the message says so and how to enable it.
			if !strings.HasPrefix(msg, "cuda: ") || !strings.Contains(msg, "cgo disabled") || !strings.Contains(msg, "CGO_ENABLED=1") || !strings.Contains(msg, "C compiler") {
				t.Errorf("%s: message %q does not say that cgo is disabled and how to enable it", c.name, msg)
			}
			continue
		}
		var le *LoadError
		if !errors.As(err, &le) || !strings.Contains(le.Library, "libcuda.so.1") {
			t.Errorf("%s: %v does not say which library was searched", c.name, err)
		}
		if !strings.HasPrefix(msg, "cuda: ") || !strings.Contains(msg, "install the NVIDIA driver") {
			t.Errorf("%s: message %q lacks the cuda: prefix or the fix", c.name, msg)
		}
	}
	if err := Load(); !errors.Is(err, ErrNoDriver) {
		t.Errorf("Load: %v", err)
	}
	if _, err := DriverVersion(); !errors.Is(err, ErrNoDriver) {
		t.Errorf("DriverVersion: %v", err)
	}
	if _, err := Lookup("cuEventCreate", 2000); !errors.Is(err, ErrNoDriver) {
		t.Errorf("Lookup: %v", err)
	}
	for _, f := range Functions {
		if _, err := f.Resolve(); !errors.Is(err, ErrNoDriver) {
			t.Errorf("%s Resolve: %v", f.Go, err)
		}
	}
}

func TestResultErrors(t *testing.T) {
	if Success.Err() != nil {
		t.Fatal("Success is not nil")
	}
	var err error = ErrorNotReady.Err()
	if !errors.Is(err, ErrorNotReady) || errors.Is(err, ErrorInvalidHandle) {
		t.Fatalf("errors.Is on %v", err)
	}
	if got := err.Error(); got != "cuda: CUDA_ERROR_NOT_READY (600): "+ErrorNotReady.Description() || !strings.Contains(got, "not completed") {
		t.Fatalf("message %q", got)
	}
	for _, r := range Results {
		if r == Success {
			continue
		}
		msg := r.Error()
		if !strings.HasPrefix(msg, "cuda: CUDA_ERROR_") || r.Name() == "" {
			t.Errorf("%d: %q", int(r), msg)
		}
		if r.Err() != r.Err() {
			t.Errorf("%v not pre-boxed", r)
		}
		if n := testing.AllocsPerRun(10, func() { _ = r.Err() }); n != 0 {
			t.Errorf("%v: boxing allocates %v", r, n)
		}
	}
	if s := Result(99999).Error(); !strings.Contains(s, "unknown CUresult") {
		t.Errorf("unknown result: %q", s)
	}
}

func TestFlagString(t *testing.T) {
	if s := (EventBlockingSync | EventDisableTiming).String(); s != "CU_EVENT_BLOCKING_SYNC|CU_EVENT_DISABLE_TIMING" {
		t.Errorf("got %q", s)
	}
	if s := EventDefault.String(); s != "CU_EVENT_DEFAULT" {
		t.Errorf("got %q", s)
	}
	if s := EventFlags(0x80).String(); s != "0x80" {
		t.Errorf("got %q", s)
	}
}

// Flags: a deprecated alias is not printed, a real flag named _MAX is a
// flag, a multi-bit value is one name, masks are not printed.
func TestFlagStringFields(t *testing.T) {
	for v, want := range map[CtxFlags]string{
		CtxSchedBlockingSync:                      "CU_CTX_SCHED_BLOCKING_SYNC", // not CU_CTX_BLOCKING_SYNC, deprecated
		CtxSchedBlockingSync | CtxLMEMResizeToMax: "CU_CTX_SCHED_BLOCKING_SYNC|CU_CTX_LMEM_RESIZE_TO_MAX",
		CtxMapHost | CtxLMEMResizeToMax:           "CU_CTX_MAP_HOST|CU_CTX_LMEM_RESIZE_TO_MAX",
		CtxSchedMask:                              "CU_CTX_SCHED_MASK",
	} {
		if got := v.String(); got != want {
			t.Errorf("CtxFlags(%#x): %s, want %s", uint32(v), got, want)
		}
	}
	if got := (MemAccessFlagsProtReadwrite).String(); got != "CU_MEM_ACCESS_FLAGS_PROT_READWRITE" {
		t.Errorf("READWRITE: %s", got)
	}
	if got := DeviceAttribute(-5).String(); got != "DeviceAttribute(-5)" {
		t.Errorf("undeclared value: %s", got)
	}
}

func TestNotSupportedMessage(t *testing.T) {
	e := &NotSupportedError{Func: "cuEventElapsedTime_v2", Name: "cuEventElapsedTime", Need: 12080, DriverVersion: 12040, HeaderVersion: 13000}
	want := "cuda: cuEventElapsedTime_v2 is not supported by the installed driver: the bindings (CUDA 13.0 headers) need it at ABI version 12.8, and the driver supports CUDA 12.4; upgrade the NVIDIA driver to one for CUDA 12.8 or newer, or build with -tags cuda12.4 (bindings this driver supports)"
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
	if !errors.Is(e, ErrNotSupported) {
		t.Error("not ErrNotSupported")
	}
	// A driver new enough that lacks the function: upgrading to what it
	// already is cannot be the fix.
	e = &NotSupportedError{Func: "cuFoo", Name: "cuFoo", Need: 2000, DriverVersion: 13000, HeaderVersion: 13000, Result: ErrorNotFound}
	got := e.Error()
	want = "cuda: cuFoo is not supported by the installed driver: the bindings (CUDA 13.0 headers) need it at ABI version 2.0, and the driver (CUDA 13.0) does not provide it (cuGetProcAddress: CUDA_ERROR_NOT_FOUND, status 0); check that libcuda.so.1 comes from the installed NVIDIA driver (CUDAGEN_LIBCUDA, the loader's path), or reinstall the driver, or build with -tags cuda12.4 (bindings this driver supports)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// e2 and e3 keep the error of a call with 1 or 2 other results.
func e2[A any](_ A, err error) error         { return err }
func e3[A, B any](_ A, _ B, err error) error { return err }

//lint:ignore U1000 the no-driver calls of versions with three-result functions use it
func e4[A, B, C any](_ A, _ B, _ C, err error) error { return err }

//lint:ignore U1000 the no-driver calls of versions with four- to six-result functions use them
func e5[A, B, C, D any](_ A, _ B, _ C, _ D, err error) error { return err }

//lint:ignore U1000 as e5
func e6[A, B, C, D, E any](_ A, _ B, _ C, _ D, _ E, err error) error { return err }

//lint:ignore U1000 as e5
func e7[A, B, C, D, E, F any](_ A, _ B, _ C, _ D, _ E, _ F, err error) error { return err }
