package nvrtc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func e2[A any](_ A, err error) error         { return err }
func e3[A, B any](_ A, _ B, err error) error { return err }

// child runs the test named by run in a child process with env added, so
// that each gets its own first load of the library.
func child(t *testing.T, run string, env ...string) {
	t.Helper()
	if os.Getenv("NVRTC_TEST_CHILD") != "" {
		t.Skip("in the child: the parent runs it")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), "NVRTC_TEST_CHILD=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+run)) {
		t.Fatalf("%s in a child process: %v\n%s", run, err, out)
	}
}

func inChild(t *testing.T) {
	if os.Getenv("NVRTC_TEST_CHILD") == "" {
		t.Skip("runs in a child process started by its parent test")
	}
}

// fakeLibrary builds testdata/fakenvrtc.c into a shared library.
func fakeLibrary(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler to build the fake NVRTC")
		}
	}
	so := filepath.Join(t.TempDir(), "libfakenvrtc.so")
	if out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-o", so, "testdata/fakenvrtc.c").CombinedOutput(); err != nil {
		t.Fatalf("building the fake NVRTC: %v\n%s", err, out)
	}
	return so
}

func TestNoLibrary(t *testing.T) {
	child(t, "TestNoLibraryChild", "CUDAGEN_LIBNVRTC="+filepath.Join(t.TempDir(), "libnvrtc-missing.so"))
}

func TestNoLibraryChild(t *testing.T) {
	inChild(t)
	_, err := Load()
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Load without the library: %v, want an error matching ErrNoLibrary", err)
	}
	msg := err.Error()
	if BuildTag == "" {
		if !strings.Contains(msg, "has no NVRTC bindings") {
			t.Fatalf("Load in a build without bindings: %q does not say so", msg)
		}
		return
	}
	wants := []string{"cuda: ", "NVRTC", "CUDAGEN_LIBNVRTC", "install", "libnvrtc-missing.so"}
	if !withCgo {
		wants = []string{"cuda: ", "NVRTC", "without cgo"}
	}
	for _, want := range wants {
		if runtime.GOOS == "linux" && !strings.Contains(msg, want) {
			t.Errorf("Load's error %q does not say %q", msg, want)
		}
	}
	for _, c := range noLibraryCalls {
		if err := c.call(); !errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s without the library: %v, want an error matching ErrNoLibrary", c.name, err)
		}
	}
	if len(noLibraryCalls) != len(Functions) {
		t.Errorf("%d calls tested, %d functions bound", len(noLibraryCalls), len(Functions))
	}
}
