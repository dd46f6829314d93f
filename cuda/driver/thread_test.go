//go:build cgo

package driver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cudagen/cudagen/cuda/internal/osthread"
	"github.com/cudagen/cudagen/internal/threadtest"
)

// threadsBack checks that the threads serving handles number live again:
// every thread let go has ended its goroutine by the time the call that let
// it go returned.
func threadsBack(t *testing.T, live int64) {
	t.Helper()
	if osthread.Live() != live {
		t.Fatalf("%d threads serve handles, want %d: a thread let go did not end", osthread.Live(), live)
	}
}

// Every call on a link runs on the thread of its LinkCreate, whichever
// thread makes it: the fake counts a call from another thread, as the real
// driver crashed then. Each round spreads the link's calls over four
// threads (0, 1, 2, 3, 1), as goroutines moving between threads would. A
// link given another thread shows that the fake counts such a call.
func TestLinkCallsOnOneThread(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	do := threadtest.Locked(t, 4)
	moves := func() int64 { return fakeMemCounter(t, "fakemem_link_thread_moves") }
	owned0, live0, kept0 := osthread.Owned(), osthread.Live(), keptCount()
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
					return fmt.Errorf("PTX without its NUL: %v, want CUDA_ERROR_INVALID_VALUE", err)
				}
				return nil
			},
			func() error { return LinkDestroyCtx(ctx, state) },
		}
		for i, step := range steps {
			if err := do([]int{0, 1, 2, 3, 1}[i], step); err != nil {
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
	if osthread.Owned() != owned0 || keptCount() != kept0 {
		t.Fatalf("destroyed links left %d threads and %d C copies", osthread.Owned()-owned0, keptCount()-kept0)
	}
	threadsBack(t, live0)

	// The control: a link whose calls go to another thread than its
	// LinkCreate's (the table given a new one) is counted.
	var state LinkState
	if err := do(0, func() (err error) { state, err = LinkCreateCtx(ctx, nil, nil); return }); err != nil {
		t.Fatal(err)
	}
	other := osthread.Start()
	other.Do(func() {})                                          // locked to its thread while the link's still holds its own: another thread
	osthread.Own(nil, "driver.LinkState", uintptr(state), other) // the kind the generated wrappers use
	if err := do(1, func() error { return LinkDestroyCtx(ctx, state) }); err != nil {
		t.Fatal(err)
	}
	if n := moves(); n != 1 {
		t.Fatalf("the fake counted %d calls from another thread, want 1: its count is no proof", n)
	}
	threadsBack(t, live0)
}

// A link call without a context uses the caller's current one, made
// current on the link's thread; a caller with none meets the driver's
// error there, though the link's thread had a context current (its
// LinkCreate's). A call given a context leaves the caller's thread's
// context as it was. A refused LinkCreate keeps no thread.
func TestLinkCallerContext(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	do := threadtest.Locked(t, 2)
	owned0, live0 := osthread.Owned(), osthread.Live()
	var state LinkState
	err := do(0, func() (err error) {
		if err = CtxSetCurrent(ctx); err == nil {
			state, err = LinkCreate(nil, nil)
		}
		return
	})
	if err != nil {
		t.Fatal(err)
	}
	err = do(1, func() error {
		if err := CtxSetCurrent(0); err != nil {
			return err
		}
		if err := LinkAddData(state, JITInputPTX, fakeImage, "a.ptx", nil, nil); !errors.Is(err, ErrorInvalidContext) {
			return fmt.Errorf("LinkAddData from a thread with no current context: %v, want CUDA_ERROR_INVALID_CONTEXT", err)
		}
		if _, err := LinkCreate(nil, nil); !errors.Is(err, ErrorInvalidContext) {
			return fmt.Errorf("LinkCreate from a thread with no current context: %v, want CUDA_ERROR_INVALID_CONTEXT", err)
		}
		// Given a context, the call makes it current on the link's thread
		// and leaves the caller's thread as it was.
		if err := LinkAddDataCtx(ctx, state, JITInputPTX, fakeImage, "a.ptx", nil, nil); err != nil {
			return err
		}
		if cur, err := CtxGetCurrent(); err != nil || cur != 0 {
			return fmt.Errorf("after LinkAddDataCtx the caller's thread has context %#x (%v), want none", cur, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = do(0, func() error {
		if err := LinkAddData(state, JITInputPTX, fakeImage, "a.ptx", nil, nil); err != nil {
			return err
		}
		if _, _, err := LinkComplete(state); err != nil {
			return err
		}
		if _, err := LinkCreateCtx(ctx, []JITOption{JITLogVerbose}, nil); err == nil {
			return errors.New("LinkCreate with more options than values succeeded")
		}
		return LinkDestroy(state)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := osthread.Owned() - owned0; n != 0 {
		t.Fatalf("%d threads kept after every link was destroyed or refused", n)
	}
	threadsBack(t, live0)
}
