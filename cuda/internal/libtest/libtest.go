// Package libtest runs the tests of the packages that bind CUDA libraries
// (cuda/nvrtc, cuda/nvjitlink) on fakes of those libraries: each test that
// loads a library runs in a child process of its own, since a process loads
// a library once.
package libtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// childVar marks a child process.
const childVar = "CUDAGEN_LIBTEST_CHILD"

// Child runs the test named run in a child process of the test binary,
// with env added, and fails unless it passes there. In the child, it skips.
func Child(t *testing.T, run string, env ...string) {
	t.Helper()
	if os.Getenv(childVar) != "" {
		t.Skip("in the child: the parent runs it")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), childVar+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+run)) {
		t.Fatalf("%s in a child process: %v\n%s", run, err, out)
	}
}

// InChild skips the test unless it runs in a child process Child started.
func InChild(t *testing.T) {
	t.Helper()
	if os.Getenv(childVar) == "" {
		t.Skip("runs in a child process started by its parent test")
	}
}

// InFake starts a test in the child process that OnFake started: it skips
// elsewhere (InChild), loads the library (load: the package's Load) and
// checks the version the fake reports, 12.4 (version: the package's
// Version).
func InFake[V int32 | uint32](t *testing.T, load func() (string, error), version func() (V, V, error)) {
	t.Helper()
	InChild(t)
	if _, err := load(); err != nil {
		t.Fatal(err)
	}
	if major, minor, err := version(); err != nil || major != 12 || minor != 4 {
		t.Fatalf("Version: %d.%d, %v; the fake says 12.4", major, minor, err)
	}
}

// Build compiles the C source src into a shared library in a temporary
// directory and returns its path; it skips the test where no C compiler is.
func Build(t *testing.T, src string) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler to build " + src)
		}
	}
	so := filepath.Join(t.TempDir(), "lib"+filepath.Base(src)+".so")
	if out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", src, err, out)
	}
	return so
}

// OnFake runs the test named run in a child process with the library the
// environment variable env names built from the C source src (a fake of
// it); built without cgo (cgo false) it skips: the fake is a C library,
// and TestNoLibrary checks the error without cgo.
func OnFake(t *testing.T, cgo bool, run, env, src string) {
	t.Helper()
	if !cgo {
		t.Skip("built without cgo: the fake library (" + src + ") is C (TestNoLibrary checks the error without cgo)")
	}
	Child(t, run, env+"="+Build(t, src))
}

// Bound skips the test where the build binds no lib: tag is the package's
// BuildTag ("" for none) and why its reason.
func Bound(t *testing.T, tag, lib, why string) {
	t.Helper()
	if tag == "" {
		t.Skip("this build binds no " + lib + " (" + why + ")")
	}
}
