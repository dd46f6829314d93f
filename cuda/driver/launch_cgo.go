//go:build cgo

package driver

/*
#include <stddef.h>
#include <stdint.h>

extern int cg_make_current(uintptr_t ctx);

// cg_launch_packed calls cuLaunchKernel with the arguments packed in buf:
// extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
// &size, CU_LAUNCH_PARAM_END}, built here on the C stack. The driver copies
// the buffer during the call.
static int cg_launch_packed(uintptr_t ctx, uintptr_t fn, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, const void *buf, size_t size) {
	if (!fn) return -1;
	if (ctx) { int r = cg_make_current(ctx); if (r) return r; }
	void *extra[5] = {(void *)1, (void *)buf, (void *)2, &size, (void *)0};
	return ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))fn)(
		(void *)f, gx, gy, gz, bx, by, bz, shmem, (void *)stream, NULL, extra);
}
#cgo noescape cg_launch_packed
#cgo nocallback cg_launch_packed
*/
import "C"

import "unsafe"

// launchProc is cuLaunchKernel's entry point.
var launchProc = procNamed("cuLaunchKernel")

func launchPacked(ctx Context, f Function, grid, block Dim3, sharedMem uint32, stream Stream, buf unsafe.Pointer, n int) error {
	p := launchProc
	return p.done(C.cg_launch_packed(C.uintptr_t(ctx), p.fn(), C.uintptr_t(f),
		C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z), C.uint(block.X), C.uint(block.Y), C.uint(block.Z),
		C.uint(sharedMem), C.uintptr_t(stream), buf, C.size_t(n)))
}
