//go:build cgo

package dynlib

import (
	"errors"
	"strings"
	"testing"
)

// A function the loaded library does not export matches ErrNotSupported
// and says what to install: a newer library for a plain symbol, one of
// the same major version for a versioned one, which a library of another
// major version lacks.
func TestMissing(t *testing.T) {
	l := &Library{Name: "libc", Files: []string{"libc.so.6"}, Env: "CUDAGEN_TEST_NO_SUCH_VARIABLE", Install: "glibc"}
	if _, err := l.Open(); err != nil {
		t.Skipf("skipping: libc.so.6 does not open here: %v", err)
	}
	for _, c := range []struct {
		name, symbol, want string
	}{
		{"nvPlain", "nvPlain", "install libc from CUDA 12.4 or newer"},
		{"nvLinkCreate", "__nvLinkCreate_12_4", "or a newer release of its major version"},
	} {
		var p Proc
		p.name, p.symbol = c.name, c.symbol
		err := l.Missing(&p, "CUDA 12.4")
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "does not export "+c.symbol) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrNotSupported naming %s and saying %q", c.name, err, c.symbol, c.want)
		}
	}
	if _, err := l.Entry(new(Proc), "no_such_function_here", "CUDA 12.4"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Entry of a function libc lacks: %v, want ErrNotSupported", err)
	}
}
