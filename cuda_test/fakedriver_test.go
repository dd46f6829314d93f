//go:build cgo

package gputest

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

//go:embed testdata/fakecuda.c
var fakeCUDA []byte

// The tests of the Go layer's own behaviour, which a driver that does no GPU
// work exercises as well as a real one: no allocation per call, Close racing
// with use (the fake driver refuses destroyed handles, so a call that got
// past a Close is caught), closing devices, the context made current on
// every thread (the fake needs it where the driver does), the version checks
// of the loader, options refused before the driver is called, and misuse:
// Close never blocking or spinning, no call on a released context or with a
// destroyed handle (the fake counts them), nil and zero values.
var goLayerTests = []string{
	"TestNoAllocations",
	"TestLongWaitNoAllocations",
	"TestCloseRacesWithUse",
	"TestDeviceClosed",
	"TestLastDeviceClosed",
	"TestGoroutinesAndThreads",
	"TestDriverTooOld",
	"TestIPCTimingRejected",
	"TestMisuse",
	"TestCreateCloseMillion",
	"TestSpinCancelThenClose",
	"TestClosedDuringCall",
	"TestSyncQueriesFirst",
	"TestSoak",
	"TestEventReuse",
	"TestEventReuseExternal",
	"TestWaitLeavesContextCurrent",
	"TestWaitersEndWithContext",
	"TestWaitCancelAcrossContexts",
	"TestWaitScale",
	"TestWaitCloseRule",
}

// TestGoLayerOnFakeDriver runs goLayerTests in a child process whose loader
// opens testdata/fakecuda.c, built here, instead of libcuda.so.1: so CI, which
// has no GPU, checks them too. The rest of the GPU tests depend on what the
// GPU does, and most of them fail against the fake.
func TestGoLayerOnFakeDriver(t *testing.T) {
	if os.Getenv("CUDAGEN_FAKE_CHILD") != "" {
		t.Skip("skipping: this is the fake driver's child process")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("skipping: building the fake driver needs a C compiler (%s: %v); cgo needs one anyway, and tools/ensure-deps.sh installs gcc", cc, err)
	}
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "fakecuda.c"), filepath.Join(dir, "libfakecuda.so")
	ok(t, os.WriteFile(src, fakeCUDA, 0o644))
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("building the fake driver: %v\n%s", err, out)
	}
	// Three times: with the fake taking handle calls' context from the
	// handles, as the driver does; with it refusing them
	// (CUDA_ERROR_INVALID_CONTEXT) unless their context is current, so that
	// the package's retry with the context made current (handlecall.go)
	// runs on every path; and with the hazard calls fencing themselves
	// instead of relying on membarrier (cuda/internal/hazard).
	for _, mode := range []struct{ name, env string }{{"handles", ""}, {"wants-current", "FAKECUDA_WANT_CURRENT=1"}, {"fences", "CUDAGEN_HAZARD=fence"}} {
		t.Run(mode.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(goLayerTests, "|")+")$", "-test.v", "-test.count=1")
			// Each call holds its handles 5µs, so a Close that does not wait
			// for calls in flight destroys one under a call, which the fake
			// reports. Two devices, for the cross-device cases.
			cmd.Env = append(os.Environ(), "CUDAGEN_FAKE_CHILD=1", "CUDAGEN_LIBCUDA="+lib, "FAKECUDA_HOLD_NS=5000", "FAKECUDA_DEVICES=2", "CUDAGEN_SOAK=3s", mode.env)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child on the fake driver: %v\n%s", err, out)
			}
			// Each must have run and passed: a skip would mean the fake was not used.
			for _, name := range goLayerTests {
				if !strings.Contains(string(out), "\n--- PASS: "+name+" (") {
					t.Errorf("%s did not pass on the fake driver:\n%s", name, out)
				}
			}
			t.Logf("on the fake driver (%s): %s", mode.name, strings.Join(goLayerTests, ", "))
		})
	}
}
