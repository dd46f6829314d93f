//go:build cgo

package driver

// #include <stdint.h>
import "C"

// inCtx is a call on a handle that owns an OS thread (gen/bindings.json
// "threads", cuda/internal/osthread), bound to the context it makes
// current there: ctx, or for 0 the caller's current context, read here on
// the caller's thread (none: none there either, as the call would have
// met here). An error reading it (no cuInit) leaves 0, which the call
// then meets.
func inCtx(ctx Context, call func(C.uintptr_t)) func() {
	if ctx == 0 {
		ctx, _ = CtxGetCurrent()
	}
	return func() {
		if ctx == 0 {
			_ = CtxSetCurrent(0)
		}
		call(C.uintptr_t(ctx))
	}
}
