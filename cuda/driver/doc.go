// Package driver is cudagen's low-level binding of the CUDA driver API,
// generated from the pinned toolkits' cuda.h (see headers/manifest.json):
// every function the header declares, with its enums, structs, unions,
// handles and callback types (docs/zbindings.md lists them per version).
//
// Each pinned toolkit has its generated files, selected by build tag
// (cuda11.8, cuda12.4, cuda13.0, ...); with no tag the newest is built, and
// of several pinned tags the oldest. A cudaX.Y tag that no toolkit pins
// (cuda10.0 to cuda19.9) fails the build (ztags.go), naming the pinned tags:
// pin the toolkit with go run ./gen -cuda DIR. The package needs no CUDA toolkit or driver to build: libcuda.so.1 is opened at
// run time, on first use, and each function is resolved through
// cuGetProcAddress with the ABI version the pinned header declares.
//
// Every function X has one wrapper, XCtx(ctx, ...), which makes ctx current
// on the calling OS thread inside the same cgo call (safe from any
// goroutine; 0 leaves the thread's context as it is), and X(...) is
// XCtx(0, ...). The JIT link's functions (LinkCreate, LinkAddData,
// LinkAddFile, LinkComplete, LinkDestroy) are the exception: their calls
// run on an OS thread the link owns, where ctx (for 0, the calling
// thread's current context, or none) is made current; the calling
// thread's context is left as it was (docs/cuda-package.md, "JIT links
// and OS threads"). A LinkState made elsewhere than by LinkCreate has no
// such thread: its calls run as any XCtx's do.
//
// XCtx does not restore the thread's previous context. Before calling the
// entry point it calls cuCtxSetCurrent(ctx) on the OS thread that runs the
// call, unless ctx is already current there, and ctx stays current on that
// thread after the call returns, whether the call succeeded or failed; if
// making it current fails, that error is returned and the function is not
// called. cuCtxSetCurrent replaces the top of the thread's context stack:
// a context pushed there with CtxPushCurrent is replaced, not pushed over.
// Which OS thread runs a goroutine's next call is the Go scheduler's
// choice, so after XCtx a plain X on the same goroutine may find ctx
// current or any other context. Code that passes contexts uses XCtx
// throughout; code that relies on the thread's context (X, CtxPushCurrent,
// CtxPopCurrent) locks its goroutine to its thread with
// runtime.LockOSThread, sets the context itself, and knows that an XCtx on
// that thread leaves its ctx there.
//
// Parameters mirror C unless their meaning is certain: a
// pointer is a result only where the header documents it as returned, and
// slices, string buffers and fixed arrays only where gen/bindings.json says
// so. Host buffers the driver is done with when the call returns are
// []byte (AsBytes views numbers as bytes); page-locked memory the driver
// uses later is a HostPtr; module images are []byte checked, before the
// call, to hold the whole image. Every other pointer stays *T or
// unsafe.Pointer, its wrapper saying what memory it takes. Structs have the C
// layout, checked against the real header (go test ./gen -run TestLayout).
//
// Functions return a Result as their error (nil on CUDA_SUCCESS); without a
// driver they return an error matching ErrNoDriver, and for an entry point the
// installed driver lacks, one matching ErrNotSupported (a *NotSupportedError
// naming the function and both versions). Built without cgo, every call
// returns a *NoCgoError, which matches ErrNoDriver and says how to enable
// cgo. Nothing panics.
//
// Most programs use the idiomatic package github.com/cudagen/cudagen/cuda
// instead.
package driver

//go:generate go run ../../gen
