//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && cgo

//cudagen:bound cuDeviceRegisterAsyncNotification

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A Go func registers with the real driver for a device's asynchronous
// notifications and unregisters: both calls succeed, and unregistering
// twice reaches the driver once.
func TestAsyncNotificationGoRegisters(t *testing.T) {
	_, ctx, d := shapeDevice(t)
	calls := 0
	unregister, err := driver.DeviceRegisterAsyncNotificationGoCtx(ctx, d, func(*driver.AsyncNotificationInfo, driver.AsyncCallbackHandle) { calls++ })
	if err != nil {
		t.Fatalf("DeviceRegisterAsyncNotificationGo: %v", err)
	}
	ok(t, unregister())
	ok(t, unregister())
	t.Logf("notifications while registered: %d", calls)
}
