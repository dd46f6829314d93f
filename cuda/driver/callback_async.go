//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && cgo

//cudagen:bound cuDeviceRegisterAsyncNotification

package driver

/*
#include "cgqueue.h"

// The notification's bytes: CUasyncNotificationInfo (its size is checked
// against AsyncNotificationInfo below).
#define CG_ASYNC_INFO_SIZE 16

static void cg_async_tramp(void *info, void *q, void *cb) { cg_queue_put(q, 0, (uintptr_t)cb, info, CG_ASYNC_INFO_SIZE); }
static void *cg_async_tramp_ptr(void) { return (void *)cg_async_tramp; }
*/
import "C"

import (
	"sync"
	"unsafe"
)

// The trampoline copies CG_ASYNC_INFO_SIZE bytes of the notification.
var _ [C.CG_ASYNC_INFO_SIZE - unsafe.Sizeof(AsyncNotificationInfo{})]byte
var _ [unsafe.Sizeof(AsyncNotificationInfo{}) - C.CG_ASYNC_INFO_SIZE]byte

// DeviceRegisterAsyncNotificationGo registers f for device's asynchronous
// notifications, as cuDeviceRegisterAsyncNotification (a device's memory
// over its budget, say). The driver's callback copies each notification
// into a queue, and a goroutine of the registration calls f with it and
// the registration's handle, in order; f may call CUDA. unregister calls
// cuDeviceUnregisterAsyncNotification, waits until f has returned for
// every notification before, and releases f (once; later calls return
// nil). If registering fails, the notifications made during the call are
// delivered, f is released, and unregister does nothing.
func DeviceRegisterAsyncNotificationGo(device Device, f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)) (unregister func() error, err error) {
	return DeviceRegisterAsyncNotificationGoCtx(0, device, f)
}

// DeviceRegisterAsyncNotificationGoCtx is DeviceRegisterAsyncNotificationGo
// making ctx current first (for the unregistering too).
func DeviceRegisterAsyncNotificationGoCtx(ctx Context, device Device, f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)) (unregister func() error, err error) {
	q := startQueue(func(_ int32, h uintptr, data []byte) {
		var info AsyncNotificationInfo
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&info)), unsafe.Sizeof(info)), data)
		f(&info, AsyncCallbackHandle(h))
	})
	var cb AsyncCallbackHandle
	if err := DeviceRegisterAsyncNotificationCtx(ctx, device, AsyncCallback(C.cg_async_tramp_ptr()), q.userData(), &cb); err != nil {
		q.stop()
		return func() error { return nil }, err
	}
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			err = DeviceUnregisterAsyncNotificationCtx(ctx, device, cb)
			q.stop()
		})
		return err
	}, nil
}
