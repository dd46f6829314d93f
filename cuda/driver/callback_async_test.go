//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

//cudagen:bound cuDeviceRegisterAsyncNotification

package driver

import "testing"

// A Go func registered for asynchronous notifications is called with the
// driver's notification and handle; unregistering reaches the driver once.
func TestGoCallbackAsyncNotification(t *testing.T) {
	if !onFake(t) {
		return
	}
	var got AsyncNotificationInfo
	var handle AsyncCallbackHandle
	unregister, err := DeviceRegisterAsyncNotificationGo(3, func(info *AsyncNotificationInfo, cb AsyncCallbackHandle) { got, handle = *info, cb })
	// The fake answers each entry point with its own number: an error
	// naming the entry point reached, so the handle was released.
	reached(t, "cuDeviceRegisterAsyncNotification", err)
	if got.Type != AsyncNotificationTypeOverBudget || got.Info.OverBudget().BytesOverBudget != 4096 || handle != 0x77 {
		t.Errorf("the func got %+v, over budget %d, handle %#x; want OVER_BUDGET, 4096, 0x77", got, got.Info.OverBudget().BytesOverBudget, handle)
	}
	if err := unregister(); err != nil {
		t.Errorf("unregister after a failed registration: %v", err)
	}
}

// The form on the memory-rules fake, which notifies an allocation over its
// budget (1 GiB) inside the call.
func init() {
	registeredForms["DeviceRegisterAsyncNotificationGo"] = registeredForm{
		registerNil: func() (func() error, error) { return DeviceRegisterAsyncNotificationGo(0, nil) },
		register: func(t *testing.T, ctx Context, f func()) (func() error, error) {
			return DeviceRegisterAsyncNotificationGoCtx(ctx, 0, func(info *AsyncNotificationInfo, _ AsyncCallbackHandle) {
				if info.Type != AsyncNotificationTypeOverBudget || info.Info.OverBudget().BytesOverBudget != 1<<30 {
					t.Errorf("the func got %+v; want 1 GiB over budget", *info)
				}
				f()
			})
		},
		fire: func(t *testing.T, ctx Context) {
			if _, err := MemAllocCtx(ctx, 2<<30); err != ErrorOutOfMemory {
				t.Fatalf("MemAlloc(2 GiB) on the fake: %v", err)
			}
		},
		calls: "notifications made",
	}
}
