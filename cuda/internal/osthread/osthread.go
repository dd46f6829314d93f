// Package osthread runs the calls on a handle on one OS thread that the
// handle owns. A goroutine moves between OS threads, and CUDA's JIT
// linkers need a link's calls on one thread: the driver's cuLink and
// nvJitLink links whose calls ran on different threads crashed the
// process, and links whose calls ran on one thread did not
// (docs/cuda-package.md, "JIT links and OS threads"). The generated
// wrappers of the kinds of handle their config lists in "threads" run the
// call that makes a handle on a thread of its own (Start, then Own), its
// later calls on that thread (On), and let the thread go when the call
// that ends the handle succeeds (End).
package osthread

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// live counts the threads serving calls.
var live atomic.Int64

// Live is how many threads serve calls: those started and not yet ended.
// A thread is counted from its Start until it is let go: End, and Own
// after a failed make, return once its goroutine has unlocked the thread;
// a thread that Own replaces while it runs a call is let go when that call
// returns (and its handle's End returns after that).
func Live() int64 { return live.Load() }

// A Thread is a goroutine locked to its OS thread that runs one handle's
// calls, one at a time, for the goroutines that make them. A call on a
// handle made from inside a call on the same handle (a callback that
// re-enters the library) would wait for ever; the bound libraries' callbacks
// make no such call (NVRTC's may call no NVRTC function; the driver's log
// callback is queued).
type Thread struct {
	mu     sync.Mutex // held for a call
	calls  chan func()
	done   chan struct{}
	exited chan struct{} // closed once serve has unlocked the thread
	ended  bool
}

// Start starts a thread.
func Start() *Thread {
	t := &Thread{calls: make(chan func()), done: make(chan struct{}), exited: make(chan struct{})}
	live.Add(1)
	go t.serve()
	return t
}

// serve runs the calls on its OS thread until the thread is ended, then
// unlocks it: the thread goes back to Go's pool, as a C program's thread
// goes on after a link.
func (t *Thread) serve() {
	defer close(t.exited)
	defer live.Add(-1)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for f := range t.calls {
		f()
		t.done <- struct{}{}
	}
}

// Do runs f on t's thread and returns once it has; it reports false,
// running nothing, when t has ended.
func (t *Thread) Do(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	t.calls <- f
	<-t.done
	return true
}

// end lets t's thread go, after its current call, and returns once the
// thread is back in Go's pool.
func (t *Thread) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked()
}

func (t *Thread) endLocked() {
	if !t.ended {
		t.ended = true
		close(t.calls)
		<-t.exited
	}
}

// endSoon lets t's thread go: at once if no call holds it, else once the
// call returns, without waiting for that.
func (t *Thread) endSoon() {
	if t.mu.TryLock() {
		defer t.mu.Unlock()
		t.endLocked()
		return
	}
	go t.end()
}

type key struct {
	kind string // the handle's package and Go type: "driver.LinkState"
	h    uintptr
}

// owned holds the thread of each live handle.
var owned struct {
	sync.Mutex
	m map[key]*Thread
}

// Own gives t to the handle h of kind after the call that made it
// succeeded (err nil, h not 0), or lets t go. A thread the table still
// held for h (its handle ended, its End not yet made) is let go without
// waiting: its call in flight may be the one that ended the handle, whose
// End then finds the thread let go.
func Own(err error, kind string, h uintptr, t *Thread) {
	if err != nil || h == 0 {
		t.end()
		return
	}
	owned.Lock()
	if owned.m == nil {
		owned.m = map[key]*Thread{}
	}
	old := owned.m[key{kind, h}]
	owned.m[key{kind, h}] = t
	owned.Unlock()
	if old != nil {
		old.endSoon()
	}
}

// On runs f on the thread of the handle h of kind and returns that
// thread. A handle no wrapper made (another library's, or one already
// ended) has none: f runs on the caller's thread, and the library answers
// for the handle as it would; On returns nil.
func On(kind string, h uintptr, f func()) *Thread {
	owned.Lock()
	t := owned.m[key{kind, h}]
	owned.Unlock()
	if t != nil && t.Do(f) {
		return t
	}
	f()
	return nil
}

// End lets t, the thread the call that ended the handle h of kind ran on
// (On's), go after that call succeeded (err nil). The table forgets h
// only while it still holds t: the library may hand the same value to a
// handle made since, whose thread stays.
func End(err error, kind string, h uintptr, t *Thread) {
	if err != nil || t == nil {
		return
	}
	owned.Lock()
	if owned.m[key{kind, h}] == t {
		delete(owned.m, key{kind, h})
	}
	owned.Unlock()
	t.end()
}

// Owned is how many live handles own a thread.
func Owned() int {
	owned.Lock()
	defer owned.Unlock()
	return len(owned.m)
}

// At is the handle *p holds, 0 for a nil p: the key of a call that takes
// the handle by pointer (a Destroy that clears it).
func At[T ~uintptr](p *T) uintptr {
	if p == nil {
		return 0
	}
	return uintptr(*p)
}
