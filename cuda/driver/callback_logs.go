//go:build !cuda11.8 && !cuda12.4 && cgo

//cudagen:bound cuLogsRegisterCallback

package driver

/*
#include <stddef.h>
#include <stdint.h>

extern void cudagenLogsCallback(uintptr_t, int, char *, size_t);

static void cg_logs_tramp(void *data, int level, char *message, size_t length) { cudagenLogsCallback((uintptr_t)data, level, message, length); }
static void *cg_logs_tramp_ptr(void) { return (void *)cg_logs_tramp; }
static void *cg_logs_ud(uintptr_t v) { return (void *)v; }
*/
import "C"

import (
	"runtime/cgo"
	"sync"
)

// logsCallback is what a logs-callback handle holds.
type logsCallback struct {
	f func(level LogLevel, message string)
}

// LogsRegisterCallbackGo registers f for the driver's log messages, as
// cuLogsRegisterCallback: the driver calls f, on the thread that logs and
// where f must not call CUDA, with each message's level and text (copied
// into a Go string), until unregister is called: unregister calls
// cuLogsUnregisterCallback and then releases the handle that keeps f alive
// (once; later calls return nil). If registering fails, f is released at
// once and unregister does nothing.
func LogsRegisterCallbackGo(f func(level LogLevel, message string)) (unregister func() error, err error) {
	return LogsRegisterCallbackGoCtx(0, f)
}

// LogsRegisterCallbackGoCtx is LogsRegisterCallbackGo making ctx current
// first (for the unregistering too).
func LogsRegisterCallbackGoCtx(ctx Context, f func(level LogLevel, message string)) (unregister func() error, err error) {
	h := cgo.NewHandle(&logsCallback{f: f})
	var cb LogsCallbackHandle
	if err := LogsRegisterCallbackCtx(ctx, LogsCallback(C.cg_logs_tramp_ptr()), C.cg_logs_ud(C.uintptr_t(h)), &cb); err != nil {
		h.Delete()
		return func() error { return nil }, err
	}
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			err = LogsUnregisterCallbackCtx(ctx, cb)
			h.Delete()
		})
		return err
	}, nil
}
