//go:build cgo

package gputest

// For BenchmarkWaitStrategy's "hostfunc": cuLaunchHostFunc runs cg_efd_wake
// on the driver's thread, which wakes the waiter blocked reading an eventfd
// ("hostfunc-netpoll": a non-blocking one, read through Go's netpoller).
// For "cthread": a C thread of its own sleeps in the driver and then wakes
// the waiter through an eventfd read through the netpoller, so that no Go
// thread sits in a cgo call during the wait.

/*
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <pthread.h>

void cg_efd_wake(void *p) { uint64_t one = 1; if (write(*(int *)p, &one, 8) != 8) abort(); }
static int *cg_efd_new(void) { int *p = malloc(sizeof *p); *p = eventfd(0, EFD_CLOEXEC); return p; }
static int cg_efd_wait(int *p) { uint64_t v; return read(*p, &v, 8) == 8 ? 0 : -1; }
static void cg_efd_free(int *p) { close(*p); free(p); }
static int *cg_efd_new_nb(void) { int *p = malloc(sizeof *p); *p = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); return p; }

typedef struct { int jobfd, donefd; uintptr_t sync, ev; int res; } cg_ct;
static void *cg_ct_main(void *p) {
	cg_ct *c = p;
	uint64_t v, one = 1;
	for (;;) {
		if (read(c->jobfd, &v, 8) != 8 || c->ev == 0) return NULL;
		c->res = ((int (*)(void *))c->sync)((void *)c->ev);
		if (write(c->donefd, &one, 8) != 8) abort();
	}
}
static cg_ct *cg_ct_new(uintptr_t sync) {
	cg_ct *c = calloc(1, sizeof *c);
	c->jobfd = eventfd(0, EFD_CLOEXEC);
	c->donefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->sync = sync;
	pthread_t th;
	pthread_create(&th, NULL, cg_ct_main, c);
	pthread_detach(th);
	return c;
}
static void cg_ct_go(cg_ct *c, uintptr_t ev) { uint64_t one = 1; c->ev = ev; if (write(c->jobfd, &one, 8) != 8) abort(); }
*/
import "C"

import (
	"os"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

type efd struct{ p *C.int }

func newEfd() efd               { return efd{C.cg_efd_new()} }
func (e efd) fn() driver.HostFn { return driver.HostFn(unsafe.Pointer(C.cg_efd_wake)) }
func (e efd) data() uintptr     { return uintptr(unsafe.Pointer(e.p)) }
func (e efd) wait() bool        { return C.cg_efd_wait(e.p) == 0 }
func (e efd) close()            { C.cg_efd_free(e.p) }

// efdNB is a non-blocking eventfd written by cg_efd_wake, read through the
// netpoller.
type efdNB struct {
	p *C.int
	f *os.File
}

func newEfdNB() efdNB {
	p := C.cg_efd_new_nb()
	return efdNB{p, os.NewFile(uintptr(*p), "eventfd")}
}
func (e efdNB) fn() driver.HostFn    { return driver.HostFn(unsafe.Pointer(C.cg_efd_wake)) }
func (e efdNB) data() uintptr        { return uintptr(unsafe.Pointer(e.p)) }
func (e efdNB) wait(buf []byte) bool { n, err := e.f.Read(buf); return n == 8 && err == nil }
func (e efdNB) close()               { e.f.Close(); C.free(unsafe.Pointer(e.p)) }

// cthread is a C thread that calls cuEventSynchronize (sync, an entry
// point) on the event it is given, then writes a non-blocking eventfd read
// through the netpoller.
type cthread struct {
	c    *C.cg_ct
	done *os.File
}

func newCthread(sync uintptr) cthread {
	c := C.cg_ct_new(C.uintptr_t(sync))
	return cthread{c, os.NewFile(uintptr(c.donefd), "done")}
}
func (t cthread) start(ev driver.Event) { C.cg_ct_go(t.c, C.uintptr_t(ev)) }
func (t cthread) wait(buf []byte) int {
	if n, err := t.done.Read(buf); n != 8 || err != nil {
		return -1
	}
	return int(t.c.res)
}
