//go:build cgo

package nvjitlink

// #include <stdint.h>
import "C"

import "github.com/cudagen/cudagen/cuda/internal/dynlib"

// withCgo says whether this build has cgo (the tests read it).
const withCgo = true

// fn is the entry point a wrapper calls: 0 (which the trampolines refuse,
// returning -1) when the library or the function cannot be had.
func (p *proc) fn() C.uintptr_t {
	if p.Addr() == 0 {
		Load()
	}
	return C.uintptr_t(p.Addr())
}

// enter is fn for wrappers that check their arguments first: the entry
// point, or the error every call of it returns.
func (p *proc) enter() (uintptr, error) {
	if a := p.fn(); a != 0 {
		return uintptr(a), nil
	}
	return 0, library.Missing(&p.Proc, pinName)
}

// done is the error of a call's result r.
func (p *proc) done(r C.int) error {
	switch r {
	case 0:
		return nil
	case -1:
		return library.Missing(&p.Proc, pinName)
	}
	return &Error{Func: p.Name(), Result: Result(r)}
}

// status is done for wrappers that checked their arguments first: err is
// the refusal, if any.
func (p *proc) status(err error, r C.int) error {
	if err != nil || r == 0 {
		return err
	}
	return p.done(r)
}

var (
	cString     = dynlib.CString
	cStrings    = dynlib.CStrings
	lengthError = dynlib.LengthError
)

func sizedLen[N int32 | uint32 | uint64](n N, by string) (int, error) { return dynlib.SizedLen(n, by) }
