package nccl

import "github.com/cudagen/cudagen/cuda/internal/dynlib"

// ErrNoLibrary is matched by every error that says NCCL could not be
// loaded: not installed, not found, no cgo, or no bindings in this build.
var ErrNoLibrary = dynlib.ErrNoLibrary

// ErrNotSupported is matched by the error of a function the loaded NCCL
// does not export (a library older than the pinned header).
var ErrNotSupported = dynlib.ErrNotSupported

// ErrInvalidSize is matched by a refusal before the call: slices that
// share a count differ in length, or a size NCCL returned cannot be a
// buffer's.
var ErrInvalidSize = dynlib.ErrInvalidSize

// LoadError says why NCCL could not be loaded; it matches ErrNoLibrary.
type LoadError = dynlib.LoadError

// FunctionInfo describes one bound function.
type FunctionInfo struct {
	Name   string // the Go name
	Func   string // the C name
	Symbol string // the exported symbol it is found by: Func, or the versioned entry point Func calls
	Params int    // the C parameters it takes
}

var library = &dynlib.Library{Name: "NCCL", Files: libraryNames, Env: libraryEnv, Install: libraryInstall, Unbound: unboundWhy}

// Load loads NCCL now (every call does on first use) and returns the path
// it opened, or the error every call returns.
func Load() (string, error) {
	path, err := library.Open()
	if err == nil {
		library.Resolve(len(procs), func(i int) (*dynlib.Proc, string, string) {
			return &procs[i].Proc, Functions[i].Func, Functions[i].Symbol
		})
	}
	return path, err
}

// proc is one function's entry point.
type proc struct{ dynlib.Proc }
