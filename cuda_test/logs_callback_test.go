//go:build !cuda11.8 && !cuda12.4 && cgo

//cudagen:bound cuLogsRegisterCallback

package gputest

import (
	"testing"

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
