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
	"TestDriverLevel",
	"TestIPCReexportOnFake",
	"TestStreamOptionsOnFake",
	"TestSmallFixesOnFake",
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
	src := filepath.Join(dir, "fakecuda.c")
	ok(t, os.WriteFile(src, fakeCUDA, 0o644))
	// Two builds: a 12.0-or-later driver's, which exports both forms of
	// cuGetProcAddress, and an 11.x driver's, which lacks the 12.0 form.
	lib, lib11 := filepath.Join(dir, "libfakecuda.so"), filepath.Join(dir, "libfakecuda11.so")
	for _, b := range []struct {
		out   string
		flags []string
	}{{lib, nil}, {lib11, []string{"-DFAKECUDA_DRIVER11"}}} {
		args := append([]string{"-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", b.out}, b.flags...)
		if out, err := exec.Command(cc, append(args, src)...).CombinedOutput(); err != nil {
			t.Fatalf("building the fake driver: %v\n%s", err, out)
		}
	}
	// With the fake taking handle calls' context from the handles, as the
	// driver does; with it refusing them (CUDA_ERROR_INVALID_CONTEXT) unless
	// their context is current, so that the package's retry with the
	// context made current (handlecall.go) runs on every path; with the
	// hazard calls fencing themselves instead of relying on membarrier
	// (cuda/internal/hazard); and as drivers of 11.8 and 12.4 (the first
	// three are a 13.0 driver's), so that every build runs on every driver
	// from 11.3 (TestDriverLevel checks which entry points it took).
	for _, mode := range []struct{ name, lib, env string }{
		{"handles", lib, ""},
		{"wants-current", lib, "FAKECUDA_WANT_CURRENT=1"},
		{"fences", lib, "CUDAGEN_HAZARD=fence"},
		{"driver-11.8", lib11, "FAKECUDA_VERSION=11080"},
		{"driver-12.4", lib, "FAKECUDA_VERSION=12040"},
		{"driver-12.4-wants-current", lib, "FAKECUDA_VERSION=12040 FAKECUDA_WANT_CURRENT=1"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(fakeTests(), "|")+")$", "-test.v", "-test.count=1")
			// Each call holds its handles 5µs, so a Close that does not wait
			// for calls in flight destroys one under a call, which the fake
			// reports. Two devices, for the cross-device cases.
			cmd.Env = append(os.Environ(), "CUDAGEN_FAKE_CHILD=1", "CUDAGEN_LIBCUDA="+mode.lib, "FAKECUDA_HOLD_NS=5000", "FAKECUDA_DEVICES=2", "CUDAGEN_SOAK=3s")
			cmd.Env = append(cmd.Env, strings.Fields(mode.env)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child on the fake driver: %v\n%s", err, out)
			}
			// Each must have run and passed: a skip would mean the fake was not used.
			for _, name := range fakeTests() {
				if !strings.Contains(string(out), "\n--- PASS: "+name+" (") {
					t.Errorf("%s did not pass on the fake driver:\n%s", name, out)
				}
			}
			t.Logf("on the fake driver (%s): %s", mode.name, strings.Join(fakeTests(), ", "))
		})
	}
}

// fakeTests are the goLayerTests this build runs: TestWaitScale's timing is
// asserted without -race only (10,000 goroutines under the detector).
func fakeTests() []string {
	if !raceEnabled {
		return goLayerTests
	}
	var r []string
	for _, n := range goLayerTests {
		if n != "TestWaitScale" {
			r = append(r, n)
		}
	}
	return r
}
