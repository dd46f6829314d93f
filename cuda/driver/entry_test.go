package driver

import (
	"errors"
	"testing"
)

// EventElapsedTimeAtCtx refuses a missing entry point (0) rather than call
// it; without cgo it says cgo is disabled, as every call does.
func TestEventElapsedTimeAtNoEntryPoint(t *testing.T) {
	_, err := EventElapsedTimeAtCtx(0, 0, 1, 2)
	want := ErrNotSupported
	if !cgoEnabled {
		want = ErrNoDriver
	}
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want an error matching %v", err, want)
	}
}
