//go:build cgo

package driver

// The raw launches' parameter checks (cuLaunchKernel, cuLaunchKernelEx,
// cuLaunchCooperativeKernel): kernelParams must hold one pointer per
// kernel parameter, and extra must end with CU_LAUNCH_PARAM_END. The
// kernel's parameter count comes from cuFuncGetParamInfo, where the
// driver has it (12.4 and later drivers, whatever the build tag); it is
// asked once per function and kept, and forgotten when a module, library
// or context is unloaded or destroyed through this package (a function
// handle may then be reused). Where the driver lacks it, only extra is
// checked.

/*
#include <stddef.h>
#include <stdint.h>
extern int cg_make_current(uintptr_t ctx);

// cg_param_count counts f's parameters: cuFuncGetParamInfo succeeds for
// each index below the count. It returns -1 where it cannot tell.
static long cg_param_count(uintptr_t ctx, uintptr_t info, uintptr_t f) {
	if (!info || (ctx && cg_make_current(ctx) != 0)) return -1;
	for (size_t i = 0; i < 4096; i++) {
		size_t off = 0, size = 0;
		int r = ((int (*)(void *, size_t, size_t *, size_t *))info)((void *)f, i, &off, &size);
		if (r == 1) return (long)i; // CUDA_ERROR_INVALID_VALUE: past the last
		if (r != 0) return -1;
	}
	return -1;
}
*/
import "C"

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"unsafe"
)

// paramCounts are the parameter counts asked so far, by function: a map
// replaced whole on each addition (rare), so that a launch reads it
// without a lock.
var paramCounts struct {
	once sync.Once
	info uintptr    // cuFuncGetParamInfo, 0 where the driver lacks it
	mu   sync.Mutex // serialises the additions
	n    atomic.Pointer[map[Function]int]
}

// paramCount is f's parameter count, or -1 where the driver cannot tell.
func paramCount(ctx Context, f Function) int {
	if m := paramCounts.n.Load(); m != nil {
		if n, ok := (*m)[f]; ok {
			return n
		}
	}
	paramCounts.once.Do(func() { paramCounts.info, _ = Lookup("cuFuncGetParamInfo", 12040) })
	if paramCounts.info == 0 {
		return -1 // a driver before 12.4 cannot tell; no crossing to learn that
	}
	n := int(C.cg_param_count(C.uintptr_t(ctx), C.uintptr_t(paramCounts.info), C.uintptr_t(f)))
	if n >= 0 {
		paramCounts.mu.Lock()
		next := map[Function]int{}
		if m := paramCounts.n.Load(); m != nil {
			next = maps.Clone(*m)
		}
		next[f] = n
		paramCounts.n.Store(&next)
		paramCounts.mu.Unlock()
	}
	return n
}

// forgetParamCounts drops the kept counts: a function handle may be
// reused once its module, library or context is gone.
func forgetParamCounts() {
	paramCounts.mu.Lock()
	paramCounts.n.Store(nil)
	paramCounts.mu.Unlock()
}

// checkLaunch refuses a launch whose kernelParams do not hold one pointer
// per kernel parameter, or whose extra does not end with
// CU_LAUNCH_PARAM_END, before the driver reads past either.
func checkLaunch(fn uintptr, ctx Context, sym string, f Function, kernelParams, extra []unsafe.Pointer) (uintptr, error) {
	if len(extra) > 0 && (extra[len(extra)-1] != nil || len(extra)%2 == 0) {
		return 0, fmt.Errorf("cuda: %s: extra must be CU_LAUNCH_PARAM_* pairs ending in CU_LAUNCH_PARAM_END (nil), got %d entries ending in %p: %w (append LaunchParamEnd)", sym, len(extra), extra[len(extra)-1], ErrorInvalidValue)
	}
	if len(extra) > 0 && len(kernelParams) == 0 || f == 0 {
		return fn, nil // the parameters travel in extra; a nil function the driver refuses
	}
	if n := paramCount(ctx, f); n >= 0 && len(kernelParams) != n {
		return 0, fmt.Errorf("cuda: %s: the kernel takes %d parameters, but kernelParams holds %d pointers: %w (pass one pointer per parameter, to its value; LaunchArgs packs them for you)", sym, n, len(kernelParams), ErrorInvalidValue)
	}
	return fn, nil
}
