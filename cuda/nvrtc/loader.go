package nvrtc

import (
	"sync"

	"github.com/cudagen/cudagen/cuda/internal/dynlib"
)

// ErrNoLibrary is matched by every error that says NVRTC could not be
// loaded: not installed, not found, no cgo, or no bindings in this build.
var ErrNoLibrary = dynlib.ErrNoLibrary

// ErrNotSupported is matched by the error of a function the loaded NVRTC
// does not export (a library older than the pinned header).
var ErrNotSupported = dynlib.ErrNotSupported

// LoadError says why NVRTC could not be loaded; it matches ErrNoLibrary.
type LoadError = dynlib.LoadError

// FunctionInfo describes one bound function.
type FunctionInfo struct {
	Name   string // the Go name
	Symbol string // the exported symbol it is found by
	Params int    // the C parameters it takes
}

var library = &dynlib.Library{Name: "NVRTC", Files: libraryNames, Env: libraryEnv, Install: libraryInstall, Unbound: unboundWhy}

// Load loads NVRTC now (every call does on first use) and returns the path
// it opened, or the error every call returns.
func Load() (string, error) {
	path, err := library.Open()
	if err == nil {
		resolveAll()
	}
	return path, err
}

// proc is one function's entry point, found on first use.
type proc struct {
	addr   uintptr
	symbol string
}

var resolveOnce sync.Once

// resolveAll finds every function of the open library.
func resolveAll() {
	resolveOnce.Do(func() {
		for i := range procs {
			procs[i].symbol = Functions[i].Symbol
			procs[i].addr = library.Sym(Functions[i].Symbol)
		}
	})
}
