//go:build cgo

package gputest

// A C host function for the cuLaunchHostFunc shape test: the driver calls
// it on its own thread, so it is C, not Go.

/*
#include <stdlib.h>

void cg_set_flag(void *p) { __atomic_store_n((int *)p, 1, __ATOMIC_SEQ_CST); }
static int cg_get_flag(void *p) { return __atomic_load_n((int *)p, __ATOMIC_SEQ_CST); }
*/
import "C"

import (
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// setFlagFn is a C function pointer: void (*)(void *), setting *(int *)p to 1.
func setFlagFn() driver.HostFn { return driver.HostFn(uintptr(unsafe.Pointer(C.cg_set_flag))) }

// newFlag is a C int, 0; free it with freeC.
func newFlag() unsafe.Pointer { return C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))) }

func flagSet(p unsafe.Pointer) bool { return C.cg_get_flag(p) != 0 }

func freeC(p unsafe.Pointer) { C.free(p) }
