//go:build linux

package osthread

import (
	"errors"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// The calls on a handle run on one OS thread, whichever goroutines make
// them and however many at once, one at a time; after End they run on the
// caller's thread, and the table holds nothing.
func TestOneThreadPerHandle(t *testing.T) {
	th := Start()
	var made int
	th.Do(func() { made = syscall.Gettid() })
	Own(nil, "K", 7, th)
	if Owned() != 1 || Live() != 1 {
		t.Fatalf("Owned() = %d and Live() = %d after Own, want 1 and 1", Owned(), Live())
	}
	var mu sync.Mutex
	tids := map[int]int{}
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				runtime.Gosched()
				On("K", 7, func() {
					mu.Lock()
					tids[syscall.Gettid()]++
					inside++
					most = max(most, inside)
					mu.Unlock()
					runtime.Gosched()
					mu.Lock()
					inside--
					mu.Unlock()
				})
			}
		}()
	}
	wg.Wait()
	if len(tids) != 1 || tids[made] != 800 || most != 1 {
		t.Fatalf("800 calls ran on threads %v (the handle's: %d), at most %d at once; want all on the handle's, one at a time", tids, made, most)
	}
	End(nil, "K", 7, th)
	if Owned() != 0 || Live() != 0 || th.Do(func() {}) {
		t.Fatalf("after End: Owned() = %d, Live() = %d, or the thread still ran a call", Owned(), Live())
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ran int
	On("K", 7, func() { ran = syscall.Gettid() })
	if ran != syscall.Gettid() {
		t.Fatalf("a call on an ended handle ran on thread %d, not the caller's %d", ran, syscall.Gettid())
	}
}

// A failed make, or one that made no handle, keeps no thread; a failed end
// keeps it; At reads a handle through a pointer, nil as 0.
func TestOwnAndEndOnError(t *testing.T) {
	failed := errors.New("refused")
	a, b := Start(), Start()
	Own(failed, "K", 1, a)
	Own(nil, "K", 0, b)
	if Owned() != 0 || Live() != 0 || a.Do(func() {}) || b.Do(func() {}) {
		t.Fatal("a refused or empty make kept its thread")
	}
	c := Start()
	Own(nil, "K", 2, c)
	End(failed, "K", 2, c)
	if Owned() != 1 || !c.Do(func() {}) {
		t.Fatal("a failed end let the thread go")
	}
	// The library may hand an ended handle's value to a new one before the
	// old one's End: the new handle keeps its thread, the old is let go.
	d := Start()
	Own(nil, "K", 2, d)
	if c.Do(func() {}) {
		t.Fatal("a thread replaced in the table still runs calls")
	}
	End(nil, "K", 2, c)
	if Owned() != 1 || !d.Do(func() {}) {
		t.Fatal("the old handle's End let the new handle's thread go")
	}
	End(nil, "K", 2, d)

	// The handle's value is a new handle's while the call that ended the
	// old one still runs: the new handle's Own does not wait for that call,
	// and the old one's End lets the thread go.
	e, f := Start(), Start()
	Own(nil, "K", 3, e)
	running, finish, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		th := On("K", 3, func() { close(running); <-finish })
		End(nil, "K", 3, th)
		close(ended)
	}()
	<-running
	Own(nil, "K", 3, f) // returns while e's call runs
	close(finish)
	<-ended
	if Owned() != 1 || Live() != 1 || e.Do(func() {}) || !f.Do(func() {}) {
		t.Fatalf("after the old handle's End: Owned() = %d, Live() = %d, want 1 and 1, the new handle's thread alone serving", Owned(), Live())
	}
	End(nil, "K", 3, f)
	if Live() != 0 {
		t.Fatalf("%d threads still serve after every handle ended", Live())
	}
	type handle uintptr
	h := handle(9)
	if At(&h) != 9 || At[handle](nil) != 0 {
		t.Fatalf("At(&9) = %d, At(nil) = %d", At(&h), At[handle](nil))
	}
}
