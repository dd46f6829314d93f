//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && cgo

//cudagen:bound cuDeviceRegisterAsyncNotification

package driver

/*
#include <stdint.h>

extern void cudagenAsyncCallback(void *, uintptr_t, uintptr_t);

static void cg_async_tramp(void *info, void *ud, void *cb) { cudagenAsyncCallback(info, (uintptr_t)ud, (uintptr_t)cb); }
static void *cg_async_tramp_ptr(void) { return (void *)cg_async_tramp; }
static void *cg_async_ud(uintptr_t v) { return (void *)v; }
*/
import "C"

import (
	"runtime/cgo"
	"sync"
)

// asyncCallback is what an asynchronous-notification handle holds.
type asyncCallback struct {
	f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)
}

// DeviceRegisterAsyncNotificationGo registers f for device's asynchronous
// notifications, as cuDeviceRegisterAsyncNotification (a device's memory
// over its budget, say). The driver calls f on a thread of its own, where
// f must not call CUDA, with the notification (valid during the call) and
// the registration's handle, until unregister is called: unregister calls
// cuDeviceUnregisterAsyncNotification and then releases the handle that
// keeps f alive (once; later calls return nil). If registering fails, f is
// released at once and unregister does nothing.
func DeviceRegisterAsyncNotificationGo(device Device, f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)) (unregister func() error, err error) {
	return DeviceRegisterAsyncNotificationGoCtx(0, device, f)
}

// DeviceRegisterAsyncNotificationGoCtx is DeviceRegisterAsyncNotificationGo
// making ctx current first (for the unregistering too).
func DeviceRegisterAsyncNotificationGoCtx(ctx Context, device Device, f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)) (unregister func() error, err error) {
	h := cgo.NewHandle(&asyncCallback{f: f})
	var cb AsyncCallbackHandle
	if err := DeviceRegisterAsyncNotificationCtx(ctx, device, AsyncCallback(C.cg_async_tramp_ptr()), C.cg_async_ud(C.uintptr_t(h)), &cb); err != nil {
		h.Delete()
		return func() error { return nil }, err
	}
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			err = DeviceUnregisterAsyncNotificationCtx(ctx, device, cb)
			h.Delete()
		})
		return err
	}, nil
}
