//go:build cgo && linux

package lifetime

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestModes runs the tests in both modes: asymmetric (if the kernel has
// membarrier) in this process, fences in a child.
func TestModes(t *testing.T) {
	if onChild(t, "^TestHazard", "CUDAGEN_HAZARD=fence") {
		t.Skip("skipping: the child runs the other tests")
	}
}

// onChild runs this test binary's tests matching run in a child process
// with env ("NAME=value") added, and fails if they fail; it reports
// whether this process is that child (env set), where it runs nothing.
func onChild(t *testing.T, run, env string) (child bool) {
	t.Helper()
	if name, value, _ := strings.Cut(env, "="); os.Getenv(name) == value {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", run, "-test.v")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	t.Logf("child (%s):\n%s", env, out)
	if err != nil {
		t.Fatalf("the child's tests (%s) failed: %v", env, err)
	}
	return false
}

func TestHazardCalls(t *testing.T) {
	if !Setup() {
		t.Fatal("hazard calls are off")
	}
	t.Logf("asymmetric (membarrier): %v", Asymmetric())
	w := Words(2)
	a := Words(3) // the test function's counter, hold flag, spinning flag
	defer FreeWords(w)
	defer FreeWords(a)
	SetFn(OpTest, SpinFn())
	SetFn(OpRecord, SpinFn())
	SetFn(OpStreamWait, SpinFn())
	fn, wa, arg := OpTest, Addr(&w[0].Int64), Addr(&a[0].Int64)

	// An open object: called, not held afterwards.
	if r := Call1(fn, wa, arg); r != 0 || a[0].Load() != 1 {
		t.Fatalf("call on an open object: %d, called %d times", r, a[0].Load())
	}
	if held := Held(nil); slices.Contains(held, wa) {
		t.Fatalf("word held after the call: %#x in %#x", wa, held)
	}
	// A closing object: refused, not called.
	w[0].Store(Closing)
	if r := Call1(fn, wa, arg); r != Refused || a[0].Load() != 1 {
		t.Fatalf("call on a closing object: %d (want %d), called %d times", r, Refused, a[0].Load())
	}
	if _, flush := Split(Refused); !flush {
		t.Fatal("a refused call must flush: a scan may have seen its slot")
	}
	if r := Call2U(OpStreamWait, Addr(&w[1].Int64), wa, arg, 0, 0); r != Refused || a[0].Load() != 1 {
		t.Fatalf("call on two objects, the second closing: %d, called %d times", r, a[0].Load())
	}
	w[0].Store(0)

	// Held during the call. Closing alone does not make it late; a flush
	// that finds it held and marks it (MarkLate) does.
	for _, mark := range []bool{false, true} {
		a[1].Store(1)
		done := make(chan int32)
		go func() { done <- Call1(fn, wa, arg) }()
		for a[2].Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		w[0].Store(Closing)
		if !Barrier() {
			t.Fatal("barrier refused")
		}
		if held := Held(nil); !slices.Contains(held, wa) {
			t.Fatalf("word not held during the call: %#x not in %#x", wa, held)
		}
		if mark {
			MarkLate([]uintptr{wa})
			Barrier()
			if held := Held(nil); !slices.Contains(held, wa) {
				t.Fatalf("word not held during the call after the mark: %#x not in %#x", wa, held)
			}
		}
		a[1].Store(0)
		r, late := Split(<-done)
		if r != 0 || late != mark {
			t.Fatalf("call closed during it, marked %v: %d, late %v; want 0, late %v", mark, r, late, mark)
		}
		Barrier()
		if held := Held(nil); slices.Contains(held, wa) {
			t.Fatalf("word held after the call: %#x in %#x", wa, held)
		}
		w[0].Store(0)
	}
	// A mark of a word no slot holds marks no thread: the next call is
	// not late.
	MarkLate([]uintptr{wa})
	if r, late := Split(Call1(fn, wa, arg)); r != 0 || late {
		t.Fatalf("call after a mark of an unheld word: %d, late %v; want 0, not late", r, late)
	}

	// RecordEvent marks the event recorded, whatever the driver says, and
	// leaves the other bits alone.
	w[0].Store(NoReuse)
	n := a[0].Load()
	if r := RecordEvent(wa, Addr(&w[1].Int64), arg, 0); r != 0 || w[0].Load() != NoReuse|Recorded || a[0].Load() != n+1 {
		t.Fatalf("RecordEvent: %d, state %#x, called %d times; want 0, %#x, once", r, w[0].Load(), a[0].Load()-n, NoReuse|Recorded)
	}
	if r := RecordEvent(wa, Addr(&w[1].Int64), arg, 0); r != 0 || w[0].Load() != NoReuse|Recorded {
		t.Fatalf("after two records: %d, state %#x", r, w[0].Load())
	}
	// A closing word is refused, uncalled.
	n = a[0].Load()
	w[1].Store(Closing)
	if r, flush := Split(RecordEvent(wa, Addr(&w[1].Int64), arg, 0)); r != Refused || !flush || a[0].Load() != n {
		t.Fatalf("RecordEvent on a closing stream: %d, flush %v, called %d times; want %d, flush, uncalled", r, flush, a[0].Load()-n, Refused)
	}
	w[1].Store(0)
	w[0].Store(0)
	// A call without an entry point is refused as NoSlot, uncalled.
	n = a[0].Load()
	if r := Call1(OpSync, wa, arg); r != NoSlot || a[0].Load() != n {
		t.Fatalf("call without an entry point: %d (want %d), called %d times", r, NoSlot, a[0].Load()-n)
	}
	// An entry point set or cleared reaches threads listed before: the
	// hot ops' entry points are copied into each thread's record.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	Call1(OpTest, wa, arg) // this thread is listed now
	SetFn(OpSync, SpinFn())
	if r := Call1(OpSync, wa, arg); r != 0 || a[0].Load() != n+2 {
		t.Fatalf("call after its entry point was set: %d, called %d times; want 0, twice", r, a[0].Load()-n)
	}
	// Sync and Query are Call1 with the op fixed in C: each reaches its own
	// entry point only.
	if r := Sync(wa, arg); r != 0 || a[0].Load() != n+3 {
		t.Fatalf("Sync: %d, called %d times; want 0, 3 times", r, a[0].Load()-n)
	}
	if r := Query(wa, arg); r != NoSlot || a[0].Load() != n+3 {
		t.Fatalf("Query without its entry point: %d (want %d), called %d times", r, NoSlot, a[0].Load()-n)
	}
	SetFn(OpQuery, SpinFn())
	if r := Query(wa, arg); r != 0 || a[0].Load() != n+4 {
		t.Fatalf("Query: %d, called %d times; want 0, 4 times", r, a[0].Load()-n)
	}
	SetFn(OpQuery, 0)
	SetFn(OpSync, 0)
	if r := Call1(OpSync, wa, arg); r != NoSlot || a[0].Load() != n+4 {
		t.Fatalf("call after its entry point was cleared: %d (want %d), called %d times", r, NoSlot, a[0].Load()-n-4)
	}
	if r := Sync(wa, arg); r != NoSlot || a[0].Load() != n+4 {
		t.Fatalf("Sync after its entry point was cleared: %d (want %d)", r, NoSlot)
	}
}

// Barrier issues a membarrier only while a thread other than its own is
// listed: a thread listed later orders its calls after the check through
// the list's mutex. The child process has one calling thread to begin
// with.
func TestHazardBarrierSkip(t *testing.T) {
	if !Setup() || !Asymmetric() {
		t.Skip("skipping: membarrier is not in use (fences or no kernel support)")
	}
	if !onChild(t, "^TestHazardBarrierSkip$", "HAZARD_BARRIER_CHILD=1") {
		return
	}
	w, a := Words(1), Words(3)
	SetFn(OpTest, SpinFn())
	wa, arg := Addr(&w[0].Int64), Addr(&a[0].Int64)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if n := listed(); n != 0 {
		t.Fatalf("%d threads listed before the first call, want 0", n)
	}
	Call1(OpTest, wa, arg)
	b := barriers()
	if !Barrier() || barriers() != b {
		t.Fatalf("one thread listed, the caller's: %d membarriers issued, want none", barriers()-b)
	}
	// Another thread makes a call, is listed and stays: now it takes one.
	ready, exit := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		Call1(OpTest, wa, arg)
		close(ready)
		<-exit
		runtime.UnlockOSThread()
	}()
	<-ready
	if !Barrier() || barriers() != b+1 {
		t.Fatalf("two threads listed: %d membarriers issued, want 1", barriers()-b)
	}
	close(exit)
}

// A thread that exits unlists its slots.
func TestHazardThreadExit(t *testing.T) {
	Setup()
	SetFn(OpTest, SpinFn())
	w := Words(1)
	a := Words(3)
	defer FreeWords(w)
	defer FreeWords(a)
	type res struct {
		r, listed int
		main      bool
	}
	done := make(chan res)
	var got res
	// Holding this thread (the main one, often) sends the goroutine
	// elsewhere.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	release := make(chan struct{})
	defer close(release)
	for range 100 {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			if syscall.Gettid() == syscall.Getpid() {
				// The main thread never exits: keep it (locked, parked
				// until the test ends) and try again elsewhere.
				done <- res{main: true}
				<-release
				runtime.UnlockOSThread()
				return
			}
			r := Call1(OpTest, Addr(&w[0].Int64), Addr(&a[0].Int64))
			done <- res{r: int(r), listed: listed()} // this thread listed
		}()
		if got = <-done; !got.main {
			break
		}
	}
	if got.main {
		t.Fatal("every try ran on the main thread, which never exits")
	}
	if got.r != 0 {
		t.Fatalf("call: %d", got.r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for listed() >= got.listed {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads listed after the thread exited, %d while it ran", listed(), got.listed)
		}
		time.Sleep(time.Millisecond)
	}
}

// Many threads: every record gets one slot, and the list of records stays
// bounded by the threads alive.
func TestHazardManyThreads(t *testing.T) {
	Setup()
	w := Words(1)
	a := Words(3)
	defer FreeWords(w)
	defer FreeWords(a)
	SetFn(OpTest, SpinFn())
	fn, wa, arg := OpTest, Addr(&w[0].Int64), Addr(&a[0].Int64)
	const g, n = 16, 2000
	errs := make(chan int32, g)
	for range g {
		go func() {
			for range n {
				if r := Call1(fn, wa, arg); r != 0 {
					errs <- r
					return
				}
			}
			errs <- 0
		}()
	}
	for range g {
		if r := <-errs; r != 0 {
			t.Fatalf("call: %d", r)
		}
	}
	if a[0].Load() != g*n {
		t.Fatalf("%d calls counted, want %d", a[0].Load(), g*n)
	}
	if held := Held(nil); len(held) != 0 {
		t.Fatalf("held after all calls returned: %#x", held)
	}
}

// What a hazard call adds to a plain cgo call of the same shape, on a
// driver call that does nothing (the mode is this process's: run with
// CUDAGEN_HAZARD=fence for the other).
func BenchmarkCall1(b *testing.B) {
	Setup()
	SetFn(OpTest, NoopFn())
	w := Words(1)
	defer FreeWords(w)
	wa := Addr(&w[0].Int64)
	b.Logf("asymmetric (membarrier): %v", Asymmetric())
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			Direct1(OpTest, 0)
		}
	})
	b.Run("hazard", func(b *testing.B) {
		for b.Loop() {
			Call1(OpTest, wa, 0)
		}
	})
}

// The launches hold the stream's and the module's words, pass the grid,
// block, shared size and the parameters' pointers through (packed in Go
// memory or given in C memory), and are refused uncalled while either word
// is closing, or without an entry point.
func TestHazardLaunch(t *testing.T) {
	if !Setup() {
		t.Fatal("hazard calls are off")
	}
	w := Words(2) // the stream's and the module's words
	a := Words(3) // the test launch's counter, first parameter, gx + by + shmem
	c := Words(2) // params in C memory: a pointer, then the value
	defer FreeWords(w)
	defer FreeWords(a)
	defer FreeWords(c)
	ws, wm, f := Addr(&w[0].Int64), Addr(&w[1].Int64), Addr(&a[0].Int64)
	grid, block := [3]uint32{7, 1, 1}, [3]uint32{1, 5, 1}
	var buf [16]byte
	buf[8] = 42 // the value at offset 8
	SetFn(OpLaunch, 0)
	if r := LaunchPacked(ws, wm, f, grid, block, 3, 0, &buf[0], len(buf)); r != NoSlot || a[0].Load() != 0 {
		t.Fatalf("launch without an entry point: %d (want %d), called %d times", r, NoSlot, a[0].Load())
	}
	SetFn(OpLaunch, LaunchFn())
	defer SetFn(OpLaunch, 0)
	if r := LaunchPacked(ws, wm, f, grid, block, 3, 0, &buf[0], len(buf)); r != 0 || a[0].Load() != 1 || a[1].Load() != 42 || a[2].Load() != 7+5+3 {
		t.Fatalf("packed launch: %d, called %d times, parameter %d, dims %d; want 0, once, 42, 15", r, a[0].Load(), a[1].Load(), a[2].Load())
	}
	if r := LaunchPacked(ws, wm, f, grid, block, 3, 0, &buf[0], 12); r != 1 || a[0].Load() != 1 {
		t.Fatalf("packed launch of 12 bytes where the kernel takes 16: %d, called %d times; want the launch's 1 (its size reached it), once", r, a[0].Load())
	}
	c[1].Store(-9)
	c[0].Store(int64(Addr(&c[1].Int64)))
	if r := Launch(ws, wm, f, grid, block, 4, 0, unsafe.Pointer(&c[0])); r != 0 || a[0].Load() != 2 || a[1].Load() != -9 || a[2].Load() != 7+5+4 {
		t.Fatalf("launch of params in C memory: %d, called %d times, parameter %d, dims %d; want 0, twice, -9, 16", r, a[0].Load(), a[1].Load(), a[2].Load())
	}
	if held := Held(nil); slices.Contains(held, ws) || slices.Contains(held, wm) {
		t.Fatalf("a word held after the launches: %#x", held)
	}
	for i := range w {
		w[i].Store(Closing)
		if r, flush := Split(LaunchPacked(ws, wm, f, grid, block, 3, 0, &buf[0], len(buf))); r != Refused || !flush || a[0].Load() != 2 {
			t.Fatalf("launch with word %d closing: %d, flush %v, called %d times; want %d, flush, twice", i, r, flush, a[0].Load(), Refused)
		}
		if r := Launch(ws, wm, f, grid, block, 3, 0, unsafe.Pointer(&c[0])); r != Refused || a[0].Load() != 2 {
			t.Fatalf("launch of C params with word %d closing: %d, called %d times", i, r, a[0].Load())
		}
		w[i].Store(0)
	}
}
