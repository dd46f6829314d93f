//go:build race && cgo

package gputest

// raceEnabled: built with -race, whose runtime keeps its own memory (shadow
// memory, per-goroutine state) outside the Go heap, so the process's RSS
// grows during a soak for reasons of the detector's own.
const raceEnabled = true
