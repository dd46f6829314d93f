//go:build !cuda11.8 && !cuda12.4

//cudagen:bound cuLogsRegisterCallback

package driver

import (
	"strings"
	"sync/atomic"
	"testing"
)

// A Go func registered for the driver's log messages gets each message's
// level and text, its length the driver's.
func TestGoCallbackLogs(t *testing.T) {
	entries, child := onFake(t, "TestGoCallbackLogs")
	if !child {
		return
	}
	var level LogLevel = -1
	var msg string
	_, err := LogsRegisterCallbackGo(func(l LogLevel, m string) { level, msg = l, m })
	reached(t, entries, "cuLogsRegisterCallback", err)
	if level != LogLevelWarning || msg != "fake log" {
		t.Errorf("the func got %v %q; want a warning, %q", level, msg, "fake log")
	}
}

func init() {
	registeredNilCalls["LogsRegisterCallbackGo"] = func() error {
		unregister, err := LogsRegisterCallbackGo(nil)
		if unregister() != nil {
			panic("the unregister of a refused registration failed")
		}
		return err
	}
	// The fake logs an error inside a failing call (cuMemAlloc of 0 bytes).
	panicForms["LogsRegisterCallbackGo"] = func(t *testing.T, ctx Context, _ Stream, f func()) {
		unregister := must[func() error](t)(LogsRegisterCallbackGoCtx(ctx, func(LogLevel, string) { f() }))
		if _, err := MemAllocCtx(ctx, 0); err != ErrorInvalidValue {
			t.Fatalf("MemAlloc(0) on the fake: %v", err)
		}
		check(t, unregister())
	}
}

// Unregistering from inside the func returns, and takes effect once the
// func has returned; later unregisters return; the func is not called
// after. Unregistering from another goroutine returns once the messages
// logged before have been delivered.
func TestLogsUnregister(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	logFail := func() {
		t.Helper()
		if _, err := MemAllocCtx(ctx, 0); err != ErrorInvalidValue {
			t.Fatalf("MemAlloc(0) on the fake: %v", err)
		}
	}

	// From inside.
	var calls atomic.Int64
	unregisters := make(chan func() error, 1)
	inside := make(chan error, 1)
	unregister := must[func() error](t)(LogsRegisterCallbackGoCtx(ctx, func(level LogLevel, msg string) {
		if calls.Add(1) == 1 {
			if level != LogLevelError || !strings.Contains(msg, "cuMemAlloc") {
				t.Errorf("the func got %v %q; want an error about cuMemAlloc", level, msg)
			}
			inside <- (<-unregisters)()
		}
	}))
	unregisters <- unregister
	checkUnregisterInside(t, unregister, inside, logFail, &calls)

	// From another goroutine: the messages before are delivered first.
	var got atomic.Int64
	unregister = must[func() error](t)(LogsRegisterCallbackGoCtx(ctx, func(LogLevel, string) { got.Add(1) }))
	for range 3 {
		logFail()
	}
	check(t, unregister())
	if n := got.Load(); n != 3 {
		t.Errorf("unregister returned with %d of the 3 messages logged before delivered", n)
	}
}
