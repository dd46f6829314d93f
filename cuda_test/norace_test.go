//go:build !race && cgo

package gputest

// raceEnabled: built with -race (see race_test.go).
const raceEnabled = false
