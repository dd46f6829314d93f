// Package threadtest gives tests OS threads to call from: a JIT link's
// calls made from several threads, as goroutines moving between threads
// would make them (cuda/internal/osthread).
package threadtest

import (
	"runtime"
	"testing"
)

// Locked starts n goroutines, each locked to its own OS thread until the
// test ends (the threads end with them): on(i, f) runs f on the i-th and
// returns once it has. f must not call t.Fatal: it runs on another
// goroutine; it hands its error back instead.
func Locked(t testing.TB, n int) (on func(i int, f func() error) error) {
	calls := make([]chan func(), n)
	for i := range calls {
		calls[i] = make(chan func())
		go func(c chan func()) {
			runtime.LockOSThread() // never unlocked
			for f := range c {
				f()
			}
		}(calls[i])
	}
	t.Cleanup(func() {
		for _, c := range calls {
			close(c)
		}
	})
	return func(i int, f func() error) error {
		r := make(chan error)
		calls[i] <- func() { r <- f() }
		return <-r
	}
}
