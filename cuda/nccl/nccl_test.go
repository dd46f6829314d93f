package nccl

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/internal/libtest"
)

func TestNoLibrary(t *testing.T) {
	libtest.Child(t, "TestNoLibraryChild", "CUDAGEN_LIBNCCL="+filepath.Join(t.TempDir(), "libnccl-missing.so"))
}

func TestNoLibraryChild(t *testing.T) {
	libtest.InChild(t)
	_, err := Load()
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Load without the library: %v, want an error matching ErrNoLibrary", err)
	}
	msg := err.Error()
	if BuildTag == "" {
		if !strings.Contains(msg, "has no NCCL bindings") {
			t.Fatalf("Load in a build without bindings: %q does not say so", msg)
		}
		return
	}
	wants := []string{"cuda: ", "NCCL", "CUDAGEN_LIBNCCL", "install", "libnccl-missing.so"}
	if !withCgo {
		wants = []string{"cuda: ", "NCCL", "without cgo"}
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

func TestUniqueIDText(t *testing.T) {
	var id UniqueID
	for i := range id.Internal {
		id.Internal[i] = byte(i*31 + 7)
	}
	text, err := id.MarshalText()
	if err != nil || len(text) != 179 || !strings.HasPrefix(string(text), "ncclid1:") || id.String() != string(text) {
		t.Fatalf("MarshalText: %q (%d), %v", text, len(text), err)
	}
	var back UniqueID
	if err := back.UnmarshalText(append(text, '\n')); err != nil || back != id {
		t.Fatalf("UnmarshalText of MarshalText's text and a newline: %v, equal %v", err, back == id)
	}
	bin, _ := id.MarshalBinary()
	var fromBin UniqueID
	if err := fromBin.UnmarshalBinary(bin); err != nil || fromBin != id {
		t.Fatalf("binary round trip: %v", err)
	}
	for _, bad := range []string{"", "ncclid1:", "ncclid2:" + string(text[8:]), string(text[:100]), string(text) + "A", strings.Replace(string(text), "A", "+", 1)} {
		keep := back
		if err := back.UnmarshalText([]byte(bad)); !errors.Is(err, ErrInvalidSize) || !strings.HasPrefix(err.Error(), "cuda: nccl: reading a unique ID: ") || back != keep {
			t.Errorf("UnmarshalText(%.30q): %v; want a refusal that leaves the ID as it was", bad, err)
		}
	}
	if err := back.UnmarshalBinary(bin[:127]); !errors.Is(err, ErrInvalidSize) || back != id {
		t.Errorf("UnmarshalBinary of 127 bytes: %v", err)
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
