package cuda_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/headers"
)

// noLibcuda is a path where there is no library: a loader pointed at it
// (CUDAGEN_LIBCUDA) finds no driver.
const noLibcuda = "/nonexistent/cudagen/libcuda.so.1"

// TestNoDriverPublicAPI runs the public API in a child process whose loader
// is pointed at a library that does not exist (CI has no libcuda anyway), so
// it checks the real no-driver path on any machine; a process whose loader
// is pointed there already runs it itself.
func TestNoDriverPublicAPI(t *testing.T) {
	if os.Getenv("CUDAGEN_LIBCUDA") != noLibcuda {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoDriverPublicAPI$", "-test.v")
		cmd.Env = append(os.Environ(), "CUDAGEN_LIBCUDA="+noLibcuda)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNoDriverPublicAPI") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cuda.ErrNoDriver) {
			t.Errorf("%s: %v does not match ErrNoDriver", what, err)
			return
		}
		msg := err.Error()
		cause, fix := "libcuda.so.1", "install the NVIDIA driver"
		if strings.Contains(msg, "cgo disabled") { // a build without cgo
			cause, fix = "CGO_ENABLED=0", "rebuild with CGO_ENABLED=1"
		}
		if !strings.HasPrefix(msg, "cuda: ") || !strings.Contains(msg, cause) || !strings.Contains(msg, fix) {
			t.Errorf("%s: message %q lacks the operation, cause or fix", what, msg)
		}
		if strings.ToLower(msg) != msg && !strings.Contains(msg, "NVIDIA") && !strings.Contains(msg, "CUDA") {
			t.Errorf("%s: message not lower case: %q", what, msg)
		}
	}
	_, err := cuda.GetDevice(0)
	check("GetDevice", err)
	_, err = cuda.DeviceCount()
	check("DeviceCount", err)
	_, err = cuda.DriverVersion()
	check("DriverVersion", err)
	if _, err := cuda.GetDevice(0); !strings.HasPrefix(err.Error(), "cuda: initialise the CUDA driver: ") {
		t.Errorf("operation not named: %v", err)
	}
}

func TestEventOptionsValidate(t *testing.T) {
	for _, o := range []cuda.EventOptions{{}, {Timing: true}, {BlockingSync: true}, {IPC: true}, {IPC: true, BlockingSync: true}, {Timing: true, BlockingSync: true}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	err := cuda.EventOptions{IPC: true, Timing: true}.Validate()
	if !errors.Is(err, cuda.ErrInvalidOptions) || !strings.Contains(err.Error(), "cuda: create event: an IPC event cannot record timing") {
		t.Errorf("IPC+Timing: %v", err)
	}
}

func TestErrorWrapping(t *testing.T) {
	e := &cuda.Error{Op: "elapsed time between events", Detail: "the start event was never recorded", Fix: "record both events", Err: cuda.ErrNotRecorded}
	if !errors.Is(e, cuda.ErrNotRecorded) || e.Error() != "cuda: elapsed time between events: the start event was never recorded; record both events" {
		t.Errorf("%v", e)
	}
	e = &cuda.Error{Op: "query event", Detail: "x", Err: cuda.ErrNotReady}
	if !errors.Is(e, cuda.ErrNotReady) || !strings.Contains(e.Error(), "(CUDA_ERROR_NOT_READY)") {
		t.Errorf("%v", e)
	}
	if errors.Is(context.Canceled, cuda.ErrNotReady) {
		t.Error("unrelated error matched")
	}
}

// NotSupportedError names the build tag to use: the newest pinned toolkit
// the driver supports, for every pin of headers/manifest.json.
func TestNotSupportedNamesTag(t *testing.T) {
	m, err := headers.Load("../headers/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	newest := m.Newest()
	for _, v := range m.Versions {
		if v.Version == newest.Version {
			continue
		}
		e := &driver.NotSupportedError{Func: "cuEventElapsedTime_v2", Need: newest.CUDAVersion, DriverVersion: v.CUDAVersion, HeaderVersion: newest.CUDAVersion}
		if !strings.Contains(e.Error(), "build with -tags "+v.Tag+" ") || !errors.Is(e, cuda.ErrNotSupported) {
			t.Errorf("driver %d: %v", v.CUDAVersion, e)
		}
	}
	e := &driver.NotSupportedError{Func: "cuEventElapsedTime", Need: 3020, DriverVersion: 2000, HeaderVersion: 11080}
	if strings.Contains(e.Error(), "-tags") || !strings.Contains(e.Error(), "upgrade the NVIDIA driver to one for CUDA 3.2 or newer") {
		t.Errorf("no older pin: %v", e)
	}
	t.Log(e)
}
