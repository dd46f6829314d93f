// Package nvjitlink binds nvJitLink, CUDA's JIT linker of CUBIN, PTX,
// LTO-IR and fatbin into a CUBIN or PTX, generated from the pinned toolkits'
// nvJitLink.h (go run ./gen; the z-files are generated, one set per pinned
// toolkit that ships the header, selected by the cudaX.Y build tags of
// package driver).
//
// Every function of the header is a Go function of the same name less its
// nvJitLink prefix, resolved by the versioned entry point the header's
// inline function calls (Create is __nvJitLinkCreate_12_4 under the
// cuda12.4 tag): options are a []string, input data a []byte that nvJitLink
// reads during the call (AddData; it keeps no Go memory), and the linked
// CUBIN or PTX and the logs are results the wrapper sizes by calling
// their Size function first ([]byte, and the logs as strings).
//
// The library is loaded on first use: the sonames of the build's toolkit
// major version (libnvJitLink.so.12 for CUDA 12.x), or the file
// CUDAGEN_LIBNVJITLINK names. Without it, without cgo, or in a build whose
// toolkit has no pinned nvJitLink.h (CUDA 11.8 ships none), every call
// returns an error matching ErrNoLibrary that says what to install or
// which tag to build with (a build without a pinned header declares the
// newest pinned one's API); a function the loaded library does not export
// returns one matching ErrNotSupported. Every result code is an error
// (*Error) that says the function, the code, what it means and what to do;
// errors.Is matches it against its Result.
//
// A Handle is not safe for concurrent use; different handles may be used
// from different goroutines.
package nvjitlink
