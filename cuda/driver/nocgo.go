//go:build !cgo

package driver

import (
	"time"
	"unsafe"
)

const cgoEnabled = false

// errNoCgo is what every call returns without cgo; it matches ErrNoDriver.
var errNoCgo error = &NoCgoError{}

// The loader's C side, never reached without cgo (load fails first).
func cOpen(string) string                                                       { return errNoCgo.Error() }
func cSym(string) uintptr                                                       { return 0 }
func cDriverGetVersion(uintptr) (int, Result)                                   { return 0, 0 }
func cGetProcAddress(uintptr, bool, string, int, uint64) (uintptr, int, Result) { return 0, 0, 0 }

// PollEventCtx returns the cgo-disabled error without cgo.
func PollEventCtx(ctx Context, ev Event, spin, budget, sleep, maxSleep time.Duration) (time.Duration, error) {
	return sleep, errNoCgo
}

func launchPacked(Context, Function, Dim3, Dim3, uint32, Stream, unsafe.Pointer, *uint16, int) error {
	return errNoCgo
}

// EventElapsedTimeAtCtx returns the cgo-disabled error without cgo.
func EventElapsedTimeAtCtx(fn uintptr, ctx Context, hStart, hEnd Event) (float32, error) {
	return 0, errNoCgo
}
