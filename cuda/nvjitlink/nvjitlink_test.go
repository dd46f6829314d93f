package nvjitlink

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/internal/libtest"
)

func e2[A any](_ A, err error) error         { return err }
func e3[A, B any](_ A, _ B, err error) error { return err }

func TestNoLibrary(t *testing.T) {
	libtest.Child(t, "TestNoLibraryChild", "CUDAGEN_LIBNVJITLINK="+filepath.Join(t.TempDir(), "libnvJitLink-missing.so"))
}

func TestNoLibraryChild(t *testing.T) {
	libtest.InChild(t)
	_, err := Load()
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Load without the library: %v, want an error matching ErrNoLibrary", err)
	}
	msg := err.Error()
	if BuildTag == "" {
		if !strings.Contains(msg, "has no nvJitLink bindings") {
			t.Fatalf("Load in a build without bindings: %q does not say so", msg)
		}
		return
	}
	wants := []string{"cuda: ", "nvJitLink", "CUDAGEN_LIBNVJITLINK", "install", "libnvJitLink-missing.so"}
	if !withCgo {
		wants = []string{"cuda: ", "nvJitLink", "without cgo"}
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

// TestNotDeclared: each function another pinned version binds and this
// build's header does not declare returns an error matching
// ErrNotSupported that names it, without loading the library.
func TestNotDeclared(t *testing.T) {
	for _, c := range notDeclaredCalls {
		if err := c.call(); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "does not declare it") {
			t.Errorf("%s in a build whose header lacks it: %v", c.name, err)
		}
	}
	t.Logf("%d functions of other versions not declared in this build (%s)", len(notDeclaredCalls), BuildTag)
}
