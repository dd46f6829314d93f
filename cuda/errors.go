package cuda

import (
	"errors"
	"strings"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Sentinels for errors.Is. Errors from the driver match the driver's result
// sentinels (ErrNotReady, ErrInvalidHandle, ... and every driver.Result);
// misuse the package detects itself matches ErrNotRecorded, ErrTimingDisabled,
// ErrClosed, ErrWrongDevice or ErrInvalidOptions.
var (
	// ErrNoDriver: the CUDA driver library could not be loaded.
	ErrNoDriver = driver.ErrNoDriver
	// ErrNotSupported: the installed driver lacks a function the bindings need.
	ErrNotSupported = driver.ErrNotSupported
	// ErrNotReady: the work an event or stream tracks has not completed.
	ErrNotReady error = driver.ErrorNotReady
	// ErrInvalidHandle: the driver did not recognise a handle.
	ErrInvalidHandle error = driver.ErrorInvalidHandle
	// ErrNoDevice: the driver found no CUDA device.
	ErrNoDevice error = driver.ErrorNoDevice
	// ErrInvalidDevice: no device has that ordinal.
	ErrInvalidDevice error = driver.ErrorInvalidDevice

	// ErrNotRecorded: an event used for timing was never recorded.
	ErrNotRecorded = errors.New("cuda: event never recorded")
	// ErrTimingDisabled: an event used for timing was created without Timing.
	ErrTimingDisabled = errors.New("cuda: event timing disabled")
	// ErrClosed: the event, stream or device was closed.
	ErrClosed = errors.New("cuda: use after close")
	// ErrWrongDevice: an event and a stream belong to different devices.
	ErrWrongDevice = errors.New("cuda: event and stream on different devices")
	// ErrInvalidOptions: options that cannot go together.
	ErrInvalidOptions = errors.New("cuda: invalid options")
)

// Error is an error of an operation: what was being done, why it failed
// and what to do about it. It unwraps to the cause, so errors.Is matches the
// sentinels above and driver results.
type Error struct {
	Op     string // "record event", "elapsed time"
	Detail string // the cause in words
	Fix    string // what to do
	Err    error  // the cause: a sentinel or a driver.Result
}

func (e *Error) Error() string {
	msg := "cuda: " + e.Op + ": " + e.Detail
	if e.Err != nil {
		if d, ok := e.Err.(driver.Result); ok {
			msg += " (" + d.String() + ")"
		}
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Error kinds are built here so that each site says op, cause and fix.

func closedErr(op, what string) error {
	return &Error{Op: op, Detail: "the " + what + " is closed", Fix: "do not use it after Close", Err: ErrClosed}
}

// driverErr wraps an error from the driver layer with the operation.
func driverErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var r driver.Result
	if errors.As(err, &r) {
		return &Error{Op: op, Detail: r.Description(), Fix: fixFor(r), Err: r}
	}
	// ErrNoDriver and ErrNotSupported errors already say cause and fix.
	return &opError{op: op, err: err}
}

// opError prefixes the operation to an error that already says cause and fix.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "cuda: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "cuda: ")
}

func (e *opError) Unwrap() error { return e.err }

func fixFor(r driver.Result) string {
	switch r {
	case driver.ErrorNotInitialized, driver.ErrorDeinitialized:
		return "the driver is not initialised or shutting down; get a device with cuda.GetDevice first"
	case driver.ErrorNoDevice:
		return "check that a GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES)"
	case driver.ErrorInvalidDevice:
		return "use an ordinal below cuda.DeviceCount()"
	case driver.ErrorInvalidHandle, driver.ErrorContextIsDestroyed, driver.ErrorInvalidContext:
		return "the handle or its device was released; do not use objects of a closed device"
	case driver.ErrorNotReady:
		return "wait for the work first (Sync or Wait)"
	case driver.ErrorOutOfMemory:
		return "free device memory or use a smaller working set"
	case driver.ErrorInvalidValue:
		return "check the arguments"
	}
	return "see the driver's description"
}
