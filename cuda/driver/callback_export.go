//go:build cgo

package driver

// The Go side of the callbacks the driver makes (callback.go). A file
// with //export may only declare in its preamble.

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

//export cudagenHostFn
func cudagenHostFn(h C.uintptr_t) { callHost(cgo.Handle(h)) }

//export cudagenStreamCallback
func cudagenStreamCallback(stream C.uintptr_t, status C.int, h C.uintptr_t) {
	callStream(cgo.Handle(h), Stream(stream), Result(status))
}

//export cudagenB2D
func cudagenB2D(blockSize C.int) C.size_t { return C.size_t(callB2D(int32(blockSize))) }
