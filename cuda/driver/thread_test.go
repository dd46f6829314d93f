//go:build cgo

package driver

import (
	"errors"
	"runtime"
	"testing"
)

// lockedThreads starts n goroutines, each locked to its own OS thread for
// the test's life: do(i, f) runs f on the i-th.
func lockedThreads(t *testing.T, n int) (do func(i int, f func())) {
	calls := make([]chan func(), n)
	done := make(chan struct{})
	for i := range calls {
		calls[i] = make(chan func())
		go func(c chan func()) {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			for f := range c {
				f()
				done <- struct{}{}
			}
		}(calls[i])
	}
	t.Cleanup(func() {
		for _, c := range calls {
			close(c)
		}
	})
	return func(i int, f func()) {
		calls[i] <- f
		<-done
	}
}

// Every call on a link runs on the thread of its LinkCreate, whichever
// thread makes it: the fake counts a call from another thread, as the real
// driver crashed then. Each round spreads the link's calls over four
// threads (0, 1, 2, 3, 1), as goroutines moving between threads would. A
// link whose thread this package does not know (taken out of the table
// here) shows that the fake counts such a call.
func TestLinkCallsOnOneThread(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	do := lockedThreads(t, 4)
	moves := func() int64 { return fakeMemCounter(t, "fakemem_link_thread_moves") }
	owned0, kept0 := ownedCount(), keptCount()
	for round := range 20 {
		var state LinkState
		var image []byte
		steps := []func() error{
			func() (err error) { state, err = LinkCreateCtx(ctx, []JITOption{JITLogVerbose}, []uintptr{1}); return },
			func() error { return LinkAddDataCtx(ctx, state, JITInputPTX, fakeImage, "a.ptx", nil, nil) },
			func() error {
				p, n, err := LinkCompleteCtx(ctx, state)
				if err == nil {
					image = append([]byte(nil), HostPtr(uintptr(p)).Bytes(int(n))...)
				}
				return err
			},
			func() error {
				if err := LinkAddDataCtx(ctx, state, JITInputPTX, []byte("not ptx"), "bad.ptx", nil, nil); !errors.Is(err, ErrorInvalidValue) {
					t.Errorf("round %d: PTX without its NUL: %v, want CUDA_ERROR_INVALID_VALUE", round, err)
				}
				return nil
			},
			func() error { return LinkDestroyCtx(ctx, state) },
		}
		for i, step := range steps {
			var err error
			do([]int{0, 1, 2, 3, 1}[i], func() { err = step() })
			if err != nil {
				t.Fatalf("round %d, step %d: %v", round, i, err)
			}
		}
		if string(image) != string(fakeImage) {
			t.Fatalf("round %d: the linked image is %q, want %q", round, image, fakeImage)
		}
	}
	if n := moves(); n != 0 {
		t.Fatalf("%d calls on a link came from a thread other than its LinkCreate's", n)
	}
	if ownedCount() != owned0 || keptCount() != kept0 {
		t.Fatalf("destroyed links left %d threads and %d C copies", ownedCount()-owned0, keptCount()-kept0)
	}

	// The control: a link whose thread is forgotten gets its calls on the
	// caller's thread, and the fake counts the move.
	var state LinkState
	do(0, func() { state = must[LinkState](t)(LinkCreateCtx(ctx, nil, nil)) })
	owned.Lock()
	th := owned.m[keptKey{"LinkState", uintptr(state)}]
	delete(owned.m, keptKey{"LinkState", uintptr(state)})
	owned.Unlock()
	if th == nil {
		t.Fatal("LinkCreate gave its link no thread")
	}
	th.end()
	do(1, func() { check(t, LinkDestroyCtx(ctx, state)) })
	if n := moves(); n != 1 {
		t.Fatalf("the fake counted %d calls from another thread, want 1: its count is no proof", n)
	}
}

// A link made without a context uses the caller's current one, made
// current on the link's thread; a caller with none gets the driver's
// error, though the link's thread may have had one current before. A
// refused LinkCreate keeps no thread.
func TestLinkCallerContext(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	do := lockedThreads(t, 1)
	owned0 := ownedCount()
	do(0, func() {
		check(t, CtxSetCurrent(ctx))
		state := must[LinkState](t)(LinkCreate(nil, nil))
		check(t, LinkAddData(state, JITInputPTX, fakeImage, "a.ptx", nil, nil))
		if _, _, err := LinkComplete(state); err != nil {
			t.Error(err)
		}
		check(t, LinkDestroy(state))
		check(t, CtxSetCurrent(0))
		if _, err := LinkCreate(nil, nil); !errors.Is(err, ErrorInvalidContext) {
			t.Errorf("LinkCreate with no current context: %v, want CUDA_ERROR_INVALID_CONTEXT", err)
		}
		if _, err := LinkCreateCtx(ctx, []JITOption{JITLogVerbose}, nil); err == nil {
			t.Error("LinkCreate with more options than values succeeded")
		}
	})
	if n := ownedCount() - owned0; n != 0 {
		t.Fatalf("%d threads kept after every link was destroyed or refused", n)
	}
}
