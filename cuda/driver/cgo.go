//go:build cgo

package driver

// #include <stdint.h>
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

const cgoEnabled = true

// errNoCgo is never returned with cgo.
var errNoCgo error = &NoCgoError{}

// status is a call's error: the resolution's, else the driver's result.
func status(err error, r C.int) error {
	if err != nil {
		return err
	}
	return Result(r).Err()
}

// enter returns the entry point, resolving it on first use, once the C
// side can make a context current (every wrapper may be given one). On
// error it returns 0, which the trampolines refuse to call. The fast path,
// one atomic load, inlines.
func (p *proc) enter() (a uintptr, err error) {
	if a = p.ready.Load(); a == 0 {
		a, err = p.enterSlow()
	}
	return
}

// fn is the entry point a wrapper hands its trampoline: enter's, 0 on
// error. The fast path, one atomic load, inlines.
func (p *proc) fn() C.uintptr_t {
	a := p.ready.Load()
	if a == 0 {
		a = p.fnSlow()
	}
	return C.uintptr_t(a)
}

//go:noinline
func (p *proc) fnSlow() uintptr {
	a, _ := p.enterSlow()
	return a
}

// done is the error of a call through fn; success inlines.
func (p *proc) done(r C.int) error {
	if r == 0 {
		return nil
	}
	return p.failed(r)
}

// failed is the error of a failed call: where the trampoline refused to
// call (-1), the resolution's (its errors are sticky: enter returns the
// same one again), else the driver's result.
func (p *proc) failed(r C.int) error {
	if r == -1 {
		if _, err := p.enter(); err != nil {
			return err
		}
	}
	return Result(r).Err()
}

func (p *proc) enterSlow() (uintptr, error) {
	a, err := p.addr()
	if err == nil {
		err = ensureCtxFns()
	}
	if err != nil {
		return 0, err
	}
	p.ready.Store(a)
	return a, nil
}

// procNamed is the proc resolved by name (the header's default entry point).
func procNamed(name string) *proc {
	for i := range Functions {
		if Functions[i].Name == name {
			return &procs[i]
		}
	}
	return nil
}

var ctxOnce atomic.Bool
var ctxMu sync.Mutex

// ensureCtxFns hands cuCtxGetCurrent and cuCtxSetCurrent to the C side once.
// The fast path is small enough to inline.
func ensureCtxFns() error {
	if ctxOnce.Load() {
		return nil
	}
	return ensureCtxFnsSlow()
}

func ensureCtxFnsSlow() error {
	ctxMu.Lock()
	defer ctxMu.Unlock()
	if ctxOnce.Load() {
		return nil
	}
	get, err := ctxProcs[0].addr()
	if err != nil {
		return err
	}
	set, err := ctxProcs[1].addr()
	if err != nil {
		return err
	}
	cSetCtxFns(get, set)
	ctxOnce.Store(true)
	return nil
}

// cString is the text of a NUL-terminated byte buffer.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// lengthError says that slices sharing a C count differ in length.
func lengthError(fn, a, b string, la, lb int) error {
	return fmt.Errorf("cuda: %s: %s and %s must have the same length (they share one count), got %d and %d; pass equally long slices", fn, a, b, la, lb)
}

// pinWords pins, in pin, what the pointer words at the given offsets of
// the value at p point to, so that cgo accepts p though its Go memory
// holds Go pointers. Pinning a pointer outside the Go heap does nothing.
func pinWords(pin *runtime.Pinner, p unsafe.Pointer, words []uintptr) {
	if p == nil {
		return
	}
	for _, w := range words {
		if q := *(*unsafe.Pointer)(unsafe.Add(p, w)); q != nil {
			pin.Pin(q)
		}
	}
}

// pinElems is pinWords for each of n elements of size bytes from p (a
// slice's capacity: cgo checks the whole array).
func pinElems(pin *runtime.Pinner, p unsafe.Pointer, n int, size uintptr, words []uintptr) {
	for i := 0; i < n; i++ {
		pinWords(pin, unsafe.Add(p, uintptr(i)*size), words)
	}
}

// checkImage refuses, with fn 0, a module image the driver would read
// past (imageError).
func checkImage(fn uintptr, sym, name string, image []byte) (uintptr, error) {
	if err := imageError(sym, name, image); err != nil {
		return 0, err
	}
	return fn, nil
}
