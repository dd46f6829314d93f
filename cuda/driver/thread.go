//go:build cgo

package driver

// The OS threads that handles own. A goroutine moves between OS threads,
// and the driver's JIT linker keeps per-thread state for a link: links
// whose calls ran on different threads crashed the process, and links
// whose calls ran on one thread did not (docs/cuda-package.md, "JIT links
// and OS threads"). So every call on a handle of a kind gen/bindings.json
// lists in "threads" (CUlinkState) runs on an OS thread the handle owns:
// the call that makes it on a new one, and its thread is let go when the
// call that ends it succeeds. The wrappers (generated) call onNewThread
// and ownThread, onThreadOf, and endThread.

// #include <stdint.h>
import "C"

import (
	"runtime"
	"sync"
)

// An osThread is a goroutine locked to its OS thread that runs one
// handle's calls, one at a time, for the goroutines that make them.
type osThread struct {
	mu    sync.Mutex // held for a call
	calls chan func()
	done  chan struct{}
	ended bool
}

// owned holds the thread of each live handle.
var owned struct {
	sync.Mutex
	m map[keptKey]*osThread
}

func newOSThread() *osThread {
	t := &osThread{calls: make(chan func()), done: make(chan struct{})}
	go t.serve()
	return t
}

// serve runs the calls on its OS thread until the thread is ended, then
// unlocks it: the thread goes back to Go's pool, as a C program's thread
// goes on after a link.
func (t *osThread) serve() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for f := range t.calls {
		f()
		t.done <- struct{}{}
	}
}

// run runs call on t's thread, given the context to make current: ctx,
// or for 0 the calling thread's current context (none: none there
// either, as the call would have seen here). It reports false, running
// nothing, when t has ended.
func (t *osThread) run(ctx Context, call func(C.uintptr_t)) bool {
	if ctx == 0 {
		ctx, _ = CtxGetCurrent() // an error (no cuInit) leaves 0, which the call then meets
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	t.calls <- func() {
		if ctx == 0 {
			_ = CtxSetCurrent(0)
		}
		call(C.uintptr_t(ctx))
	}
	<-t.done
	return true
}

// end lets t's thread go, after its current call.
func (t *osThread) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.ended = true
		close(t.calls)
	}
}

// onNewThread runs the call that makes a handle on a new OS thread, which
// ownThread gives the handle.
func onNewThread(ctx Context, call func(C.uintptr_t)) *osThread {
	t := newOSThread()
	t.run(ctx, call)
	return t
}

// ownThread gives t to the handle h of kind after a successful call, or
// lets it go after a failed one.
func ownThread(err error, kind string, h uintptr, t *osThread) {
	if err != nil || h == 0 {
		t.end()
		return
	}
	owned.Lock()
	if owned.m == nil {
		owned.m = map[keptKey]*osThread{}
	}
	owned.m[keptKey{kind, h}] = t
	owned.Unlock()
}

// onThreadOf runs a call on the handle h of kind on the handle's thread.
// A handle no call of this package made (another library's, or one
// already ended) has none: the call runs here, and the driver answers for
// the handle as it would.
func onThreadOf(kind string, h uintptr, ctx Context, call func(C.uintptr_t)) {
	owned.Lock()
	t := owned.m[keptKey{kind, h}]
	owned.Unlock()
	if t == nil || !t.run(ctx, call) {
		call(C.uintptr_t(ctx))
	}
}

// endThread lets the thread of the handle h of kind go after the call
// that ended the handle succeeded.
func endThread(err error, kind string, h uintptr) {
	if err != nil {
		return
	}
	owned.Lock()
	t := owned.m[keptKey{kind, h}]
	delete(owned.m, keptKey{kind, h})
	owned.Unlock()
	if t != nil {
		t.end()
	}
}

// ownedCount is how many handles own a thread (for tests).
func ownedCount() int {
	owned.Lock()
	defer owned.Unlock()
	return len(owned.m)
}
