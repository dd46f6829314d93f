//go:build !cuda11.8 && !cuda12.4

//cudagen:bound cuLogsRegisterCallback

package driver

import (
	"strings"
	"testing"
)

// A Go func registered for the driver's log messages gets each message's
// level and text, its length the driver's.
func TestGoCallbackLogs(t *testing.T) {
	if !onFake(t) {
		return
	}
	var level LogLevel = -1
	var msg string
	_, err := LogsRegisterCallbackGo(func(l LogLevel, m string) { level, msg = l, m })
	reached(t, "cuLogsRegisterCallback", err)
	if level != LogLevelWarning || msg != "fake log" {
		t.Errorf("the func got %v %q; want a warning, %q", level, msg, "fake log")
	}
}

// The form on the memory-rules fake, which logs an error inside a failing
// call (cuMemAlloc of 0 bytes).
func init() {
	registeredForms["LogsRegisterCallbackGo"] = registeredForm{
		registerNil: func() (func() error, error) { return LogsRegisterCallbackGo(nil) },
		register: func(t *testing.T, ctx Context, f func()) (func() error, error) {
			return LogsRegisterCallbackGoCtx(ctx, func(level LogLevel, msg string) {
				if level != LogLevelError || !strings.Contains(msg, "cuMemAlloc") {
					t.Errorf("the func got %v %q; want an error about cuMemAlloc", level, msg)
				}
				f()
			})
		},
		fire: func(t *testing.T, ctx Context) {
			if _, err := MemAllocCtx(ctx, 0); err != ErrorInvalidValue {
				t.Fatalf("MemAlloc(0) on the fake: %v", err)
			}
		},
		calls: "messages logged",
	}
}
