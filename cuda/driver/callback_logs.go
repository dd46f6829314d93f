//go:build !cuda11.8 && !cuda12.4 && cgo

//cudagen:bound cuLogsRegisterCallback

package driver

/*
#include "cgqueue.h"

static void cg_logs_tramp(void *q, int level, char *message, size_t length) { cg_queue_put(q, level, 0, message, length); }
static void *cg_logs_tramp_ptr(void) { return (void *)cg_logs_tramp; }
*/
import "C"

// LogsRegisterCallbackGo registers f for the driver's log messages, as
// cuLogsRegisterCallback. The driver logs on the thread of the failing
// call, inside it; its callback copies each message into a queue, and a
// goroutine of the registration calls f with the level and the text, in
// order; f may call CUDA. unregister calls cuLogsUnregisterCallback and
// releases f once the messages queued before it have been delivered:
// called from another goroutine, it waits until f has returned for each
// of them; called inside f, it returns at once, and they are delivered
// after f returns. Later calls return nil, after the same wait. Should the
// driver's unregister fail, unregister returns its error and f stays
// registered. If registering fails, the messages logged during the call
// are delivered, f is released, and unregister does nothing. A nil f is
// refused with an error matching ErrorInvalidValue. A panic of f is
// recovered and handed to the handler (see CallbackPanic), and the later
// messages are delivered.
func LogsRegisterCallbackGo(f func(level LogLevel, message string)) (unregister func() error, err error) {
	return LogsRegisterCallbackGoCtx(0, f)
}

// LogsRegisterCallbackGoCtx is LogsRegisterCallbackGo making ctx current
// first (for the unregistering too).
func LogsRegisterCallbackGoCtx(ctx Context, f func(level LogLevel, message string)) (unregister func() error, err error) {
	if f == nil {
		return func() error { return nil }, &nilFuncError{"LogsRegisterCallbackGo", "f"}
	}
	q := startQueue("LogsRegisterCallbackGo", func(level int32, _ uintptr, data []byte) { f(LogLevel(level), string(data)) })
	cb, err := LogsRegisterCallbackCtx(ctx, LogsCallback(C.cg_logs_tramp_ptr()), q.userData())
	if err != nil {
		q.stop()
		return func() error { return nil }, err
	}
	r := &registration{q: q, unreg: func() error { return LogsUnregisterCallbackCtx(ctx, cb) }}
	return r.unregister, nil
}
