//go:build !cuda11.8 && !cuda12.4 && !cgo

//cudagen:bound cuLogsRegisterCallback

package driver

// LogsRegisterCallbackGo returns the cgo-disabled error without cgo.
func LogsRegisterCallbackGo(func(LogLevel, string)) (func() error, error) {
	return func() error { return nil }, errNoCgo
}

// LogsRegisterCallbackGoCtx returns the cgo-disabled error without cgo.
func LogsRegisterCallbackGoCtx(Context, func(LogLevel, string)) (func() error, error) {
	return func() error { return nil }, errNoCgo
}
