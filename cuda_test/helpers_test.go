//go:build cgo

package gputest

import (
	"errors"
	"testing"

	"github.com/cudagen/cudagen/cuda"
)

// gpu returns device 0, or skips the test where there is no GPU.
func gpu(tb testing.TB) *cuda.Device {
	tb.Helper()
	dev, err := cuda.GetDevice(0)
	if err != nil {
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
			tb.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU; tools/gpu-suite.sh runs this on the GPU machine): %v", err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dev.Close() })
	return dev
}

func must[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

func ok(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
