//go:build cgo

package gputest

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// boundABI is the ABI version the bindings resolve a function at.
func boundABI(t *testing.T, goName string) int {
	t.Helper()
	for _, f := range driver.Functions {
		if f.Go == goName {
			return f.ABIVersion
		}
	}
	t.Fatalf("%s is not bound", goName)
	return 0
}

// TestLayerDriverLevel: the cuda package runs on every driver from 11.3,
// whatever the build's pinned toolkit: events, timing (Sub, through the
// entry point the driver has), record flags, waits, IPC handles and streams
// with priority. On the fake driver (TestGoLayerOnFakeDriver runs it as
// drivers of 11.8, 12.4 and 13.0), it also checks which elapsed-time entry
// point Sub called: cuEventElapsedTime_v2 (ABI 12080) where the bindings
// bind it and the driver has it, the original (ABI 2000) otherwise.
func TestLayerDriverLevel(t *testing.T) {
	dev := gpu(t)
	dv, err := cuda.DriverVersion()
	ok(t, err)
	if want := os.Getenv("FAKECUDA_VERSION"); want != "" {
		if n, _ := strconv.Atoi(want); n != dv {
			t.Fatalf("DriverVersion %d, the fake was told %s", dv, want)
		}
	}
	t.Logf("driver %s, bindings of CUDA %s", driver.VersionString(dv), driver.VersionString(driver.HeaderVersion))
	abi := boundABI(t, "EventElapsedTime")
	newer := abi > dv // the generated layer's own entry point is missing

	// The generated layer resolves at the pinned ABI version: where the
	// driver is older, it refuses, naming the version it needs.
	if newer {
		_, err := driver.EventElapsedTime(1, 2)
		var nse *driver.NotSupportedError
		if !errors.As(err, &nse) || nse.Need != abi || nse.DriverVersion != dv {
			t.Fatalf("generated EventElapsedTime on driver %d: got %v, want ErrNotSupported needing %d", dv, err, abi)
		}
	}

	v1Before, fake := fakeCounter("fakecuda_elapsed_calls")
	v2Before, _ := fakeCounter("fakecuda_elapsed_v2_calls")

	s, err := dev.NewStream()
	ok(t, err)
	defer s.Close()
	start := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer start.Close()
	end := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true, BlockingSync: true}))
	defer end.Close()
	ok(t, s.Record(start))
	ok(t, s.Spin(2*time.Millisecond))
	ok(t, s.Record(end, cuda.RecordFlag(0))) // cuEventRecordWithFlags
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ok(t, end.Wait(ctx))
	d, err := end.Sub(start)
	ok(t, err)
	if d < time.Millisecond {
		t.Errorf("Sub: %v around a 2ms spin", d)
	}
	// Sub's hot call and its counted call, with errors: not ready.
	ok(t, s.Spin(50*time.Millisecond))
	ok(t, s.Record(end))
	if _, err := end.Sub(start); !errors.Is(err, cuda.ErrNotReady) {
		t.Errorf("Sub on pending work: %v, want ErrNotReady", err)
	}
	ok(t, s.Sync())

	if fake {
		v1, _ := fakeCounter("fakecuda_elapsed_calls")
		v2, _ := fakeCounter("fakecuda_elapsed_v2_calls")
		v1, v2 = v1-v1Before, v2-v2Before
		wantV2 := abi >= 12080 && dv >= 12080
		t.Logf("Sub called cuEventElapsedTime %d times, cuEventElapsedTime_v2 %d times", v1, v2)
		if wantV2 && (v2 == 0 || v1 != 0) || !wantV2 && (v1 == 0 || v2 != 0) {
			t.Errorf("bindings at ABI %d on driver %d: Sub called the original entry point %d times and _v2 %d times; want only %s",
				abi, dv, v1, v2, map[bool]string{true: "_v2", false: "the original"}[wantV2])
		}
	}

	// IPC: an exported handle holds the options.
	ipc := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{IPC: true, BlockingSync: true}))
	defer ipc.Close()
	h, err := ipc.IPCHandle()
	ok(t, err)
	if o := h.Options(); o != ipc.Options() {
		t.Errorf("IPC handle options %+v, want %+v", o, ipc.Options())
	}

	// Streams with priority.
	least, greatest, err := dev.StreamPriorityRange()
	ok(t, err)
	hi, err := dev.NewStream(cuda.StreamOptions{Priority: greatest})
	ok(t, err)
	defer hi.Close()
	if p, err := hi.Priority(); err != nil || p != greatest {
		t.Errorf("Priority of a stream made with %d (range %d..%d): %d, %v", greatest, least, greatest, p, err)
	}
	ok(t, hi.Spin(time.Millisecond))
	ok(t, hi.Sync())
}
