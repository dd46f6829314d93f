// Package nvrtc binds NVRTC, CUDA's run-time compiler of CUDA C++ to PTX,
// CUBIN and LTO-IR, generated from the pinned toolkits' nvrtc.h (go run
// ./gen; the z-files are generated, one set per pinned toolkit, selected by
// the same cudaX.Y build tags as package driver).
//
// Every function of the header is a Go function of the same name less its
// nvrtc prefix, with typed parameters and results: strings in are Go
// strings (copied to C memory for the call), arrays of strings are
// []string, and outputs whose size another function gives (GetPTX and
// GetPTXSize, GetProgramLog and GetProgramLogSize, ...) are results the
// wrapper sizes by calling that function first: []byte as NVRTC writes
// them (PTX ends with its NUL, which the driver's module loading wants),
// the log as a string. NVRTC keeps no Go memory after a call.
//
// The library is loaded on first use, without cgo at build time beyond
// the package's own: the sonames of the build's toolkit major version
// (libnvrtc.so.12 for CUDA 12.x), or the file CUDAGEN_LIBNVRTC names.
// Without it, without cgo, or in a build whose toolkit has no pinned
// nvrtc.h, every call returns an error matching ErrNoLibrary that says
// what to install or which tag to build with (a build without a pinned
// header declares the newest pinned one's API); a function the loaded
// library does not export returns one matching ErrNotSupported. Every
// NVRTC result code is an error (*Error) that says the function, the
// code, what it means and what to do; errors.Is matches it against its
// Result (errors.Is(err, nvrtc.ErrorCompilation)).
//
// A Program is not safe for concurrent use: NVRTC's program state is
// not, and sized outputs read their size and then the data in two calls.
// Different programs may be used from different goroutines.
package nvrtc
