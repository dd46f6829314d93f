//go:build cgo

package gputest

// For BenchmarkWaitStrategy's "hostfunc": cuLaunchHostFunc runs cg_efd_wake
// on the driver's thread, which wakes the waiter blocked reading an eventfd.

/*
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

void cg_efd_wake(void *p) { uint64_t one = 1; if (write(*(int *)p, &one, 8) != 8) abort(); }
static int *cg_efd_new(void) { int *p = malloc(sizeof *p); *p = eventfd(0, EFD_CLOEXEC); return p; }
static int cg_efd_wait(int *p) { uint64_t v; return read(*p, &v, 8) == 8 ? 0 : -1; }
static void cg_efd_free(int *p) { close(*p); free(p); }
*/
import "C"

import (
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

type efd struct{ p *C.int }

func newEfd() efd                  { return efd{C.cg_efd_new()} }
func (e efd) fn() driver.HostFn    { return driver.HostFn(unsafe.Pointer(C.cg_efd_wake)) }
func (e efd) data() unsafe.Pointer { return unsafe.Pointer(e.p) }
func (e efd) wait() bool           { return C.cg_efd_wait(e.p) == 0 }
func (e efd) close()               { C.cg_efd_free(e.p) }
