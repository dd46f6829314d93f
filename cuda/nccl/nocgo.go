//go:build !cgo

package nccl

// withCgo says whether this build has cgo (the tests read it).
const withCgo = false

// errNoCgo is every call's error without cgo: NCCL is a C library.
//
//lint:ignore U1000 the generated !cgo wrappers return it (a build that binds no NCCL has none)
var errNoCgo = func() error { _, err := Load(); return err }()
