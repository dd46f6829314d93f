//go:build !cgo

package hazard

import (
	"sync/atomic"
	"unsafe"
)

// Without cgo there is no driver to call: hazard calls are off.

func Setup() bool { setup.Store(true); return false }

func Call1(fn, w, a uintptr) int32                      { return NoSlot }
func Call2(fn, w1, w2, a, b uintptr) int32              { return NoSlot }
func Call2U(fn, w1, w2, a, b uintptr, u uint32) int32   { return NoSlot }
func Record(fn, we, ws, e, s uintptr) int32             { return NoSlot }
func RecordU(fn, we, ws, e, s uintptr, u uint32) int32  { return NoSlot }
func Elapsed(fn, w1, w2, a, b uintptr) (float32, int32) { return 0, NoSlot }
func Barrier() bool                                     { return true }
func Held(buf []uintptr) []uintptr                      { return buf }
func Words(n int) []Word                                { return make([]Word, n) }
func FreeWords(ws []Word)                               {}
func Addr(w *atomic.Int64) uintptr                      { return uintptr(unsafe.Pointer(w)) }

// SpinFn is 0 without cgo.
func SpinFn() uintptr { return 0 }
