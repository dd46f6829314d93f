//go:build !cgo || !linux

package lifetime

import (
	"sync/atomic"
	"unsafe"
)

// Without cgo there is no driver to call, and off Linux (where the slots
// would rely on thread-local storage that outlives the thread-exit hooks,
// as glibc's static TLS does) the package does not run them: hazard calls
// are off, and every object counts its calls instead.

func Setup() bool { return false }

func SetFn(op int, fn uintptr)                              {}
func Call1(op int, w, a uintptr) int32                      { return NoSlot }
func Call2U(op int, w1, w2, a, b uintptr, u uint32) int32   { return NoSlot }
func RecordU(op int, we, ws, e, s uintptr, u uint32) int32  { return NoSlot }
func RecordEvent(we, ws, e, s uintptr) int32                { return NoSlot }
func Query(w, e uintptr) int32                              { return NoSlot }
func Sync(w, e uintptr) int32                               { return NoSlot }
func Elapsed(op int, w1, w2, a, b uintptr) (float32, int32) { return 0, NoSlot }
func Barrier() bool                                         { return true }
func Held(buf []uintptr) []uintptr                          { return buf }
func MarkLate(ws []uintptr)                                 {}
func Words(n int) []Word                                    { return make([]Word, n) }
func FreeWords(ws []Word)                                   {}
func Addr(w *atomic.Int64) uintptr                          { return uintptr(unsafe.Pointer(w)) }

func Launch(ws, wm, f uintptr, grid, block [3]uint32, shared uint32, s uintptr, params unsafe.Pointer) int32 {
	return NoSlot
}

func LaunchPacked(ws, wm, f uintptr, grid, block [3]uint32, shared uint32, s uintptr, buf *byte, size int) int32 {
	return NoSlot
}

func Direct1(op int, a uintptr) int32 { return NoSlot }
func NoopFn() uintptr                 { return 0 }

// SpinFn is 0 without cgo.
func SpinFn() uintptr { return 0 }

// LaunchFn is 0 without cgo.
func LaunchFn() uintptr { return 0 }
