//go:build !cgo

package gputest

import (
	"errors"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Without cgo the tests cannot call the driver themselves; they skip before
// they get here (no driver can be loaded), and these say why if they do not.

var errNoCgo = errors.New("cuda_test: creating a context needs cgo (CGO_ENABLED=1 and a C compiler)")

func createContext(driver.Device) (driver.Context, error) { return 0, errNoCgo }

func destroyContext(driver.Context) error { return errNoCgo }
