package driver

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The Go forms of the C callbacks on the memory-rules fake
// (fakemem_test.go), which keeps what the driver keeps and runs host
// functions, graph launches and destructors on threads of its own.

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// released waits until the Go handles are back to base and the fake has
// run dtors destructors in all.
func released(t *testing.T, base, dtors int64) {
	t.Helper()
	waitFor(t, "the handles' release", func() bool {
		return liveCallbacks.Load() == base && fakeMemCounter(t, "fakemem_destructors_run") == dtors
	})
}

// noUserObjects fails the test if the fake holds user objects, after what
// the test did (after).
func noUserObjects(t *testing.T, after string) {
	t.Helper()
	if n := fakeMemCounter(t, "fakemem_live_user_objects"); n != 0 {
		t.Errorf("%d user objects live after %s", n, after)
	}
}

// A Go host function launched into a stream capture runs at every launch
// of the captured graph, and its handle is released once, when the graph
// and the exec made from it are both destroyed, in either order: the
// one left keeps the func callable.
func TestHostFnCaptureReplay(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx, s := fakeMemStream(t)
	// A global capture ends on the thread that began it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, graphFirst := range []bool{true, false} {
		base, dtors, nodes := liveCallbacks.Load(), fakeMemCounter(t, "fakemem_destructors_run"), fakeMemCounter(t, "fakemem_host_nodes_run")
		var runs atomic.Int64
		check(t, StreamBeginCaptureCtx(ctx, s, StreamCaptureModeGlobal))
		check(t, LaunchHostFuncGoCtx(ctx, s, func() { runs.Add(1) }))
		// The thread's capture mode, relaxed for the user object, is back.
		mode := StreamCaptureModeThreadLocal
		check(t, ThreadExchangeStreamCaptureModeCtx(ctx, &mode))
		if mode != StreamCaptureModeGlobal {
			t.Fatalf("after a launch into a capture the thread's capture mode is %v, want the global mode it had", mode)
		}
		check(t, ThreadExchangeStreamCaptureModeCtx(ctx, &mode))
		g := must[Graph](t)(StreamEndCaptureCtx(ctx, s))
		if runs.Load() != 0 || liveCallbacks.Load() != base+1 {
			t.Fatalf("captured: the func ran %d times, %d handles live; want 0, %d", runs.Load(), liveCallbacks.Load(), base+1)
		}
		x := must[GraphExec](t)(GraphInstantiateWithFlagsCtx(ctx, g, 0))
		const replays = 100
		for range replays {
			check(t, GraphLaunchCtx(ctx, x, s))
		}
		check(t, StreamSynchronizeCtx(ctx, s))
		if n, h := runs.Load(), fakeMemCounter(t, "fakemem_host_nodes_run")-nodes; n != replays || h != replays {
			t.Fatalf("after %d launches the func ran %d times, the fake ran %d host nodes", replays, n, h)
		}
		// Destroying one of them leaves the func to the other: it still runs.
		if graphFirst {
			check(t, GraphDestroyCtx(ctx, g))
			check(t, GraphLaunchCtx(ctx, x, s))
		} else {
			check(t, GraphExecDestroyCtx(ctx, x))
			x = must[GraphExec](t)(GraphInstantiateWithFlagsCtx(ctx, g, 0))
			check(t, GraphLaunchCtx(ctx, x, s))
		}
		check(t, StreamSynchronizeCtx(ctx, s))
		if n := runs.Load(); n != replays+1 {
			t.Fatalf("one of graph and exec destroyed (graph first: %v): the func ran %d times, want %d", graphFirst, n, replays+1)
		}
		if liveCallbacks.Load() != base+1 {
			t.Fatalf("one of graph and exec destroyed: %d handles live, want %d", liveCallbacks.Load(), base+1)
		}
		check(t, GraphExecDestroyCtx(ctx, x))
		if !graphFirst {
			check(t, GraphDestroyCtx(ctx, g))
		}
		released(t, base, dtors+1)
	}
}

// Outside a capture, the func runs once per launch and its handle is
// released after it has run.
func TestHostFnOutsideCapture(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx, s := fakeMemStream(t)
	base, fns := liveCallbacks.Load(), fakeMemCounter(t, "fakemem_host_fns_run")
	var runs atomic.Int64
	for range 3 {
		check(t, LaunchHostFuncGoCtx(ctx, s, func() { runs.Add(1) }))
	}
	check(t, StreamSynchronizeCtx(ctx, s))
	if runs.Load() != 3 || fakeMemCounter(t, "fakemem_host_fns_run")-fns != 3 {
		t.Errorf("3 launches: the funcs ran %d times, the fake ran %d", runs.Load(), fakeMemCounter(t, "fakemem_host_fns_run")-fns)
	}
	waitFor(t, "the one-shot handles' release", func() bool { return liveCallbacks.Load() == base })
	// A failed launch releases at once.
	if err := LaunchHostFuncGoCtx(ctx, Stream(0xdead), func() {}); err != ErrorInvalidHandle {
		t.Errorf("launching on a bad stream: %v, want CUDA_ERROR_INVALID_HANDLE", err)
	}
	if liveCallbacks.Load() != base {
		t.Errorf("a failed launch left %d handles live, want %d", liveCallbacks.Load(), base)
	}
}

// Host nodes with Go funcs: added, set in the graph and set in an exec;
// each launch calls what its exec holds; the graph's funcs are released
// when the graph and its execs are destroyed, the exec's by its release.
func TestGraphHostNodeGo(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx, s := fakeMemStream(t)
	base, dtors := liveCallbacks.Load(), fakeMemCounter(t, "fakemem_destructors_run")
	var a, b, c, d atomic.Int64
	counts := func() [4]int64 { return [4]int64{a.Load(), b.Load(), c.Load(), d.Load()} }
	launch := func(x GraphExec, want [4]int64) {
		t.Helper()
		check(t, GraphLaunchCtx(ctx, x, s))
		check(t, StreamSynchronizeCtx(ctx, s))
		if got := counts(); got != want {
			t.Fatalf("after a launch the funcs ran %v times, want %v", got, want)
		}
	}
	g := must[Graph](t)(GraphCreateCtx(ctx, 0))
	n1 := must[GraphNode](t)(GraphAddHostNodeGoCtx(ctx, g, nil, func() { a.Add(1) }))
	n2 := must[GraphNode](t)(GraphAddHostNodeGoCtx(ctx, g, []GraphNode{n1}, func() { b.Add(1) }))
	x1 := must[GraphExec](t)(GraphInstantiateWithFlagsCtx(ctx, g, 0))
	launch(x1, [4]int64{1, 1, 0, 0})
	// Set in the graph: later execs call c; x1 still calls b.
	check(t, GraphHostNodeSetParamsGoCtx(ctx, g, n2, func() { c.Add(1) }))
	launch(x1, [4]int64{2, 2, 0, 0})
	x2 := must[GraphExec](t)(GraphInstantiateWithFlagsCtx(ctx, g, 0))
	launch(x2, [4]int64{3, 2, 1, 0})
	// Set in x1: its launches call d for n1.
	release, err := GraphExecHostNodeSetParamsGoCtx(ctx, x1, n1, func() { d.Add(1) })
	check(t, err)
	launch(x1, [4]int64{3, 3, 1, 1})
	if n := liveCallbacks.Load(); n != base+4 {
		t.Fatalf("%d handles live, want %d (three kept by the graph, one by the caller)", n, base+4)
	}
	check(t, GraphExecDestroyCtx(ctx, x1))
	release()
	release()
	if n := liveCallbacks.Load(); n != base+3 {
		t.Fatalf("after the exec's release: %d handles live, want %d", n, base+3)
	}
	// The graph destroyed, x2 keeps its funcs.
	check(t, GraphDestroyCtx(ctx, g))
	launch(x2, [4]int64{4, 3, 2, 1})
	check(t, GraphExecDestroyCtx(ctx, x2))
	released(t, base, dtors+3)
	noUserObjects(t, "everything was destroyed")
}

// A form whose driver call fails releases its handle at once.
func TestGoFormsReleaseOnError(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	base := liveCallbacks.Load()
	if _, err := GraphAddHostNodeGoCtx(ctx, Graph(0xbad), nil, func() {}); err != ErrorInvalidHandle {
		t.Errorf("GraphAddHostNodeGo on a bad graph: %v", err)
	}
	g := must[Graph](t)(GraphCreateCtx(ctx, 0))
	defer GraphDestroyCtx(ctx, g)
	if _, err := GraphAddHostNodeGoCtx(ctx, g, []GraphNode{0xbad}, func() {}); err != ErrorInvalidValue {
		t.Errorf("GraphAddHostNodeGo after a bad dependency: %v", err)
	}
	if err := GraphHostNodeSetParamsGoCtx(ctx, g, GraphNode(0xbad), func() {}); err != ErrorInvalidHandle {
		t.Errorf("GraphHostNodeSetParamsGo on a bad node: %v", err)
	}
	if _, err := GraphExecHostNodeSetParamsGoCtx(ctx, GraphExec(0xbad), 0, func() {}); err != ErrorInvalidHandle {
		t.Errorf("GraphExecHostNodeSetParamsGo on a bad exec: %v", err)
	}
	if err := StreamAddCallbackGoCtx(ctx, Stream(0xbad), func(Stream, Result) {}, 0); err != ErrorInvalidHandle {
		t.Errorf("StreamAddCallbackGo on a bad stream: %v", err)
	}
	if _, err := UserObjectCreateGoCtx(ctx, func() {}, 1, 0); err != ErrorInvalidValue {
		t.Errorf("UserObjectCreateGo without its required flag: %v", err)
	}
	waitFor(t, "the failed forms' release", func() bool { return liveCallbacks.Load() == base })
	noUserObjects(t, "the failed calls")
}

// Every Go form refuses a nil func before the driver is called (here
// there is none: reaching it would say so), with an error matching
// ErrorInvalidValue that names the form.
func TestGoFormsRefuseNilFuncs(t *testing.T) {
	if !cgoEnabled {
		t.Skip("skipping: without cgo every form returns the cgo-disabled error")
	}
	calls := map[string]func() error{
		"LaunchHostFuncGo":    func() error { return LaunchHostFuncGo(0, nil) },
		"StreamAddCallbackGo": func() error { return StreamAddCallbackGo(0, nil, 0) },
		"UserObjectCreateGo": func() error {
			_, err := UserObjectCreateGo(nil, 1, 1)
			return err
		},
		"OccupancyMaxPotentialBlockSizeGo": func() error {
			_, _, err := OccupancyMaxPotentialBlockSizeGo(0, nil, 0, 0)
			return err
		},
		"GraphAddHostNodeGo": func() error {
			_, err := GraphAddHostNodeGo(0, nil, nil)
			return err
		},
		"GraphHostNodeSetParamsGo": func() error { return GraphHostNodeSetParamsGo(0, 0, nil) },
		"GraphExecHostNodeSetParamsGo": func() error {
			release, err := GraphExecHostNodeSetParamsGo(0, 0, nil)
			release()
			return err
		},
	}
	for name, r := range registeredForms {
		calls[name] = func() error {
			unregister, err := r.registerNil()
			if uerr := unregister(); uerr != nil {
				t.Errorf("%s: the unregister of a refused registration: %v", name, uerr)
			}
			return err
		}
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrorInvalidValue) || errors.Is(err, ErrNoDriver) {
			t.Errorf("%s with a nil func: %v; want an error matching ErrorInvalidValue, before the driver is called", name, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "cuda: "+name+": ") || !strings.Contains(msg, "is nil") || !strings.Contains(msg, "pass a func") {
			t.Errorf("%s: %q does not say the operation, the cause and the fix", name, msg)
		}
	}
	func() {
		defer func() {
			if v := recover(); v == nil || !strings.Contains(v.(error).Error(), "NewHostFn: f is nil") {
				t.Errorf("NewHostFn(nil): panicked with %v, want a nil-func error", v)
			}
		}()
		NewHostFn(nil)
	}()
}

// panicky panics: the stack of a CallbackPanic names it.
func panicky() { panic("boom") }

// panicForms triggers each asynchronous form with f on the fake, and
// returns once the driver has called f (or, for a destructor, has been
// asked to). The registered callbacks' forms join in their build's files.
var panicForms = map[string]func(t *testing.T, ctx Context, s Stream, f func()){
	"LaunchHostFuncGo": func(t *testing.T, ctx Context, s Stream, f func()) {
		check(t, LaunchHostFuncGoCtx(ctx, s, f))
		check(t, StreamSynchronizeCtx(ctx, s))
	},
	"NewHostFn": func(t *testing.T, ctx Context, s Stream, f func()) {
		fn, ud, release := NewHostFn(f)
		check(t, LaunchHostFuncCtx(ctx, s, fn, ud))
		check(t, StreamSynchronizeCtx(ctx, s))
		release()
	},
	"StreamAddCallbackGo": func(t *testing.T, ctx Context, s Stream, f func()) {
		check(t, StreamAddCallbackGoCtx(ctx, s, func(Stream, Result) { f() }, 0))
		check(t, StreamSynchronizeCtx(ctx, s))
	},
	"UserObjectCreateGo": func(t *testing.T, ctx Context, s Stream, f func()) {
		o := must[UserObject](t)(UserObjectCreateGoCtx(ctx, f, 1, 1))
		check(t, UserObjectReleaseCtx(ctx, o, 1))
	},
	"GraphAddHostNodeGo": func(t *testing.T, ctx Context, s Stream, f func()) {
		g := must[Graph](t)(GraphCreateCtx(ctx, 0))
		must[GraphNode](t)(GraphAddHostNodeGoCtx(ctx, g, nil, f))
		launchGraph(t, ctx, s, g)
	},
	"GraphHostNodeSetParamsGo": func(t *testing.T, ctx Context, s Stream, f func()) {
		g := must[Graph](t)(GraphCreateCtx(ctx, 0))
		n := must[GraphNode](t)(GraphAddHostNodeGoCtx(ctx, g, nil, func() {}))
		check(t, GraphHostNodeSetParamsGoCtx(ctx, g, n, f))
		launchGraph(t, ctx, s, g)
	},
	"GraphExecHostNodeSetParamsGo": func(t *testing.T, ctx Context, s Stream, f func()) {
		g := must[Graph](t)(GraphCreateCtx(ctx, 0))
		n := must[GraphNode](t)(GraphAddHostNodeGoCtx(ctx, g, nil, func() {}))
		x := must[GraphExec](t)(GraphInstantiateWithFlagsCtx(ctx, g, 0))
		release, err := GraphExecHostNodeSetParamsGoCtx(ctx, x, n, f)
		check(t, err)
		check(t, GraphLaunchCtx(ctx, x, s))
		check(t, StreamSynchronizeCtx(ctx, s))
		check(t, GraphExecDestroyCtx(ctx, x))
		check(t, GraphDestroyCtx(ctx, g))
		release()
	},
}

// launchGraph instantiates g, launches it once on s, waits, and destroys
// both.
func launchGraph(t *testing.T, ctx Context, s Stream, g Graph) {
	t.Helper()
	x := must[GraphExec](t)(GraphInstantiateWithFlagsCtx(ctx, g, 0))
	check(t, GraphLaunchCtx(ctx, x, s))
	check(t, StreamSynchronizeCtx(ctx, s))
	check(t, GraphExecDestroyCtx(ctx, x))
	check(t, GraphDestroyCtx(ctx, g))
}

// With a handler set, a panic of the func of each asynchronous form
// reaches it, naming the form, with the value and the stack of the panic;
// the callback then returns as if the func had: the stream's later work
// runs and the handles are released.
func TestCallbackPanicHandled(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx, s, got := panicSetup(t)
	base := liveCallbacks.Load()
	for form, trigger := range panicTriggers() {
		trigger(t, ctx, s, panicky)
		var p *CallbackPanic
		select {
		case p = <-got:
		case <-time.After(time.Minute):
			t.Fatalf("%s: no panic reached the handler in a minute", form)
		}
		if p.Callback != form || p.Value != "boom" || !strings.Contains(string(p.Stack), "driver.panicky") {
			t.Errorf("%s: the handler got %q, %v, a stack without panicky:\n%s", form, p.Callback, p.Value, p.Stack)
		}
		if !strings.Contains(p.Error(), "cuda: the Go func given to "+form+" panicked: boom") {
			t.Errorf("%s: %q", form, p.Error())
		}
		// The stream goes on.
		var ran atomic.Bool
		check(t, LaunchHostFuncGoCtx(ctx, s, func() { ran.Store(true) }))
		check(t, StreamSynchronizeCtx(ctx, s))
		if !ran.Load() {
			t.Errorf("%s: the stream's work after the panic did not run", form)
		}
	}
	waitFor(t, "every handle's release", func() bool { return liveCallbacks.Load() == base })
}

const panicFormEnv = "CUDAGEN_PANIC_FORM"

// Without a handler, a panic of the func of each asynchronous form stops
// the process, saying which form's func panicked, with what, and where.
func TestCallbackPanicCrashes(t *testing.T) {
	if inFakeMem(t) {
		ctx, s := fakeMemStream(t)
		form := os.Getenv(panicFormEnv)
		base := liveCallbacks.Load()
		panicTriggers()[form](t, ctx, s, panicky)
		// A destructor may still be on its way: wait for its crash.
		waitFor(t, "the crash", func() bool { return liveCallbacks.Load() == base && fakeMemCounter(t, "fakemem_destructors_run") > 0 })
		// The crash comes from the goroutine or thread that ran the func,
		// which may still be unwinding: give it a minute.
		time.Sleep(time.Minute)
		t.Fatalf("%s: the func panicked and the process goes on", form)
	}
	for form := range panicTriggers() {
		t.Run(form, func(t *testing.T) {
			out, err := runOnFakeMem(t, "TestCallbackPanicCrashes", panicFormEnv+"="+form)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("the child did not crash (%v):\n%s", err, out)
			}
			for _, want := range []string{"panic: boom", "cuda: the Go func given to " + form + " panicked: boom", "driver.panicky("} {
				if !strings.Contains(out, want) {
					t.Errorf("the crash does not say %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "--- FAIL") || strings.Contains(out, "goes on") {
				t.Errorf("the child failed otherwise:\n%s", out)
			}
		})
	}
}

// A panic of the occupancy func, which the driver calls during the call,
// continues in the caller once the driver has returned; the func is not
// called again in that call, and the next call works.
func TestOccupancyPanic(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	mod := must[Module](t)(ModuleLoadDataCtx(ctx, []byte("fakemem-image\nk 8 4\n\x00")))
	defer ModuleUnloadCtx(ctx, mod)
	fn := must[Function](t)(ModuleGetFunctionCtx(ctx, mod, "k"))
	calls := 0
	func() {
		defer func() {
			p, ok := recover().(*CallbackPanic)
			if !ok || p.Callback != "OccupancyMaxPotentialBlockSizeGo" || p.Value != "boom" || !strings.Contains(string(p.Stack), "driver.panicky") {
				t.Errorf("recovered %#v, want a *CallbackPanic of OccupancyMaxPotentialBlockSizeGo with boom and its stack", p)
			}
		}()
		OccupancyMaxPotentialBlockSizeGoCtx(ctx, fn, func(int32) uint64 { calls++; panicky(); return 0 }, 0, 0)
		t.Error("OccupancyMaxPotentialBlockSizeGo returned after its func panicked")
	}()
	if calls != 1 {
		t.Errorf("the func was called %d times in the call, want 1 (none after its panic)", calls)
	}
	minGrid, block, err := OccupancyMaxPotentialBlockSizeGoCtx(ctx, fn, func(bs int32) uint64 { return uint64(bs) * 64 }, 0, 0)
	if err != nil || block != 768 || minGrid != 5 {
		t.Errorf("after a panic: %d, %d, %v; want 5, 768 (64 bytes a thread, 48 KiB a block)", minGrid, block, err)
	}
}

// The driver calling a func whose handle was released (too early, by the
// caller) is reported as such, not as a misuse of a cgo.Handle.
func TestReleasedHostFnReported(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx, s, got := panicSetup(t)
	var ran atomic.Bool
	fn, ud, release := NewHostFn(func() { ran.Store(true) })
	release()
	check(t, LaunchHostFuncCtx(ctx, s, fn, ud))
	check(t, StreamSynchronizeCtx(ctx, s))
	select {
	case p := <-got:
		if p.Callback != "a released host function" || !strings.Contains(p.Error(), "handle was already released") {
			t.Errorf("the handler got %q: %v", p.Callback, p)
		}
	default:
		t.Fatal("the call of a released func reached no handler")
	}
	if ran.Load() {
		t.Error("the released func ran")
	}
}

// registeredForm is a Go form whose func the driver calls until it is
// unregistered. The forms this build has join registeredForms in their
// files' init (callback_async_test.go, callback_logs_test.go).
type registeredForm struct {
	// registerNil registers a nil func, which the form refuses.
	registerNil func() (unregister func() error, err error)
	// register registers a func on ctx that checks what the driver passes
	// it and calls f.
	register func(t *testing.T, ctx Context, f func()) (unregister func() error, err error)
	// fire makes the memory-rules fake call the registered func once,
	// inside the call.
	fire func(t *testing.T, ctx Context)
	// calls names what fire makes, for the messages.
	calls string
}

// registeredForms are this build's registered forms, by name.
var registeredForms = map[string]registeredForm{}

// panicTriggers are panicForms and, for each of this build's registered
// forms, a trigger that registers f, fires it once and unregisters it.
func panicTriggers() map[string]func(t *testing.T, ctx Context, s Stream, f func()) {
	all := maps.Clone(panicForms)
	for name, r := range registeredForms {
		all[name] = func(t *testing.T, ctx Context, _ Stream, f func()) {
			unregister := must[func() error](t)(r.register(t, ctx, f))
			r.fire(t, ctx)
			check(t, unregister())
		}
	}
	return all
}

// Unregistering from inside the func returns, and takes effect once the
// func has returned; later unregisters return; the func is not called
// after. Unregistering from another goroutine returns once the calls made
// before have been delivered.
func TestRegisteredFormsUnregister(t *testing.T) {
	if len(registeredForms) == 0 {
		t.Skip("this build has no registered forms")
	}
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	for name, r := range registeredForms {
		t.Run(name, func(t *testing.T) { checkUnregister(t, ctx, r) })
	}
}

// checkUnregister checks the unregisters of r's func on ctx (see
// TestRegisteredFormsUnregister).
func checkUnregister(t *testing.T, ctx Context, r registeredForm) {
	t.Helper()
	// From inside: the func's first call unregisters it.
	var calls atomic.Int64
	unregisters := make(chan func() error, 1)
	inside := make(chan error, 1)
	unregister := must[func() error](t)(r.register(t, ctx, func() {
		if calls.Add(1) == 1 {
			inside <- (<-unregisters)()
		}
	}))
	unregisters <- unregister
	r.fire(t, ctx)
	select {
	case err := <-inside:
		check(t, err)
	case <-time.After(time.Minute):
		t.Fatal("unregister, called inside the func, has not returned after a minute: deadlocked")
	}
	later := make(chan error, 1)
	go func() { later <- unregister() }()
	select {
	case err := <-later:
		check(t, err)
	case <-time.After(time.Minute):
		t.Fatal("an unregister after the one inside the func has not returned after a minute: deadlocked")
	}
	check(t, unregister())
	r.fire(t, ctx)
	if n := calls.Load(); n != 1 {
		t.Errorf("the func was called %d times, want 1: none after it unregistered", n)
	}

	// From another goroutine: the calls made before are delivered first.
	var got atomic.Int64
	unregister = must[func() error](t)(r.register(t, ctx, func() { got.Add(1) }))
	for range 3 {
		r.fire(t, ctx)
	}
	check(t, unregister())
	if n := got.Load(); n != 3 {
		t.Errorf("unregister returned with %d of the 3 %s before delivered", n, r.calls)
	}
}

// fakeMemStream is fakeMemContext's context and a stream of it, destroyed
// at cleanup.
func fakeMemStream(t *testing.T) (Context, Stream) {
	t.Helper()
	ctx := fakeMemContext(t)
	s := must[Stream](t)(StreamCreateCtx(ctx, 0))
	t.Cleanup(func() { StreamDestroyCtx(ctx, s) })
	return ctx, s
}

// panicSetup is a panic test's context and stream on the memory-rules fake
// (fakeMemStream), and a handler of callback panics, set for the test, that
// sends them to got.
func panicSetup(t *testing.T) (ctx Context, s Stream, got chan *CallbackPanic) {
	t.Helper()
	ctx, s = fakeMemStream(t)
	got = make(chan *CallbackPanic, 1)
	prev := SetCallbackPanicHandler(func(p *CallbackPanic) { got <- p })
	t.Cleanup(func() { SetCallbackPanicHandler(prev) })
	return ctx, s, got
}
