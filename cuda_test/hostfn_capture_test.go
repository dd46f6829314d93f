//go:build cgo

package gputest

import (
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A Go host function launched into a stream capture runs at every replay
// of the captured graph, in each capture mode, and is released once the
// graph and the exec made from it are both destroyed: the driver then runs
// the destructor of the user object that held it, and what the func
// captured becomes garbage.
func TestHostFnCaptureReplay(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	for _, mode := range []driver.StreamCaptureMode{driver.StreamCaptureModeGlobal, driver.StreamCaptureModeThreadLocal, driver.StreamCaptureModeRelaxed} {
		t.Run(mode.String(), func(t *testing.T) {
			// The global and thread-local captures end on the thread that began them.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
			defer driver.StreamDestroyCtx(ctx, s)
			var runs atomic.Int64
			var released chan struct{}
			var g driver.Graph
			for try := 1; ; try++ {
				released = make(chan struct{})
				if mode == driver.StreamCaptureModeGlobal {
					slowCallsDone(t)
				}
				ok(t, driver.StreamBeginCaptureCtx(ctx, s, mode))
				err := launchCounted(ctx, s, &runs, released)
				var end error
				if g, end = driver.StreamEndCaptureCtx(ctx, s); err == nil {
					err = end
				}
				if err == nil {
					break
				}
				// A GLOBAL capture is invalidated by a potentially unsafe
				// call on any thread of the process, and the earlier tests'
				// objects are destroyed on the cuda package's goroutines
				// after their Close (frees, unloads, a context's release):
				// begin again once they are done.
				if mode != driver.StreamCaptureModeGlobal || !errors.Is(err, driver.ErrorStreamCaptureInvalidated) || try == 20 {
					t.Fatalf("LaunchHostFuncGo into a %v capture (try %d): %v", mode, try, err)
				}
				t.Logf("try %d: the capture was invalidated by another thread's call (%v): again", try, err)
				time.Sleep(50 * time.Millisecond)
			}
			if n := runs.Load(); n != 0 {
				t.Fatalf("the captured func ran %d times before any launch", n)
			}
			x := must[driver.GraphExec](t)(driver.GraphInstantiateWithFlagsCtx(ctx, g, 0))
			const replays = 100
			for range replays {
				ok(t, driver.GraphLaunchCtx(ctx, x, s))
			}
			ok(t, driver.StreamSynchronizeCtx(ctx, s))
			if n := runs.Load(); n != replays {
				t.Fatalf("%d replays ran the func %d times", replays, n)
			}
			// The exec alone keeps the func: it still runs (a released
			// one would crash the process, saying so).
			ok(t, driver.GraphDestroyCtx(ctx, g))
			ok(t, driver.GraphLaunchCtx(ctx, x, s))
			ok(t, driver.StreamSynchronizeCtx(ctx, s))
			if n := runs.Load(); n != replays+1 {
				t.Fatalf("after the graph's destruction the exec ran the func %d times in all, want %d", n, replays+1)
			}
			ok(t, driver.GraphExecDestroyCtx(ctx, x))
			waitFuncReleased(t, released)
		})
	}
}

// launchCounted launches a func that counts its runs into s, capturing a
// value whose cleanup closes released: nothing else keeps it.
func launchCounted(ctx driver.Context, s driver.Stream, runs *atomic.Int64, released chan struct{}) error {
	token := new([16]byte)
	runtime.AddCleanup(token, func(c chan struct{}) { close(c) }, released)
	return driver.LaunchHostFuncGoCtx(ctx, s, func() {
		runs.Add(1)
		runtime.KeepAlive(token)
	})
}

// waitFuncReleased collects garbage until released is closed: the driver
// runs a user object's destructor on a thread of its own, after the last
// reference is gone (nothing can wait for it: CU_USER_OBJECT_NO_DESTRUCTOR_SYNC).
func waitFuncReleased(t *testing.T, released chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		runtime.GC()
		select {
		case <-released:
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the func is still kept a minute after the graph and its exec were destroyed")
		}
	}
}

// Go funcs as graph host nodes: added, set in an exec (kept until its
// release); each launch calls what its exec holds; the graph's func is
// released once the graph and the exec are destroyed.
func TestGraphHostNodeGo(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)
	var a, b atomic.Int64
	released := make(chan struct{})
	g := must[driver.Graph](t)(driver.GraphCreateCtx(ctx, 0))
	node := must[driver.GraphNode](t)(addCounted(ctx, g, &a, released))
	x := must[driver.GraphExec](t)(driver.GraphInstantiateWithFlagsCtx(ctx, g, 0))
	for range 10 {
		ok(t, driver.GraphLaunchCtx(ctx, x, s))
	}
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	if n := a.Load(); n != 10 {
		t.Fatalf("10 launches ran the node's func %d times", n)
	}
	release, err := driver.GraphExecHostNodeSetParamsGoCtx(ctx, x, node, func() { b.Add(1) })
	ok(t, err)
	ok(t, driver.GraphLaunchCtx(ctx, x, s))
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	if na, nb := a.Load(), b.Load(); na != 10 || nb != 1 {
		t.Fatalf("after the exec's node was set: the funcs ran %d and %d times, want 10 and 1", na, nb)
	}
	ok(t, driver.GraphExecDestroyCtx(ctx, x))
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	release()
	ok(t, driver.GraphDestroyCtx(ctx, g))
	waitFuncReleased(t, released)
}

// addCounted adds a host node whose func counts its runs, capturing a
// value whose cleanup closes released.
func addCounted(ctx driver.Context, g driver.Graph, runs *atomic.Int64, released chan struct{}) (driver.GraphNode, error) {
	token := new([16]byte)
	runtime.AddCleanup(token, func(c chan struct{}) { close(c) }, released)
	return driver.GraphAddHostNodeGoCtx(ctx, g, nil, func() {
		runs.Add(1)
		runtime.KeepAlive(token)
	})
}

// slowCallsDone waits, a minute at most, until no goroutine of the cuda
// package makes its slow calls (the earlier tests' module unloads and
// frees): the driver (580.159.04) can crash when a module is loaded or
// unloaded on one thread while another begins and ends GLOBAL captures,
// from C alone (bench/jitprobe/unloadcapture.c, docs/runs/gpu-runs.md).
func slowCallsDone(t *testing.T) {
	t.Helper()
	const slow = "github.com/cudagen/cudagen/cuda.(*ctxState).runSlow"
	for deadline := time.Now().Add(time.Minute); slices.Contains(ourGoroutines(), slow); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cuda package's slow calls still run after a minute")
		}
	}
}
