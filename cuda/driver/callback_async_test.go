//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

//cudagen:bound cuDeviceRegisterAsyncNotification

package driver

import (
	"sync/atomic"
	"testing"
)

// A Go func registered for asynchronous notifications is called with the
// driver's notification and handle; unregistering reaches the driver once.
func TestGoCallbackAsyncNotification(t *testing.T) {
	entries, child := onFake(t, "TestGoCallbackAsyncNotification")
	if !child {
		return
	}
	var got AsyncNotificationInfo
	var handle AsyncCallbackHandle
	unregister, err := DeviceRegisterAsyncNotificationGo(3, func(info *AsyncNotificationInfo, cb AsyncCallbackHandle) { got, handle = *info, cb })
	// The fake answers each entry point with its own number: an error
	// naming the entry point reached, so the handle was released.
	reached(t, entries, "cuDeviceRegisterAsyncNotification", err)
	if got.Type != AsyncNotificationTypeOverBudget || got.Info.OverBudget().BytesOverBudget != 4096 || handle != 0x77 {
		t.Errorf("the func got %+v, over budget %d, handle %#x; want OVER_BUDGET, 4096, 0x77", got, got.Info.OverBudget().BytesOverBudget, handle)
	}
	if err := unregister(); err != nil {
		t.Errorf("unregister after a failed registration: %v", err)
	}
}

func init() {
	registeredNilCalls["DeviceRegisterAsyncNotificationGo"] = func() error {
		unregister, err := DeviceRegisterAsyncNotificationGo(0, nil)
		if unregister() != nil {
			panic("the unregister of a refused registration failed")
		}
		return err
	}
	// The fake notifies an allocation over its budget (1 GiB) inside the call.
	panicForms["DeviceRegisterAsyncNotificationGo"] = func(t *testing.T, ctx Context, _ Stream, f func()) {
		unregister := must[func() error](t)(DeviceRegisterAsyncNotificationGoCtx(ctx, 0, func(*AsyncNotificationInfo, AsyncCallbackHandle) { f() }))
		if _, err := MemAllocCtx(ctx, 2<<30); err != ErrorOutOfMemory {
			t.Fatalf("MemAlloc(2 GiB) on the fake: %v", err)
		}
		check(t, unregister())
	}
}

// Unregistering from inside the func returns, and takes effect once the
// func has returned; later unregisters return; the func is not called
// after. Unregistering from another goroutine returns once the
// notifications made before have been delivered.
func TestAsyncNotificationUnregister(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	overBudget := func() {
		t.Helper()
		if _, err := MemAllocCtx(ctx, 2<<30); err != ErrorOutOfMemory {
			t.Fatalf("MemAlloc(2 GiB) on the fake: %v", err)
		}
	}

	// From inside.
	var calls atomic.Int64
	unregisters := make(chan func() error, 1)
	inside := make(chan error, 1)
	unregister := must[func() error](t)(DeviceRegisterAsyncNotificationGoCtx(ctx, 0, func(info *AsyncNotificationInfo, _ AsyncCallbackHandle) {
		if calls.Add(1) == 1 {
			if info.Type != AsyncNotificationTypeOverBudget || info.Info.OverBudget().BytesOverBudget != 1<<30 {
				t.Errorf("the func got %+v; want 1 GiB over budget", *info)
			}
			inside <- (<-unregisters)()
		}
	}))
	unregisters <- unregister
	checkUnregisterInside(t, unregister, inside, overBudget, &calls)

	// From another goroutine: the notifications before are delivered first.
	var got atomic.Int64
	unregister = must[func() error](t)(DeviceRegisterAsyncNotificationGoCtx(ctx, 0, func(*AsyncNotificationInfo, AsyncCallbackHandle) { got.Add(1) }))
	for range 3 {
		overBudget()
	}
	check(t, unregister())
	if n := got.Load(); n != 3 {
		t.Errorf("unregister returned with %d of the 3 notifications made before delivered", n)
	}
}
