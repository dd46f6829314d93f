//go:build cgo

package dynlib

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

static uintptr_t dl_open(const char *path, const char **why) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		*why = e != NULL ? e : "dlopen failed";
	}
	return (uintptr_t)h;
}
static uintptr_t dl_sym(uintptr_t h, const char *name) {
	return (uintptr_t)dlsym((void *)h, name);
}
*/
import "C"

import "unsafe"

const cgoEnabled = true

func dlopen(path string) (uintptr, string) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var why *C.char
	h := C.dl_open(cs, &why)
	if h == 0 {
		return 0, C.GoString(why)
	}
	return uintptr(h), ""
}

func dlsym(h uintptr, name string) uintptr {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return uintptr(C.dl_sym(C.uintptr_t(h), cs))
}

// CStrings copies ss into C memory (an array of C strings) for one call;
// free releases it. An empty ss is NULL.
func CStrings(ss []string) (unsafe.Pointer, func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	arr := C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof(uintptr(0))))
	ptrs := unsafe.Slice((**C.char)(arr), len(ss))
	for i, s := range ss {
		ptrs[i] = C.CString(s)
	}
	return arr, func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
		C.free(arr)
	}
}
