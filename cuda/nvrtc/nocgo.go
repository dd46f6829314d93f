//go:build !cgo

package nvrtc

import "errors"

// withCgo says whether this build has cgo (the tests read it).
const withCgo = false

// errNoCgo is every call's error without cgo: NVRTC is a C library.
var errNoCgo = func() error { _, err := Load(); return err }()

var _ = errors.New
