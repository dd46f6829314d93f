//go:build cgo

package gputest

import (
	"embed"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

//go:embed testdata/fakecuda.c
var fakeCUDA []byte

// The fake-driver run goes by a naming convention, not a list: every test
// named TestLayer… (layerTests) tests the Go layer's own behaviour, which a
// driver that does no GPU work exercises as well as a real one: no
// allocation per call, Close racing with use (the fake driver refuses
// destroyed handles, so a call that got past a Close is caught), closing
// devices, the context made current on every thread (the fake needs it
// where the driver does), the version checks of the loader, options refused
// before the driver is called, and misuse: Close never blocking or spinning,
// no call on a released context or with a destroyed handle (the fake counts
// them), nil and zero values. TestGoLayerOnFakeDriver runs each of them, in
// every fake mode, and each must pass there. A test that needs the fake
// (it calls fakeOnly or onFake, or reads fakeChildEnv) must be named so
// (TestFakeDriverNaming checks it). The one skip the run accepts is under
// -race, with a reason beginning raceSkip: a test whose figures are the
// detector's, not the package's, says so itself (TestLayerWaitScale).
const layerTests = "^TestLayer"

// raceSkip begins the reason of a skip that the fake-driver run accepts in
// a build with -race (raceEnabled), and only there.
const raceSkip = "skipping under -race:"

// fakeChildEnv is set in the fake driver's child process.
const fakeChildEnv = "CUDAGEN_FAKE_CHILD"

// onFake reports whether this is the fake driver's child process, where
// TestGoLayerOnFakeDriver runs the layerTests.
func onFake() bool { return os.Getenv(fakeChildEnv) != "" }

// fakeOnly is gpu for the tests that need the fake driver's own knobs (it
// opens IPC handles in the exporting process, FAKECUDA_IPC_OPEN, and has two
// devices): TestGoLayerOnFakeDriver runs them against it.
func fakeOnly(t *testing.T) *cuda.Device {
	t.Helper()
	dev := gpu(t)
	if _, fake := fakeCounter("fakecuda_live_handles"); !fake {
		t.Skip("skipping: needs the fake driver (TestGoLayerOnFakeDriver runs it there); on a GPU, TestIPC and TestStreamPriority cover the same ground")
	}
	return dev
}

func liveHandles(t *testing.T) int64 {
	t.Helper()
	n, _ := fakeCounter("fakecuda_live_handles")
	return n
}

// TestGoLayerOnFakeDriver runs the layerTests in a child process whose loader
// opens testdata/fakecuda.c, built here, instead of libcuda.so.1: so CI, which
// has no GPU, checks them too. The rest of the GPU tests depend on what the
// GPU does, and most of them fail against the fake.
func TestGoLayerOnFakeDriver(t *testing.T) {
	if onFake() {
		t.Skip("skipping: this is the fake driver's child process")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("skipping: building the fake driver needs a C compiler (%s: %v); cgo needs one anyway, and tools/ensure-deps.sh installs gcc", cc, err)
	}
	// The tests the convention selects in this binary (build tags included).
	list, err := exec.Command(os.Args[0], "-test.list="+layerTests).Output()
	if err != nil {
		t.Fatalf("listing the tests named %s: %v", layerTests, err)
	}
	names := strings.Fields(string(list))
	if len(names) == 0 {
		t.Fatalf("no test is named %s: the fake-driver run would check nothing", layerTests)
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
	// The fake NVRTC (cuda/nvrtc's), for Device.Compile: its PTX has an
	// entry point per __global__ function, which the fake driver loads.
	nvrtcLib := filepath.Join(dir, "libfakenvrtc.so")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", nvrtcLib, filepath.Join("..", "cuda", "nvrtc", "testdata", "fakenvrtc.c")).CombinedOutput(); err != nil {
		t.Fatalf("building the fake NVRTC: %v\n%s", err, out)
	}
	// With the fake taking handle calls' context from the handles, as the
	// driver does; with it refusing them (CUDA_ERROR_INVALID_CONTEXT) unless
	// their context is current, so that the package's retry with the
	// context made current (hotcalls.go) runs on every path; with the
	// hazard calls fencing themselves instead of relying on membarrier
	// (cuda/internal/lifetime); and as drivers of 11.8 and 12.4 (the first
	// three are a 13.0 driver's), so that every build runs on every driver
	// from 11.3 (TestLayerDriverLevel checks which entry points it took).
	// And one test as a driver of 11.5, before cuLaunchKernelEx: a
	// cluster launch's error there.
	for _, mode := range []struct{ name, lib, env, run string }{
		{"handles", lib, "", ""},
		{"wants-current", lib, "FAKECUDA_WANT_CURRENT=1", ""},
		{"fences", lib, "CUDAGEN_HAZARD=fence", ""},
		{"driver-11.8", lib11, "FAKECUDA_VERSION=11080", ""},
		{"driver-12.4", lib, "FAKECUDA_VERSION=12040", ""},
		{"driver-12.4-wants-current", lib, "FAKECUDA_VERSION=12040 FAKECUDA_WANT_CURRENT=1", ""},
		{"driver-11.5", lib11, "FAKECUDA_VERSION=11050", "^TestLayerLaunchCluster$"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			run, names := layerTests, names
			if mode.run != "" {
				run, names = mode.run, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !regexp.MustCompile(mode.run).MatchString(n) })
			}
			args := []string{"-test.run=" + run, "-test.v", "-test.count=1"}
			if deadline, ok := t.Deadline(); ok {
				// A child that hangs ends itself, printing every
				// goroutine's stack, before the parent's own timeout kills
				// both without a word from the child.
				args = append(args, "-test.timeout="+max(time.Until(deadline)-30*time.Second, time.Minute).String())
			}
			cmd := exec.Command(os.Args[0], args...)
			// Each call holds its handles 5µs, so a Close that does not wait
			// for calls in flight destroys one under a call, which the fake
			// reports. Two devices, for the cross-device cases.
			cmd.Env = append(os.Environ(), fakeChildEnv+"=1", "CUDAGEN_LIBCUDA="+mode.lib, "CUDAGEN_LIBNVRTC="+nvrtcLib, "FAKECUDA_HOLD_NS=5000", "FAKECUDA_DEVICES=2", "CUDAGEN_SOAK=3s")
			cmd.Env = append(cmd.Env, strings.Fields(mode.env)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child on the fake driver: %v\n%s", err, out)
			}
			// Each must have run and passed: a skip would mean the fake was
			// not used, but for one under -race that says so (raceSkip).
			var passed, raceSkipped []string
			for _, name := range names {
				switch {
				case strings.Contains(string(out), "\n--- PASS: "+name+" ("):
					passed = append(passed, name)
				case raceEnabled && skippedFor(string(out), name, raceSkip):
					raceSkipped = append(raceSkipped, name)
				default:
					t.Errorf("%s did not pass on the fake driver:\n%s", name, out)
				}
			}
			t.Logf("on the fake driver (%s), %d tests named %s: passed: %s; skipped under -race: %s",
				mode.name, len(names), run, strings.Join(passed, ", "), strings.Join(raceSkipped, ", "))
		})
	}
}

// skippedFor reports whether test name skipped in the -test.v output out
// with a reason beginning prefix.
func skippedFor(out, name, prefix string) bool {
	i := strings.Index(out, "=== RUN   "+name+"\n")
	j := strings.Index(out, "\n--- SKIP: "+name+" (")
	return i >= 0 && j > i && strings.Contains(out[i:j], ": "+prefix)
}

// The package's test files, for TestFakeDriverNaming: embedded, so that the
// check runs wherever the test binary does, and sees every build tag's files.
//
//go:embed *_test.go
var testSources embed.FS

// TestFakeDriverNaming checks the fake-driver run's convention (layerTests):
// some test follows it, and every test that needs the fake driver follows
// it, that is, every test that uses (itself, or through the package's
// functions and variables) fakeOnly, onFake, fakeChildEnv or the variable's
// name: a test that needs the fake but is not named so would only ever
// skip.
func TestFakeDriverNaming(t *testing.T) {
	markers := map[string]bool{"fakeOnly": true, "onFake": true, "fakeChildEnv": true, strconv.Quote(fakeChildEnv): true}
	// The convention's own machinery uses them to run the others.
	machinery := map[string]bool{"TestGoLayerOnFakeDriver": true, "TestFakeDriverNaming": true}
	files, err := fs.Glob(testSources, "*_test.go")
	ok(t, err)
	// uses: each package-level function or variable's names and literals
	// used; tests: the Test functions.
	uses := map[string]map[string]bool{}
	var tests []string
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := testSources.ReadFile(name)
		ok(t, err)
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		ok(t, err)
		add := func(decl string, n ast.Node) {
			if uses[decl] == nil {
				uses[decl] = map[string]bool{}
			}
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					uses[decl][n.Name] = true
				case *ast.BasicLit:
					uses[decl][n.Value] = true
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					continue
				}
				add(d.Name.Name, d)
				if strings.HasPrefix(d.Name.Name, "Test") && d.Name.Name != "TestMain" {
					tests = append(tests, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if v, isValue := s.(*ast.ValueSpec); isValue {
						for _, n := range v.Names {
							add(n.Name, v)
						}
					}
				}
			}
		}
	}
	// Whatever uses a marker, directly or through what it uses, needs the fake.
	needs := maps.Clone(markers)
	for changed := true; changed; {
		changed = false
		for decl, used := range uses {
			if needs[decl] || machinery[decl] {
				continue
			}
			for u := range used {
				if needs[u] && u != decl {
					needs[decl], changed = true, true
					break
				}
			}
		}
	}
	re := regexp.MustCompile(layerTests)
	var selected []string
	for _, name := range tests {
		switch {
		case re.MatchString(name):
			selected = append(selected, name)
		case needs[name] && !machinery[name]:
			t.Errorf("%s needs the fake driver (it uses fakeOnly, onFake or %s), but TestGoLayerOnFakeDriver runs only the tests named %s: rename it so", name, fakeChildEnv, layerTests)
		}
	}
	if len(selected) == 0 {
		t.Fatalf("no test in %d files is named %s: the fake-driver run would check nothing", len(files), layerTests)
	}
	slices.Sort(selected)
	t.Logf("%d tests named %s (run on the fake driver): %s", len(selected), layerTests, strings.Join(selected, ", "))
}
