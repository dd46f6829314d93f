//go:build cgo && linux

package sleeper

import (
	"testing"
)

func TestSleeper(t *testing.T) {
	if _, err := New(0, 0); err != ErrUnavailable {
		t.Fatalf("New without entry points: %v, want ErrUnavailable", err)
	}
	s, err := New(testFns())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.Sync(0, 7); r != 0 {
		t.Fatalf("sync: %d", r)
	}
	// Refused without a context, and no context to make current.
	if r := s.Sync(0, 5); r != 201 {
		t.Fatalf("sync refused, no context: %d, want 201", r)
	}
	// Refused without a context: made again with ctx current.
	if r := s.Sync(42, 5); r != 0 {
		t.Fatalf("sync retried with a context: %d, want 0", r)
	}
	if r := s.Sync(0, 0); r != -1 {
		t.Fatalf("sync on event 0: %d, want -1", r)
	}
	if n := testing.AllocsPerRun(20, func() { s.Sync(0, 7) }); n != 0 {
		t.Fatalf("%v allocations per Sync, want 0", n)
	}
}

// Many sleepers, each closed: none is left reading or writing.
func TestSleepersClose(t *testing.T) {
	sync, set := testFns()
	for range 50 {
		s, err := New(sync, set)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Sync(0, 7); r != 0 {
			t.Fatalf("sync: %d", r)
		}
		s.Close()
	}
}
