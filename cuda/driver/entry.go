//go:build cgo

package driver

/*
#include <stdint.h>

extern int cg_make_current(uintptr_t ctx);

// cg_elapsed_at calls fn, an entry point of cuEventElapsedTime's signature,
// with ctx current (0: as it is).
static int cg_elapsed_at(uintptr_t ctx, uintptr_t fn, float *ms, uintptr_t start, uintptr_t end) {
	if (ctx) {
		int r = cg_make_current(ctx);
		if (r != 0) return r;
	}
	return ((int (*)(float *, void *, void *))fn)(ms, (void *)start, (void *)end);
}
#cgo noescape cg_elapsed_at
#cgo nocallback cg_elapsed_at
*/
import "C"

// EventElapsedTimeAtCtx is EventElapsedTimeCtx through fn, an entry point
// of cuEventElapsedTime's signature that Lookup resolved at an ABI version
// of the caller's choice (2000, the original, on a driver without 12080's),
// with ctx current in the same cgo call (ctx 0: the thread's current
// context as it is). fn 0 is an error matching ErrNotSupported.
func EventElapsedTimeAtCtx(fn uintptr, ctx Context, hStart, hEnd Event) (float32, error) {
	if fn == 0 { // no entry point: what Lookup's error said
		v, _ := DriverVersion()
		return 0, &NotSupportedError{Func: "cuEventElapsedTime", Name: "cuEventElapsedTime", Need: 2000, DriverVersion: v, HeaderVersion: HeaderVersion}
	}
	if ctx != 0 {
		if err := ensureCtxFns(); err != nil {
			return 0, err
		}
	}
	var ms C.float
	r := C.cg_elapsed_at(C.uintptr_t(ctx), C.uintptr_t(fn), &ms, C.uintptr_t(hStart), C.uintptr_t(hEnd))
	return float32(ms), Result(r).boxed()
}
