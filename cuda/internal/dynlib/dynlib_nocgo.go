//go:build !cgo

package dynlib

const cgoEnabled = false

func dlopen(string) (uintptr, string) { return 0, "no cgo" }

func dlsym(uintptr, string) uintptr { return 0 }
