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
func cudagenHostFn(h C.uintptr_t) {
	c := cgo.Handle(h).Value().(*goCallback)
	defer c.done(cgo.Handle(h))
	c.host()
}

//export cudagenStreamCallback
func cudagenStreamCallback(stream C.uintptr_t, status C.int, h C.uintptr_t) {
	c := cgo.Handle(h).Value().(*goCallback)
	defer c.done(cgo.Handle(h))
	c.stream(Stream(stream), Result(status))
}

//export cudagenB2D
func cudagenB2D(blockSize C.int) C.size_t {
	return C.size_t(b2dFunc(int32(blockSize)))
}
