//go:build cgo

package driver

// What the driver keeps after a call, copied into C memory: a slice or
// image that gen/bindings.json says the driver keeps ("keeps" with
// "copy": cuLinkCreate's option values, for the link's life) is copied
// into C memory before the call; the copy belongs to the handle the call
// makes or names, and the function that destroys the handle frees it on
// success. Go memory is never kept by the driver.

// #include <stdlib.h>
// #include <string.h>
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// kept holds the C copies by owning handle.
var kept struct {
	sync.Mutex
	m map[keptKey][]unsafe.Pointer
}

type keptKey struct {
	kind string // the handle's Go type
	h    uintptr
}

// keepCopy copies n bytes at p into new C memory (nil for none).
func keepCopy(p unsafe.Pointer, n int) unsafe.Pointer {
	if p == nil || n <= 0 {
		return nil
	}
	c := C.malloc(C.size_t(n))
	if c == nil {
		return nil // the driver then reads NULL and refuses the call
	}
	C.memcpy(c, p, C.size_t(n))
	return c
}

// keepOrFree gives the copy c to the handle h of kind after a successful
// call, or frees it after a failed one.
func keepOrFree(err error, kind string, h uintptr, c unsafe.Pointer) {
	if c == nil {
		return
	}
	if err != nil || h == 0 {
		C.free(c)
		return
	}
	kept.Lock()
	if kept.m == nil {
		kept.m = map[keptKey][]unsafe.Pointer{}
	}
	k := keptKey{kind, h}
	kept.m[k] = append(kept.m[k], c)
	kept.Unlock()
}

// releaseKept frees what the handle h of kind kept, after the call that
// destroyed it succeeded.
func releaseKept(kind string, h uintptr) {
	kept.Lock()
	cs := kept.m[keptKey{kind, h}]
	delete(kept.m, keptKey{kind, h})
	kept.Unlock()
	for _, c := range cs {
		C.free(c)
	}
}

// keptCount is how many C copies are kept (for tests).
func keptCount() int {
	kept.Lock()
	defer kept.Unlock()
	n := 0
	for _, cs := range kept.m {
		n += len(cs)
	}
	return n
}

// rankError refuses a slice shorter than the rank parameter requires.
func rankError(fn, name string, have, need int, rank string) error {
	return fmt.Errorf("cuda: %s: %s has %d elements, but %s requires %d: %w (pass one element per dimension)", fn, name, have, rank, need, ErrorInvalidValue)
}
