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

import "unsafe"

// The trampoline copies CG_ASYNC_INFO_SIZE bytes of the notification.
var _ [C.CG_ASYNC_INFO_SIZE - unsafe.Sizeof(AsyncNotificationInfo{})]byte
var _ [unsafe.Sizeof(AsyncNotificationInfo{}) - C.CG_ASYNC_INFO_SIZE]byte

// DeviceRegisterAsyncNotificationGo registers f for device's asynchronous
// notifications, as cuDeviceRegisterAsyncNotification (a device's memory
// over its budget, say). The driver's callback copies each notification
// into a queue, and a goroutine of the registration calls f with it and
// the registration's handle, in order; f may call CUDA. unregister calls
// cuDeviceUnregisterAsyncNotification and releases f once the
// notifications queued before it have been delivered: called from another
// goroutine, it waits until f has returned for each of them; called
// inside f, it returns at once, and they are delivered after f returns.
// Later calls return nil, after the same wait. Should the driver's
// unregister fail, unregister returns its error and f stays registered.
// If registering fails, the notifications made during the call are
// delivered, f is released, and unregister does nothing. A nil f is
// refused with an error matching ErrorInvalidValue. A panic of f is
// recovered and handed to the handler (see CallbackPanic), and the
// later notifications are delivered.
func DeviceRegisterAsyncNotificationGo(device Device, f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)) (unregister func() error, err error) {
	return DeviceRegisterAsyncNotificationGoCtx(0, device, f)
}

// DeviceRegisterAsyncNotificationGoCtx is DeviceRegisterAsyncNotificationGo
// making ctx current first (for the unregistering too).
func DeviceRegisterAsyncNotificationGoCtx(ctx Context, device Device, f func(info *AsyncNotificationInfo, callback AsyncCallbackHandle)) (unregister func() error, err error) {
	if f == nil {
		return func() error { return nil }, &nilFuncError{"DeviceRegisterAsyncNotificationGo", "f"}
	}
	q := startQueue("DeviceRegisterAsyncNotificationGo", func(_ int32, h uintptr, data []byte) {
		var info AsyncNotificationInfo
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&info)), unsafe.Sizeof(info)), data)
		f(&info, AsyncCallbackHandle(h))
	})
	cb, err := DeviceRegisterAsyncNotificationCtx(ctx, device, AsyncCallback(C.cg_async_tramp_ptr()), q.userData())
	if err != nil {
		q.stop()
		return func() error { return nil }, err
	}
	r := &registration{q: q, unreg: func() error { return DeviceUnregisterAsyncNotificationCtx(ctx, device, cb) }}
	return r.unregister, nil
}
