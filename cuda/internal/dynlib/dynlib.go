// Package dynlib opens the CUDA libraries other than the driver (NVRTC,
// nvJitLink) at run time and finds their functions by symbol, for the
// generated packages that bind them. Nothing is loaded at build time: a
// machine without the library, or without cgo, gets an error naming what
// to install and the variable that names the file.
package dynlib

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrNoLibrary is matched by every error that says a library could not be
// loaded (not installed, not found, no cgo, no bindings in this build).
var ErrNoLibrary = errors.New("cuda: library not loaded")

// ErrNotSupported is matched by the error of a function the loaded library
// does not export (a library older than the header).
var ErrNotSupported = errors.New("cuda: function not supported by the loaded library")

// Library is one shared library, opened once on first use.
type Library struct {
	Name    string   // "NVRTC", in messages
	Files   []string // the sonames to try, in order
	Env     string   // the variable that gives the file's path instead
	Install string   // what provides it, in messages
	Unbound string   // non-empty: this build binds no function of it, and why

	once    sync.Once
	resolve sync.Once
	handle  uintptr
	path    string
	err     error
}

// LoadError says why a library could not be loaded. It matches ErrNoLibrary.
type LoadError struct {
	Library string
	Tried   []string // what was tried, each with dlopen's reason
	Why     string   // set when nothing could be tried
	Env     string
	Install string
}

func (e *LoadError) Error() string {
	if e.Why != "" {
		return "cuda: loading " + e.Library + ": " + e.Why
	}
	return fmt.Sprintf("cuda: loading %s: not found (%s); install %s, or set %s to the library's path",
		e.Library, strings.Join(e.Tried, "; "), e.Install, e.Env)
}

// Is makes a LoadError match ErrNoLibrary.
func (e *LoadError) Is(target error) bool { return target == ErrNoLibrary }

// Open opens the library: the file $Env names when it is set (that file
// only), else the first of Files the dynamic loader finds. It returns the
// path opened. The result, success or error, is kept: later calls return it.
func (l *Library) Open() (path string, err error) {
	l.once.Do(func() { l.path, l.err = l.open() })
	return l.path, l.err
}

func (l *Library) open() (string, error) {
	fail := &LoadError{Library: l.Name, Env: l.Env, Install: l.Install}
	if l.Unbound != "" {
		fail.Why = l.Unbound
		return "", fail
	}
	if !cgoEnabled {
		fail.Why = "this program was built without cgo (CGO_ENABLED=0), and " + l.Name + " is a C library: build with cgo and a C compiler"
		return "", fail
	}
	files := l.Files
	if p := os.Getenv(l.Env); p != "" {
		files = []string{p}
	}
	for _, f := range files {
		h, why := dlopen(f)
		if h != 0 {
			l.handle = h
			return f, nil
		}
		fail.Tried = append(fail.Tried, f+": "+why)
	}
	if len(fail.Tried) == 0 {
		fail.Why = "no shared library is named for this build"
	}
	return "", fail
}

// Sym returns the address of an exported function, 0 if there is none.
// The library must be open.
func (l *Library) Sym(name string) uintptr {
	if l.handle == 0 {
		return 0
	}
	return dlsym(l.handle, name)
}

// ErrInvalidSize is matched by a refusal before a call: slices that share
// a count differ in length, or a size the library returned cannot be a
// buffer's.
var ErrInvalidSize = errors.New("cuda: invalid size")

// Proc is one function of a library, found on first use. Its entry point
// is published atomically after its names, so that calls racing with the
// first one read either 0 (and resolve) or the whole.
type Proc struct {
	addr         atomic.Uintptr
	name, symbol string
}

// Resolve finds the n functions of l by symbol, once l is open: each(i)
// is the i-th function's Proc, its C name and its symbol.
func (l *Library) Resolve(n int, each func(i int) (p *Proc, name, symbol string)) {
	l.resolve.Do(func() {
		for i := range n {
			p, name, sym := each(i)
			p.name, p.symbol = name, sym
			p.addr.Store(l.Sym(sym))
		}
	})
}

// Addr is the entry point, 0 before Resolve or where the library does not
// export it.
func (p *Proc) Addr() uintptr { return p.addr.Load() }

var entryMu sync.Mutex

// Entry is the entry point of the function named, which a package finds
// by hand (not in its generated table): the library is opened first, and
// the error says why there is none (pin names the bindings' header).
func (l *Library) Entry(p *Proc, name, pin string) (uintptr, error) {
	if a := p.addr.Load(); a != 0 {
		return a, nil
	}
	if _, err := l.Open(); err != nil {
		return 0, err
	}
	entryMu.Lock()
	defer entryMu.Unlock()
	if a := p.addr.Load(); a != 0 {
		return a, nil
	}
	p.name, p.symbol = name, name
	a := l.Sym(name)
	if a == 0 {
		return 0, l.Missing(p, pin)
	}
	p.addr.Store(a)
	return a, nil
}

// Name is the function's C name ("" before Resolve).
func (p *Proc) Name() string { return p.name }

// Missing is the error of a function that cannot be called: the library's
// load error, or ErrNotSupported where the loaded library does not export
// it (older than the header the bindings come from, which pin names:
// "CUDA 12.4").
func (l *Library) Missing(p *Proc, pin string) error {
	path, err := l.Open()
	if err != nil {
		return err
	}
	if p.symbol != p.name {
		// A versioned symbol (nvJitLink's __nvJitLinkCreate_12_4): a
		// library of another major version lacks it.
		return fmt.Errorf("cuda: %s: the loaded %s (%s) does not export %s: %w; install %s from %s or a newer release of its major version (a library exports the versioned entry points of its own major version only), or build with the tag of the loaded library's toolkit", p.name, l.Name, path, p.symbol, ErrNotSupported, l.Name, pin)
	}
	return fmt.Errorf("cuda: %s: the loaded %s (%s) does not export %s: %w; install %s from %s or newer", p.name, l.Name, path, p.symbol, ErrNotSupported, l.Name, pin)
}

// NotDeclared is the error of a function the bindings' header (pin, "CUDA
// 11.8") does not declare, though others' (in) do: it matches
// ErrNotSupported.
func (l *Library) NotDeclared(fn, pin, in string) error {
	return fmt.Errorf("cuda: %s: %s's %s header does not declare it, so this build has no binding of it (%w); build with the tag of a version that declares it: %s", fn, pin, l.Name, ErrNotSupported, in)
}

// CString is the text of a NUL-terminated buffer.
func CString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// SizedLen checks a length a size function returned before a wrapper
// allocates it: not negative, below 1 TiB, and an int.
func SizedLen[N ~int32 | ~uint32 | ~uint64 | ~int64](n N, by string) (int, error) {
	if n < 0 || uint64(n) >= 1<<40 || uint64(n) > math.MaxInt {
		return 0, fmt.Errorf("cuda: %s returned the size %d, which no buffer can have: %w", by, n, ErrInvalidSize)
	}
	return int(n), nil
}

// LengthError refuses slices that share a count but differ in length.
func LengthError(fn, a, b string, la, lb int) error {
	return fmt.Errorf("cuda: %s: %s has %d elements and %s %d, and the function takes one count for both: pass slices of one length: %w", fn, a, la, b, lb, ErrInvalidSize)
}
