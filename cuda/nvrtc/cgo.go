//go:build cgo

package nvrtc

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The trampolines are the driver's, which can make a context current
// first; NVRTC's are never given one.
int cg_make_current(uintptr_t ctx) { return ctx ? -1 : 0; }
*/
import "C"

import (
	"bytes"
	"fmt"
	"math"
	"unsafe"
)

// withCgo says whether this build has cgo (the tests read it).
const withCgo = true

// fn is the entry point a wrapper calls: 0 (which the trampolines refuse,
// returning -1) when the library or the function cannot be had.
func (p *proc) fn() C.uintptr_t {
	if p.addr == 0 {
		if _, err := Load(); err != nil {
			return 0
		}
	}
	return C.uintptr_t(p.addr)
}

// enter is fn for wrappers that check their arguments first: the entry
// point, or the error every call of it returns.
func (p *proc) enter() (uintptr, error) {
	if a := p.fn(); a != 0 {
		return uintptr(a), nil
	}
	return 0, p.missing()
}

// missing is the error of a function that cannot be called.
func (p *proc) missing() error {
	if _, err := Load(); err != nil {
		return err
	}
	return fmt.Errorf("cuda: %s: the loaded NVRTC (%s) does not export it: %w; install NVRTC of CUDA %s or newer", p.symbol, loadedPath(), ErrNotSupported, Toolkit)
}

func loadedPath() string { p, _ := library.Open(); return p }

// done is the error of a call's result r.
func (p *proc) done(r C.int) error {
	if r == 0 {
		return nil
	}
	if r == -1 {
		return p.missing()
	}
	return &Error{Func: p.symbol, Result: Result(r)}
}

// status is done for wrappers that checked their arguments first: err is
// the refusal, if any.
func status(err error, r C.int) error {
	if err != nil {
		return err
	}
	if r == 0 {
		return nil
	}
	return &Error{Result: Result(r)}
}

// cString is the text of a NUL-terminated buffer.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// cStrings copies ss into C memory (an array of C strings) for one call;
// free releases it. An empty ss is NULL.
func cStrings(ss []string) (unsafe.Pointer, func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	arr := C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof(uintptr(0))))
	ptrs := unsafe.Slice((**C.char)(arr), len(ss))
	for i, s := range ss {
		ptrs[i] = C.CString(s)
	}
	return arr, func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
		C.free(arr)
	}
}

// sizedLen checks a length a size function returned before the wrapper
// allocates it.
func sizedLen[N int32 | uint64](n N, by string) (int, error) {
	if n < 0 || uint64(n) > math.MaxInt32*uint64(64) {
		return 0, fmt.Errorf("cuda: %s returned the size %d, which no buffer can have: %w", by, n, ErrInvalidSize)
	}
	return int(n), nil
}

// lengthError refuses slices that share a count but differ in length.
func lengthError(fn, a, b string, la, lb int) error {
	return fmt.Errorf("cuda: %s: %s has %d elements and %s %d, and the function takes one count for both: pass slices of one length: %w", fn, a, la, b, lb, ErrInvalidSize)
}
