//go:build cgo

package driver

/*
#include <stddef.h>
#include <stdint.h>

extern int cg_make_current(uintptr_t ctx);

// cg_launch_packed calls cuLaunchKernel with kernelParams pointing into
// buf, where the n arguments are packed at offs: the array of pointers is
// built here, on the C stack. The driver copies the values during the call.
static int cg_launch_packed(uintptr_t ctx, uintptr_t fn, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, const uint8_t *buf, const uint16_t *offs, int n) {
	if (!fn) return -1;
	if (ctx) { int r = cg_make_current(ctx); if (r) return r; }
	void *params[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) params[i] = (void *)(buf + offs[i]);
	return ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))fn)(
		(void *)f, gx, gy, gz, bx, by, bz, shmem, (void *)stream, params, NULL);
}
// noescape (the driver copies the values during the call) keeps the
// buffer on the stack; cgo honours it only with nocallback.
#cgo noescape cg_launch_packed
#cgo nocallback cg_launch_packed
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// launchProc is cuLaunchKernel's entry point.
var launchProc = procNamed("cuLaunchKernel")

func launchPacked(ctx Context, f Function, grid, block Dim3, sharedMem uint32, stream Stream, buf unsafe.Pointer, offs *uint16, n int) error {
	p := launchProc
	// One value per kernel parameter, where the driver can tell the count
	// (asked once per function: launchcheck.go).
	if c := paramCount(ctx, f); c >= 0 && c != n && f != 0 {
		return fmt.Errorf("cuda: cuLaunchKernel: the kernel takes %d parameters, but %d arguments were given: %w (pass one value per parameter, in order)", c, n, ErrorInvalidValue)
	}
	return p.done(C.cg_launch_packed(C.uintptr_t(ctx), p.fn(), C.uintptr_t(f),
		C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z), C.uint(block.X), C.uint(block.Y), C.uint(block.Z),
		C.uint(sharedMem), C.uintptr_t(stream), (*C.uint8_t)(buf), (*C.uint16_t)(unsafe.Pointer(offs)), C.int(n)))
}
