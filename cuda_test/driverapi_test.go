//go:build cgo

package gputest

import (
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
)

// cuPointerGetAttribute through the typed form: the memory type, the
// context and the range of a device allocation, and a mismatched type
// refused before the call.
func TestPointerGetAttributeTyped(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	const size = 3 << 20
	p := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, size))
	defer driver.MemFreeCtx(ctx, p)
	var mt driver.Memorytype
	ok(t, driver.PointerGetAttributeCtx(ctx, &mt, driver.PointerAttributeMemoryType, p+100))
	if mt != driver.MemorytypeDevice {
		t.Errorf("memory type %v, want CU_MEMORYTYPE_DEVICE", mt)
	}
	var c driver.Context
	ok(t, driver.PointerGetAttributeCtx(ctx, &c, driver.PointerAttributeContext, p))
	if c != ctx {
		t.Errorf("context %#x, want %#x", c, ctx)
	}
	var start driver.DevicePtr
	var n uint64
	ok(t, driver.PointerGetAttributeCtx(ctx, &start, driver.PointerAttributeRangeStartAddr, p+4096))
	ok(t, driver.PointerGetAttributeCtx(ctx, &n, driver.PointerAttributeRangeSize, p+4096))
	if start != p || n < size {
		t.Errorf("range %#x + %d, want %#x + at least %d", start, n, p, size)
	}
	var managed bool
	ok(t, driver.PointerGetAttributeCtx(ctx, &managed, driver.PointerAttributeIsManaged, p))
	if managed {
		t.Error("cuMemAlloc memory reported as managed")
	}
	var small int32
	if err := driver.PointerGetAttributeCtx(ctx, &small, driver.PointerAttributeContext, p); err == nil {
		t.Error("a *int32 for the context was accepted")
	}
	t.Logf("memory type %v, range %#x + %d bytes, managed %v", mt, start, n, managed)
}

// A Go func queued on a stream with LaunchHostFuncGo runs after the work
// before it, and the work after it waits for it.
func TestLaunchHostFuncGo(t *testing.T) {
	dev, ctx, _ := shapeDevice(t)
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)
	cs, err := dev.NewStream()
	ok(t, err)
	defer cs.Close()
	ran := make(chan time.Time, 1)
	ok(t, cs.Spin(50*time.Millisecond))
	t0 := time.Now()
	ok(t, driver.LaunchHostFuncGoCtx(ctx, cs.Handle(), func() { ran <- time.Now() }))
	select {
	case at := <-ran:
		if d := at.Sub(t0); d < 40*time.Millisecond {
			t.Errorf("the func ran %v after it was queued, before the 50 ms of work ahead of it", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the func did not run")
	}
	ok(t, cs.Sync())
	// The one-shot form's C form: a handle from NewHostFn runs each time.
	calls := make(chan struct{}, 2)
	fn, ud, release := driver.NewHostFn(func() { calls <- struct{}{} })
	defer release()
	ok(t, driver.LaunchHostFuncCtx(ctx, s, fn, ud))
	ok(t, driver.LaunchHostFuncCtx(ctx, s, fn, ud))
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	if len(calls) != 2 {
		t.Errorf("NewHostFn's func ran %d times, want 2", len(calls))
	}
}
