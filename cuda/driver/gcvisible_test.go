package driver

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// collected reports whether the object made by newTracked was finalized
// after a few collections.
func collected(done *atomic.Bool) bool {
	for i := 0; i < 10 && !done.Load(); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return done.Load()
}

// newTracked returns a heap object whose finalizer sets done.
func newTracked(done *atomic.Bool) unsafe.Pointer {
	p := new([128]byte)
	runtime.SetFinalizer(p, func(*[128]byte) { done.Store(true) })
	return unsafe.Pointer(p)
}

// A pointer stored through a union's member, or in a struct's pointer
// field, keeps its object alive while the union or struct is reachable.
func TestPointersInUnionsAndStructsStayVisibleToTheGC(t *testing.T) {
	cases := []struct {
		name  string
		store func(p unsafe.Pointer) (holder any, clear func())
	}{
		{"ExternalMemoryHandleDescHandle.Win32().Name (union, second word)", func(p unsafe.Pointer) (any, func()) {
			v := new(ExternalMemoryHandleDescHandle)
			v.Win32().Name = p
			return v, func() { v.Win32().Name = nil }
		}},
		{"ExternalMemoryHandleDesc.Handle (a union in a struct)", func(p unsafe.Pointer) (any, func()) {
			v := make([]ExternalMemoryHandleDesc, 3)
			v[2].Handle.Win32().Name = p
			return v, func() { v[2].Handle.Win32().Name = nil }
		}},
		{"LaunchConfig.Attrs (struct)", func(p unsafe.Pointer) (any, func()) {
			v := new(LaunchConfig)
			v.Attrs = (*LaunchAttribute)(p)
			return v, func() { v.Attrs = nil }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var done atomic.Bool
			holder, clear := c.store(newTracked(&done))
			if collected(&done) {
				t.Fatal("the object was collected while the value held its pointer")
			}
			runtime.KeepAlive(holder)
			// The same check fails once the pointer is gone: it can fail.
			clear()
			if !collected(&done) {
				t.Error("the object was not collected after its pointer was cleared")
			}
			runtime.KeepAlive(holder)
		})
	}
}
