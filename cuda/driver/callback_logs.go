//go:build !cuda11.8 && !cuda12.4 && cgo

//cudagen:bound cuLogsRegisterCallback

package driver

/*
#include "cgqueue.h"

static void cg_logs_tramp(void *q, int level, char *message, size_t length) { cg_queue_put(q, level, 0, message, length); }
static void *cg_logs_tramp_ptr(void) { return (void *)cg_logs_tramp; }
*/
import "C"

import "sync"

// LogsRegisterCallbackGo registers f for the driver's log messages, as
// cuLogsRegisterCallback. The driver logs on the thread of the failing
// call, inside it; its callback copies each message into a queue, and a
// goroutine of the registration calls f with the level and the text, in
// order; f may call CUDA. unregister calls cuLogsUnregisterCallback, waits
// until f has returned for every message before, and releases f (once;
// later calls return nil). If registering fails, the messages logged
// during the call are delivered, f is released, and unregister does
// nothing.
func LogsRegisterCallbackGo(f func(level LogLevel, message string)) (unregister func() error, err error) {
	return LogsRegisterCallbackGoCtx(0, f)
}

// LogsRegisterCallbackGoCtx is LogsRegisterCallbackGo making ctx current
// first (for the unregistering too).
func LogsRegisterCallbackGoCtx(ctx Context, f func(level LogLevel, message string)) (unregister func() error, err error) {
	q := startQueue(func(level int32, _ uintptr, data []byte) { f(LogLevel(level), string(data)) })
	var cb LogsCallbackHandle
	if err := LogsRegisterCallbackCtx(ctx, LogsCallback(C.cg_logs_tramp_ptr()), q.userData(), &cb); err != nil {
		q.stop()
		return func() error { return nil }, err
	}
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			err = LogsUnregisterCallbackCtx(ctx, cb)
			q.stop()
		})
		return err
	}, nil
}
