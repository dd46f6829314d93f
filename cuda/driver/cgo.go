//go:build cgo

package driver

// #include <stdint.h>
import "C"

const cgoEnabled = true

// errNoCgo is never returned with cgo.
var errNoCgo error = &NoCgoError{}

// status is a call's error: the resolution's, else the driver's result.
func status(err error, r C.int) error {
	if err != nil {
		return err
	}
	return Result(r).Err()
}
