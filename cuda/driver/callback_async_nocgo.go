//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && !cgo

//cudagen:bound cuDeviceRegisterAsyncNotification

package driver

// DeviceRegisterAsyncNotificationGo returns the cgo-disabled error without cgo.
func DeviceRegisterAsyncNotificationGo(Device, func(*AsyncNotificationInfo, AsyncCallbackHandle)) (func() error, error) {
	return func() error { return nil }, errNoCgo
}

// DeviceRegisterAsyncNotificationGoCtx returns the cgo-disabled error without cgo.
func DeviceRegisterAsyncNotificationGoCtx(Context, Device, func(*AsyncNotificationInfo, AsyncCallbackHandle)) (func() error, error) {
	return func() error { return nil }, errNoCgo
}
