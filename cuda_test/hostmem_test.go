//go:build cgo

package gputest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Page-locked host memory from the driver (a HostPtr) round-trips through
// the asynchronous copies and maps into the device's address space; Go
// memory goes through the synchronous copies as a []byte; a PTX image
// without its NUL byte is refused before the call.
func TestHostMemoryCopies(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	const n = 1 << 16
	h := must[driver.HostPtr](t)(driver.MemAllocHostCtx(ctx, n))
	defer driver.MemFreeHostCtx(ctx, h)
	src := h.Bytes(n)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	d := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, n))
	defer driver.MemFreeCtx(ctx, d)
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)
	ok(t, driver.MemcpyHtoDAsyncCtx(ctx, d, h, n, s))
	h2 := must[driver.HostPtr](t)(driver.MemHostAllocCtx(ctx, n, driver.MemhostallocDevicemap))
	defer driver.MemFreeHostCtx(ctx, h2)
	ok(t, driver.MemcpyDtoHAsyncCtx(ctx, h2, d, n, s))
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	if !bytes.Equal(h2.Bytes(n), src) {
		t.Fatal("page-locked memory: the bytes copied back differ")
	}
	flags := must[uint32](t)(driver.MemHostGetFlagsCtx(ctx, h2))
	if flags&uint32(driver.MemhostallocDevicemap) == 0 {
		t.Errorf("MemHostGetFlags = %#x, want DEVICEMAP set", flags)
	}
	if dp := must[driver.DevicePtr](t)(driver.MemHostGetDevicePointerCtx(ctx, h2, 0)); dp == 0 {
		t.Error("MemHostGetDevicePointer returned 0")
	}
	got := make([]byte, n)
	ok(t, driver.MemcpyDtoHCtx(ctx, got, d))
	if !bytes.Equal(got, src) {
		t.Fatal("Go memory: the bytes copied back differ")
	}
	_, err := driver.ModuleLoadDataCtx(ctx, []byte(".version 6.0\n.target sm_50\n"))
	if err == nil || !strings.Contains(err.Error(), "NUL byte") {
		t.Fatalf("PTX without its NUL byte: %v", err)
	}
}
