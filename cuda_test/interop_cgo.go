//go:build cgo

package gputest

// Context creation for the interop tests, as another library would do it:
// cuCtxCreate and cuCtxDestroy, resolved with driver.Lookup (the generated
// layer need not bind them) and called here.

/*
#include <stdint.h>
typedef struct { int r; uintptr_t ctx; } interop_ctx_ret;

// interop_ctx_create calls cuCtxCreate (ABI 3020: CUcontext *, unsigned int
// flags, CUdevice), which makes the new context current on this thread, then
// cuCtxPopCurrent, so the thread's context stack is left as it was.
static interop_ctx_ret interop_ctx_create(uintptr_t create, uintptr_t pop, uintptr_t destroy, int dev) {
	interop_ctx_ret ret = {0, 0};
	void *ctx = 0, *popped = 0;
	ret.r = ((int (*)(void **, unsigned int, int))create)(&ctx, 0, dev);
	if (ret.r != 0) {
		return ret;
	}
	ret.r = ((int (*)(void **))pop)(&popped);
	if (ret.r != 0) {
		((int (*)(void *))destroy)(ctx);
		return ret;
	}
	ret.ctx = (uintptr_t)ctx;
	return ret;
}

static int interop_ctx_destroy(uintptr_t destroy, uintptr_t ctx) {
	return ((int (*)(void *))destroy)((void *)ctx);
}
*/
import "C"

import "github.com/cudagen/cudagen/cuda/driver"

type ctxFns struct{ create, pop, destroy uintptr }

func lookupCtxFns() (ctxFns, error) {
	var f ctxFns
	var err error
	if f.create, err = driver.Lookup("cuCtxCreate", 3020); err != nil {
		return f, err
	}
	if f.pop, err = driver.Lookup("cuCtxPopCurrent", 4000); err != nil {
		return f, err
	}
	f.destroy, err = driver.Lookup("cuCtxDestroy", 4000)
	return f, err
}

// createContext makes a new (non-primary) context on dev with cuCtxCreate.
func createContext(dev driver.Device) (driver.Context, error) {
	f, err := lookupCtxFns()
	if err != nil {
		return 0, err
	}
	ret := C.interop_ctx_create(C.uintptr_t(f.create), C.uintptr_t(f.pop), C.uintptr_t(f.destroy), C.int(dev))
	if ret.r != 0 {
		return 0, driver.Result(ret.r)
	}
	return driver.Context(ret.ctx), nil
}

// destroyContext destroys a context made by createContext (cuCtxDestroy).
func destroyContext(ctx driver.Context) error {
	f, err := lookupCtxFns()
	if err != nil {
		return err
	}
	if r := C.interop_ctx_destroy(C.uintptr_t(f.destroy), C.uintptr_t(ctx)); r != 0 {
		return driver.Result(r)
	}
	return nil
}
