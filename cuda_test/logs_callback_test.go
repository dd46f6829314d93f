//go:build !cuda11.8 && !cuda12.4 && cgo

//cudagen:bound cuLogsRegisterCallback

package gputest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A Go func registers with the real driver for its log messages, sees what
// an invalid call logs, and unregisters.
func TestLogsCallbackGoRegisters(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	var msgs []string
	unregister, err := driver.LogsRegisterCallbackGoCtx(ctx, func(l driver.LogLevel, m string) { msgs = append(msgs, m) })
	if err != nil {
		t.Fatalf("LogsRegisterCallbackGo: %v", err)
	}
	if _, err := driver.MemAllocCtx(ctx, 0); err == nil {
		t.Error("MemAlloc(0) succeeded")
	}
	ok(t, unregister())
	t.Logf("logged while registered: %q", msgs)
}

// Unregistering from inside the func returns (it takes effect once the
// func has returned), and the unregisters after it return too.
func TestLogsCallbackGoUnregisterInside(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	// Whether MemAlloc(0) logs here: an unregister from this goroutine
	// returns once what was logged before is delivered.
	var logged atomic.Int64
	unregister, err := driver.LogsRegisterCallbackGoCtx(ctx, func(driver.LogLevel, string) { logged.Add(1) })
	if err != nil {
		t.Fatalf("LogsRegisterCallbackGo: %v", err)
	}
	driver.MemAllocCtx(ctx, 0)
	ok(t, unregister())
	if logged.Load() == 0 {
		t.Skip("skipping: this driver logs nothing for MemAlloc(0), so no message can call the func")
	}

	var calls atomic.Int64
	unregisters := make(chan func() error, 1)
	inside := make(chan error, 1)
	unregister, err = driver.LogsRegisterCallbackGoCtx(ctx, func(driver.LogLevel, string) {
		if calls.Add(1) == 1 {
			inside <- (<-unregisters)()
		}
	})
	ok(t, err)
	unregisters <- unregister
	driver.MemAllocCtx(ctx, 0)
	select {
	case err := <-inside:
		ok(t, err)
	case <-time.After(time.Minute):
		t.Fatal("unregister, called inside the func, has not returned after a minute: deadlocked")
	}
	later := make(chan error, 1)
	go func() { later <- unregister() }()
	select {
	case err := <-later:
		ok(t, err)
	case <-time.After(time.Minute):
		t.Fatal("an unregister after the one inside the func has not returned after a minute: deadlocked")
	}
	n := calls.Load()
	driver.MemAllocCtx(ctx, 0)
	if calls.Load() != n {
		t.Errorf("the func was called after it was unregistered")
	}
}
