//go:build linux

package threadtest

import (
	"syscall"
	"testing"
)

// Each of the n threads is its own, and the same at every call.
func TestLocked(t *testing.T) {
	on := Locked(t, 3)
	tid := make([]int, 3)
	for round := range 2 {
		for i := range tid {
			var got int
			if err := on(i, func() error { got = syscall.Gettid(); return nil }); err != nil {
				t.Fatal(err)
			}
			if round == 1 && got != tid[i] {
				t.Fatalf("thread %d: %d, then %d", i, tid[i], got)
			}
			tid[i] = got
		}
	}
	if tid[0] == tid[1] || tid[1] == tid[2] || tid[0] == tid[2] {
		t.Fatalf("three locked goroutines on threads %v", tid)
	}
}
