//go:build cgo

package driver

// What the driver keeps after a call, copied into C memory: a slice or
// image that gen/bindings.json says the driver keeps ("keeps" with
// "copy": cuLinkCreate's option values, for the link's life) is copied
// into C memory before the call; the copy belongs to the handle the call
// makes or names, and the function that destroys the handle takes it
// before its call and frees it on success (gives it back on failure). Go
// memory is never kept by the driver.

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

// A handle's kept copies, taken from the table before the call that
// destroys the handle: once that call succeeds, the driver may hand the
// handle's value to a handle made on another goroutine, whose copies must
// stay. Taken before, the copies are the destroyed handle's alone.
type keptCopies struct {
	kind string
	h    uintptr
	cs   []unsafe.Pointer
}

// takeKept takes the copies the handle h of kind keeps, before the call
// that destroys it.
func takeKept(kind string, h uintptr) keptCopies {
	kept.Lock()
	defer kept.Unlock()
	k := keptKey{kind, h}
	cs := kept.m[k]
	delete(kept.m, k)
	return keptCopies{kind, h, cs}
}

// done frees the copies after the destroying call succeeded (err nil), or
// gives them back to the handle, which lives on, after it failed.
func (k keptCopies) done(err error) {
	if len(k.cs) == 0 {
		return
	}
	if err == nil {
		for _, c := range k.cs {
			C.free(c)
		}
		return
	}
	kept.Lock()
	defer kept.Unlock()
	if kept.m == nil {
		kept.m = map[keptKey][]unsafe.Pointer{}
	}
	key := keptKey{k.kind, k.h}
	kept.m[key] = append(kept.m[key], k.cs...)
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
