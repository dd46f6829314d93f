// Package driver is cudagen's low-level binding of the CUDA driver API,
// generated from the pinned toolkits' cuda.h (see headers/manifest.json).
//
// Each pinned toolkit has one generated file, selected by build tag
// (cuda11.8, cuda12.4, cuda13.0, ...); with no tag the newest is built. The
// package needs no CUDA toolkit or driver to build: libcuda.so.1 is opened at
// run time, on first use, and each function is resolved through
// cuGetProcAddress with the ABI version the pinned header declares.
//
// Functions return a Result as their error (nil on CUDA_SUCCESS); without a
// driver they return an error matching ErrNoDriver, and for an entry point the
// installed driver lacks, one matching ErrNotSupported (a *NotSupportedError
// naming the function and both versions). Neither panics.
//
// Functions with a Ctx suffix make the given context current on the calling
// OS thread inside the same cgo call, so they are safe from any goroutine.
//
// Most programs use the idiomatic package github.com/cudagen/cudagen/cuda
// instead.
package driver

//go:generate go run ../../gen
