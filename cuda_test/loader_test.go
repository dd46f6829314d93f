//go:build cgo

package gputest

import (
	"errors"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

func TestBindingsVersion(t *testing.T) {
	gpu(t)
	v, err := cuda.DriverVersion()
	ok(t, err)
	t.Logf("bindings: CUDA %s (tag %s, CUDA_VERSION %d); driver: CUDA %s", driver.Toolkit, driver.BuildTag, driver.HeaderVersion, driver.VersionString(v))
	for _, f := range driver.Functions {
		if _, err := f.Resolve(); err != nil {
			t.Errorf("%s: %v", f.Symbol, err)
		}
	}
	// The 13.0 build resolves elapsed time as the _v2 entry point.
	for _, f := range driver.Functions {
		if f.Go == "EventElapsedTime" {
			t.Logf("EventElapsedTime → %s at ABI %d", f.Symbol, f.ABIVersion)
			if driver.HeaderVersion >= 13000 && (f.Symbol != "cuEventElapsedTime_v2" || f.ABIVersion != 12080) {
				t.Errorf("13.0 elapsed time is %s@%d", f.Symbol, f.ABIVersion)
			}
		}
	}
}

func TestLayerDriverTooOld(t *testing.T) {
	gpu(t)
	v, _ := cuda.DriverVersion()
	// An entry point at an ABI version newer than the driver.
	_, err := driver.Lookup("cuEventElapsedTime", v+10)
	var nse *driver.NotSupportedError
	if !errors.As(err, &nse) || !errors.Is(err, cuda.ErrNotSupported) || nse.DriverVersion != v || nse.Need != v+10 {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
	// A name the driver does not have.
	_, err = driver.Lookup("cuEventNoSuchFunction", 2000)
	if !errors.Is(err, cuda.ErrNotSupported) || !strings.Contains(err.Error(), "cuEventNoSuchFunction") {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
}

// The generated layer on its own: create, record, query, synchronize, time
// and destroy through the driver package.
func TestGeneratedLayer(t *testing.T) {
	dev := gpu(t)
	ctx := dev.Context()
	e1 := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventDefault))
	e2 := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventBlockingSync))
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	ok(t, driver.EventRecordCtx(ctx, e1, s))
	ok(t, driver.EventRecordWithFlagsCtx(ctx, e2, s, driver.EventRecordDefault))
	ok(t, driver.EventSynchronizeCtx(ctx, e2))
	ok(t, driver.EventQueryCtx(ctx, e1))
	ms, err := driver.EventElapsedTimeCtx(ctx, e1, e2)
	ok(t, err)
	if ms < 0 || ms > 1000 {
		t.Errorf("elapsed %v ms", ms)
	}
	// Timing disabled on neither? both have timing: an INVALID_HANDLE from
	// the driver is what it returns for a destroyed event.
	ok(t, driver.EventDestroyCtx(ctx, e1))
	ok(t, driver.EventDestroyCtx(ctx, e2))
	ok(t, driver.StreamDestroyCtx(ctx, s))
	name, err := driver.DeviceGetName(0)
	ok(t, err)
	t.Logf("device 0: %s", name)
	if s, err := driver.GetErrorName(driver.ErrorNotReady); err != nil || s != "CUDA_ERROR_NOT_READY" {
		t.Errorf("GetErrorName: %q %v", s, err)
	}
}
