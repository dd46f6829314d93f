package gputest

// Probes for the reliability tests: the fake driver's counters (read with
// dlsym from the library the loader opened), and the device's free memory
// (cuMemGetInfo, which the generated layer does not bind: resolved with
// driver.Lookup and called here).

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

// cudagen_fake_counter reads a long long the library at path exports; -1 if
// the library is not loaded or lacks it.
static long long cudagen_fake_counter(const char *path, const char *name) {
	void *lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (lib == NULL) return -1;
	long long *p = (long long *)dlsym(lib, name);
	long long v = p ? __atomic_load_n(p, __ATOMIC_SEQ_CST) : -1;
	dlclose(lib);
	return v;
}

// cudagen_fake_set writes a long long the library at path exports (a knob
// of the fake driver); 0 if the library is not loaded or lacks it.
static int cudagen_fake_set(const char *path, const char *name, long long v) {
	void *lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (lib == NULL) return 0;
	long long *p = (long long *)dlsym(lib, name);
	if (p != NULL) __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
	dlclose(lib);
	return p != NULL;
}

typedef struct { int r; size_t free, total; } cudagen_meminfo;

// cudagen_mem_info makes ctx current and calls cuMemGetInfo, in one call.
static cudagen_meminfo cudagen_mem_info(uintptr_t set_current, uintptr_t mem_get_info, uintptr_t ctx) {
	cudagen_meminfo m = {0, 0, 0};
	m.r = ((int (*)(void *))set_current)((void *)ctx);
	if (m.r == 0) m.r = ((int (*)(size_t *, size_t *))mem_get_info)(&m.free, &m.total);
	return m;
}
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// fakeCounter reads a counter of the fake driver; ok is false where the
// loaded driver is not the fake (the real driver has no such symbol).
func fakeCounter(name string) (v int64, ok bool) {
	path := os.Getenv("CUDAGEN_LIBCUDA")
	if path == "" {
		return 0, false
	}
	cp, cn := C.CString(path), C.CString(name)
	defer C.free(unsafe.Pointer(cp))
	defer C.free(unsafe.Pointer(cn))
	r := int64(C.cudagen_fake_counter(cp, cn))
	return r, r >= 0
}

// fakeSet sets a knob of the fake driver (fakecuda_hold_ns,
// fakecuda_gate_destroy); false where the loaded driver is not the fake.
func fakeSet(name string, v int64) bool {
	path := os.Getenv("CUDAGEN_LIBCUDA")
	if path == "" {
		return false
	}
	cp, cn := C.CString(path), C.CString(name)
	defer C.free(unsafe.Pointer(cp))
	defer C.free(unsafe.Pointer(cn))
	return C.cudagen_fake_set(cp, cn, C.longlong(v)) != 0
}

// memInfo returns the device's free and total memory, with ctx current.
func memInfo(ctx driver.Context) (free, total uint64, err error) {
	set, err := driver.Lookup("cuCtxSetCurrent", 4000)
	if err != nil {
		return 0, 0, err
	}
	get, err := driver.Lookup("cuMemGetInfo", 3020)
	if err != nil {
		return 0, 0, err
	}
	m := C.cudagen_mem_info(C.uintptr_t(set), C.uintptr_t(get), C.uintptr_t(ctx))
	if m.r != 0 {
		return 0, 0, fmt.Errorf("cuMemGetInfo: %v", driver.Result(m.r))
	}
	return uint64(m.free), uint64(m.total), nil
}
