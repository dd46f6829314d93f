// Package dynlib opens the CUDA libraries other than the driver (NVRTC,
// nvJitLink) at run time and finds their functions by symbol, for the
// generated packages that bind them. Nothing is loaded at build time: a
// machine without the library, or without cgo, gets an error naming what
// to install and the variable that names the file.
package dynlib

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
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

	once   sync.Once
	handle uintptr
	path   string
	err    error
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
