//go:build !cgo && !cuda11.8

package driver

// DeviceRegisterAsyncNotificationGo returns the cgo-disabled error without cgo.
func DeviceRegisterAsyncNotificationGo(Device, func(*AsyncNotificationInfo, AsyncCallbackHandle)) (func() error, error) {
	return func() error { return nil }, errNoCgo
}

// DeviceRegisterAsyncNotificationGoCtx returns the cgo-disabled error without cgo.
func DeviceRegisterAsyncNotificationGoCtx(Context, Device, func(*AsyncNotificationInfo, AsyncCallbackHandle)) (func() error, error) {
	return func() error { return nil }, errNoCgo
}
