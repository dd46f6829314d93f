//cudagen:sig CtxCreateV2(flags uint32, dev Device) (Context, error)

//go:build (cuda11.8 || (cuda12.4 && !cuda11.8)) && cgo

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// cuCtxCreate (the _v2 entry point, ABI 3020) creates a usable context:
// resolved at the ABI of its declared three parameters, not as
// cuCtxCreate_v3.
func TestCtxCreateV2(t *testing.T) {
	_, _, d := shapeDevice(t)
	c := must[driver.Context](t)(driver.CtxCreateV2(0, d))
	defer driver.CtxDestroy(c)
	p := must[driver.DevicePtr](t)(driver.MemAllocCtx(c, 1<<20))
	ok(t, driver.MemsetD8Ctx(c, p, 7, 1<<20))
	ok(t, driver.CtxSynchronizeCtx(c))
	var got driver.Context
	ok(t, driver.PointerGetAttributeCtx(c, &got, driver.PointerAttributeContext, p))
	if got != c {
		t.Errorf("the allocation's context is %#x, want the created %#x", got, c)
	}
	ok(t, driver.MemFreeCtx(c, p))
	v, err := driver.CtxGetAPIVersionCtx(c, c)
	ok(t, err)
	t.Logf("context %#x, API version %d", c, v)
}
