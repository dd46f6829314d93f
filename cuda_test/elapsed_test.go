//go:build cgo

package gputest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

func TestElapsedErrors(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	a := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	b := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	plain := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer a.Close()
	defer b.Close()
	defer plain.Close()

	_, err := b.Sub(plain)
	if !errors.Is(err, cuda.ErrTimingDisabled) || !strings.Contains(err.Error(), "start event was created without timing") {
		t.Fatalf("timing disabled: %v", err)
	}
	ok(t, s.Record(plain))
	ok(t, s.Record(a))
	_, err = b.Sub(a)
	if !errors.Is(err, cuda.ErrNotRecorded) || !strings.Contains(err.Error(), "end event was never recorded") {
		t.Fatalf("not recorded: %v", err)
	}
	ok(t, s.Spin(time.Second))
	ok(t, s.Record(b))
	_, err = b.Sub(a)
	if !errors.Is(err, cuda.ErrNotReady) || !strings.Contains(err.Error(), "not completed") {
		t.Fatalf("not ready: %v", err)
	}
	t.Log(err)
	ok(t, b.Sync())
	d, err := b.Sub(a)
	ok(t, err)
	if d < 900*time.Millisecond {
		t.Fatalf("elapsed %v for a 1s spin", d)
	}
	// The driver itself says timing disabled as INVALID_HANDLE: we catch it
	// before the driver is called, so the error names the cause.
	_, err = plain.Sub(a)
	if errors.Is(err, cuda.ErrInvalidHandle) {
		t.Fatalf("driver error leaked: %v", err)
	}
}

// Elapsed time of GPU work of known duration agrees within tolerance.
func TestElapsedAccuracy(t *testing.T) {
	env := newEnv(t, cuda.EventOptions{Timing: true})
	s, a, b := env.s, env.a, env.b
	// Warm up: the first launch JIT-compiles the kernel.
	ok(t, s.Spin(time.Microsecond))
	ok(t, s.Sync())
	for _, want := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond} {
		ok(t, s.Record(a))
		ok(t, s.Spin(want))
		ok(t, s.Record(b))
		ok(t, b.Wait(context.Background()))
		got, err := b.Sub(a)
		ok(t, err)
		// The kernel's own launch and the timer reads add a few µs.
		tol := 50*time.Microsecond + want/50
		t.Logf("spin %v: elapsed %v (tolerance +%v, -1µs)", want, got, tol)
		if got < want-time.Microsecond || got > want+tol {
			t.Errorf("spin %v: elapsed %v, outside [%v, %v]", want, got, want-time.Microsecond, want+tol)
		}
	}
}
