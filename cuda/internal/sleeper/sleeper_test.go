//go:build cgo && linux

package sleeper

import (
	"testing"
	"time"
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

// Kick ends an Await at once, before or during it, and consumes nothing:
// after Unkick, the next Await takes the job's answer. Nothing allocates.
func TestSleeperKick(t *testing.T) {
	s, err := New(testFns())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Kicked before the Await: the job (200 ms) is still running.
	if !s.Start(0, 9) {
		t.Fatal("start")
	}
	s.Kick()
	if r, err := s.Await(); err != ErrKicked || r != -1 {
		t.Fatalf("kicked Await: %d, %v; want -1, ErrKicked", r, err)
	}
	// Kicked while it waits.
	s.Unkick()
	go func() {
		time.Sleep(time.Millisecond)
		s.Kick()
	}()
	if _, err := s.Await(); err != ErrKicked {
		t.Fatalf("Await kicked during the wait: %v, want ErrKicked", err)
	}
	time.Sleep(300 * time.Millisecond) // the job's answer is in
	if _, err := s.Await(); err != ErrKicked {
		t.Fatalf("Await with the answer in but still kicked: %v, want ErrKicked", err)
	}
	s.Unkick()
	if r, err := s.Await(); err != nil || r != 0 {
		t.Fatalf("Await after Unkick: %d, %v; want 0, nil", r, err)
	}
	// The answer was taken once: the next job's is its own.
	if !s.Start(0, 5) {
		t.Fatal("start")
	}
	if r, err := s.Await(); err != nil || r != 201 {
		t.Fatalf("the next job: %d, %v; want 201, nil", r, err)
	}
	if n := testing.AllocsPerRun(20, func() {
		s.Start(0, 7)
		s.Await()
	}); n != 0 {
		t.Fatalf("%v allocations per Start and Await, want 0", n)
	}
}
