//go:build !cuda11.8 && !cuda12.4

//cudagen:bound cuLogsRegisterCallback

package driver

import "testing"

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
