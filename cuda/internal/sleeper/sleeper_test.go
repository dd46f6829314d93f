//go:build cgo && linux

package sleeper

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

var (
	setupOnce sync.Once
	clock0    time.Time
	abandoned = make(chan int32, 64)
)

// setup starts the pool on the tests' driver: event n completes n ms after
// clock0.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		testClock()
		clock0 = time.Now()
		Abandoned = func(j *Job, res int32) {
			j.Put()
			abandoned <- res
		}
		if !Setup(testFns()) {
			t.Fatal("Setup failed")
		}
	})
}

// after is the test event that completes d from now.
func after(d time.Duration) uintptr {
	return uintptr((time.Since(clock0) + d + time.Millisecond - 1) / time.Millisecond)
}

// dispatcherGone waits for the dispatcher to end (its last answer given).
func dispatcherGone(t *testing.T) {
	t.Helper()
	for range 500 {
		pool.mu.Lock()
		running := pool.running
		pool.mu.Unlock()
		if !running {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the dispatcher still runs with no answer owed")
}

// Both modes answer the driver's result, after the work completes; the
// driver's refusal without a context is made again with ctx current.
func TestBlockAndPoll(t *testing.T) {
	setup(t)
	j := Get()
	for _, block := range []bool{true, false} {
		submit := func(ctx, ev uintptr) {
			t.Helper()
			if block {
				if !Reserve() {
					t.Fatal("Reserve failed with no job running")
				}
				if !j.Block(ctx, ev) {
					t.Fatal("Block failed")
				}
			} else if !j.Poll(ctx, ev) {
				t.Fatal("Poll failed")
			}
		}
		t0 := time.Now()
		submit(0, after(20*time.Millisecond))
		if r, ok := j.Wait(nil); r != 0 || !ok {
			t.Fatalf("block %v: %d, %v; want 0, true", block, r, ok)
		}
		if d := time.Since(t0); d < 19*time.Millisecond {
			t.Fatalf("block %v: answered after %v, before the work's 20ms", block, d)
		}
		submit(0, 5000)
		if r, _ := j.Wait(nil); r != 201 {
			t.Fatalf("block %v: refused without a context: %d, want 201", block, r)
		}
		submit(42, 5000)
		if r, _ := j.Wait(nil); r != 0 {
			t.Fatalf("block %v: retried with a context: %d, want 0", block, r)
		}
	}
	j.Put()
	dispatcherGone(t)
}

// A polled job given up returns at once and is never answered; the job is
// reused for the next submission, whose answer is its own. A blocked job
// given up returns at once; its answer goes to Abandoned.
func TestGiveUp(t *testing.T) {
	setup(t)
	j := Get()
	done := make(chan struct{})
	close(done)
	if !j.Poll(0, after(time.Hour)) {
		t.Fatal("Poll failed")
	}
	// Its work completes in an hour: returning at all, it gave up.
	if r, ok := j.Wait(done); ok {
		t.Fatalf("polled job given up: %d, %v; want false", r, ok)
	}
	if !j.Poll(0, after(5*time.Millisecond)) {
		t.Fatal("Poll failed")
	}
	if r, ok := j.Wait(nil); r != 0 || !ok {
		t.Fatalf("the reused job: %d, %v; want 0, true", r, ok)
	}
	// An order: the blocked job given up returns before its work
	// completes (10 s, long against a busy machine's stalls), whose answer
	// then goes to Abandoned.
	ev := after(10 * time.Second)
	if !Reserve() || !j.Block(0, ev) {
		t.Fatal("Block failed")
	}
	if _, ok := j.Wait(done); ok {
		t.Fatal("blocked job given up: answered; want false")
	}
	if end := clock0.Add(time.Duration(ev) * time.Millisecond); !time.Now().Before(end) {
		t.Fatalf("blocked job given up: returned %v after its work completed; want before", time.Since(end))
	}
	select {
	case r := <-abandoned:
		if r != 0 {
			t.Fatalf("Abandoned got %d, want 0", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("Abandoned had not run a minute after the wait began")
	}
	dispatcherGone(t)
}

// Thousands of jobs at once: at most MaxBlockers block, the rest poll, on
// one poller; each gets its own answer, and none allocates once warm.
func TestManyJobs(t *testing.T) {
	setup(t)
	const n = 3000
	before := ReadStats()
	jobs := make([]*Job, n)
	blocked := 0
	for i := range jobs {
		jobs[i] = Get()
		ev := after(time.Duration(30+i%20) * time.Millisecond)
		if i%1000 == 7 {
			ev = 5000 // refused: answered 201
		}
		if Reserve() {
			blocked++
			if !jobs[i].Block(0, ev) {
				t.Fatal("Block failed")
			}
		} else if !jobs[i].Poll(0, ev) {
			t.Fatal("Poll failed")
		}
	}
	if s := ReadStats(); s.Blockers > MaxBlockers || !s.Poller {
		t.Fatalf("%d blocking threads, poller %v; want at most %d and a poller", s.Blockers, s.Poller, MaxBlockers)
	}
	for i, j := range jobs {
		want := int32(0)
		if i%1000 == 7 {
			want = 201
		}
		if r, ok := j.Wait(nil); r != want || !ok {
			t.Fatalf("job %d: %d, %v; want %d", i, r, ok, want)
		}
		j.Put()
	}
	s := ReadStats()
	if s.Blocks-before.Blocks != int64(blocked) || s.Polls-before.Polls != int64(n-blocked) {
		t.Fatalf("counted %d blocked and %d polled, want %d and %d", s.Blocks-before.Blocks, s.Polls-before.Polls, blocked, n-blocked)
	}
	dispatcherGone(t)
	j := Get()
	for _, block := range []bool{true, false} {
		allocs := testing.AllocsPerRun(20, func() {
			if block && Reserve() {
				j.Block(0, after(0))
			} else {
				j.Poll(0, after(0))
			}
			j.Wait(nil)
		})
		if allocs != 0 {
			t.Errorf("block %v: %v allocations per job, want 0", block, allocs)
		}
	}
	j.Put()
	runtime.GC()
}

// Threads that idle 10s exit (here after 50ms), and come back on demand.
func TestIdleThreadsExit(t *testing.T) {
	setup(t)
	j := Get()
	defer j.Put()
	if !Reserve() || !j.Block(0, after(time.Millisecond)) {
		t.Fatal("Block failed")
	}
	j.Wait(nil)
	if !j.Poll(0, after(time.Millisecond)) {
		t.Fatal("Poll failed")
	}
	j.Wait(nil)
	if s := ReadStats(); s.Blockers == 0 || !s.Poller {
		t.Fatalf("after a blocked and a polled job: %d blocking threads, poller %v", s.Blockers, s.Poller)
	}
	testIdle(50 * time.Millisecond)
	defer testIdle(10 * time.Second)
	var s Stats
	for range 500 {
		if s = ReadStats(); s.Blockers == 0 && !s.Poller {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.Blockers != 0 || s.Poller {
		t.Fatalf("idle: %d blocking threads, poller %v; want none", s.Blockers, s.Poller)
	}
	if !Reserve() || !j.Block(0, after(time.Millisecond)) {
		t.Fatal("Block after the threads exited failed")
	}
	if r, ok := j.Wait(nil); r != 0 || !ok {
		t.Fatalf("Block after the threads exited: %d, %v", r, ok)
	}
}
