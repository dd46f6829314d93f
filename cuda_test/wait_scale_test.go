//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// What a long Wait costs, read from /proc: the process's threads and open
// descriptors.
func procThreads(tb testing.TB) int {
	tb.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("skipping: needs /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatal("no Threads line in /proc/self/status")
	return 0
}

func procFDs(tb testing.TB) int {
	tb.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Skipf("skipping: needs /proc/self/fd: %v", err)
	}
	return len(ents)
}

// usage is the process's goroutines, threads and descriptors.
type usage struct{ goroutines, threads, fds int }

func readUsage(tb testing.TB) usage {
	return usage{runtime.NumGoroutine(), procThreads(tb), procFDs(tb)}
}

// peak samples usage every millisecond until stop is closed, then sends
// the highest of each.
func peak(tb testing.TB, stop <-chan struct{}) <-chan usage {
	out := make(chan usage, 1)
	go func() {
		var m usage
		for {
			u := readUsage(tb)
			m = usage{max(m.goroutines, u.goroutines), max(m.threads, u.threads), max(m.fds, u.fds)}
			select {
			case <-stop:
				out <- m
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return out
}

// submitted waits until n more long Waits than before have gone to the
// waiter threads (blocked or polled), that is, until each is parked.
func submitted(t *testing.T, before cuda.WaiterStats, n int64, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := cuda.ReadWaiterStats()
		got := s.BlockedTotal - before.BlockedTotal + s.PolledTotal - before.PolledTotal
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %d of %d long Waits reached the waiter threads", limit, got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// settleUsage waits (up to 10s) for the goroutines to come back to
// before's, and checks that threads and descriptors stay within bound of
// before's.
func settleUsage(t *testing.T, what string, before usage, bound int) {
	t.Helper()
	var u usage
	for range 1000 {
		if u = readUsage(t); u.goroutines <= before.goroutines {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%s: goroutines %d, threads %d, descriptors %d (before: %d, %d, %d)", what,
		u.goroutines, u.threads, u.fds, before.goroutines, before.threads, before.fds)
	if u.goroutines > before.goroutines {
		t.Errorf("%s: %d goroutines, %d before", what, u.goroutines, before.goroutines)
	}
	if u.threads > before.threads+bound || u.fds > before.fds+bound {
		t.Errorf("%s: %d threads and %d descriptors, %d and %d before: more than %d above", what,
			u.threads, u.fds, before.threads, before.fds, bound)
	}
}

// p99 is the 99th percentile of ds (sorted in place).
func p99(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[(len(ds)*99+99)/100-1]
}

// TestLayerWaitScale: 10,000 concurrent long Waits on one context, on pending
// work, cost at most 64 threads and 64 descriptors above the process's
// before; cancelling them, in waves of 1000, returns context.Canceled from
// each Wait of the wave cancelled and from none of the later waves (its
// cancel → return latencies logged: p99, worst wave, max); and afterwards,
// once the work
// completes, no goroutine is left and threads and descriptors are back
// within bound. In each wave, half the Waits share one context, cancelled
// last; the others have one each, cancelled one after another. Half of them are on a
// BlockingSync event. On the fake driver (CI), whose calls cost nothing,
// the figures are the package's own. Under -race the test skips: the
// detector slows every goroutine several times over (tools/test.sh runs it
// without -race in every fake mode and build).
func TestLayerWaitScale(t *testing.T) {
	if !onFake() {
		t.Skip("skipping: the scale test measures the package's own cost, on the fake driver (TestGoLayerOnFakeDriver runs this); TestWaitManyGPU is its GPU counterpart")
	}
	if raceEnabled {
		// 10,000 goroutines under the detector: its cost, not the package's,
		// decides whether the waves fit in the work (they did not in 30 s
		// in one fake mode). The runs without -race assert it.
		t.Skip("skipping under -race: the detector's cost decides the timing; tools/test.sh runs it without -race in every fake mode and build")
	}
	const n, bound = 10000, 64
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	events := [2]*cuda.Event{
		must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{})),
		must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{BlockingSync: true})),
	}
	// Long enough for the Waits to start and be cancelled before it ends:
	// they take 2-3 s to start on the fake driver on 2 cores (its calls
	// hold their handles 5 µs).
	const work = 20 * time.Second
	ok(t, s.Spin(work))
	t0 := time.Now()
	for _, e := range events {
		ok(t, s.Record(e))
		defer e.Close()
	}
	runtime.GC()
	before := readUsage(t)
	stats := cuda.ReadWaiterStats()
	stop := make(chan struct{})
	peaks := peak(t, stop)

	// Waves of 1000: in each, 500 Waits share the wave's context and 500
	// have their own. launch starts wave w's Waits.
	const wave = 1000
	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	waveCancel := make([]context.CancelFunc, n/wave)
	cancelled := make([]int64, n) // when its ctx was cancelled (ns since t0)
	returned := make([]int64, n)
	errs := make([]error, n)
	waves := make([]sync.WaitGroup, n/wave)
	launch := func(w int) {
		var wctx context.Context
		wctx, waveCancel[w] = context.WithCancel(context.Background())
		for i := w * wave; i < (w+1)*wave; i++ {
			if i%2 == 0 {
				ctxs[i], cancels[i] = wctx, nil
			} else {
				ctxs[i], cancels[i] = context.WithCancel(context.Background())
			}
			waves[w].Add(1)
			go func() {
				defer waves[w].Done()
				errs[i] = events[i/2%2].Wait(ctxs[i])
				atomic.StoreInt64(&returned[i], int64(time.Since(t0)))
			}()
		}
	}
	for w := range waves {
		launch(w)
	}
	submitted(t, stats, n, work/2)
	close(stop)
	top := <-peaks
	started := time.Since(t0)
	if done, _ := events[0].Query(); done {
		t.Fatalf("the work (%v) completed before the Waits were all parked; the test proves nothing", work)
	}
	st := cuda.ReadWaiterStats()
	t.Logf("%d Waits parked after %v: %d blocked, %d polled; peak goroutines %d, threads %d, descriptors %d (before: %d, %d, %d)",
		n, started.Round(time.Millisecond), st.BlockedTotal-stats.BlockedTotal, st.PolledTotal-stats.PolledTotal,
		top.goroutines, top.threads, top.fds, before.goroutines, before.threads, before.fds)
	if top.threads > before.threads+bound {
		t.Errorf("%d concurrent Waits: %d threads at the peak, %d before: more than %d above", n, top.threads, before.threads, bound)
	}
	if top.fds > before.fds+bound {
		t.Errorf("%d concurrent Waits: %d descriptors at the peak, %d before: more than %d above", n, top.fds, before.fds, bound)
	}

	// Cancel them all, a wave at a time (each own context, then the
	// wave's), the next wave once the last has returned, while the other
	// Waits stay parked: each wave's Waits, and only they, return
	// context.Canceled (an order: the later waves' have not returned). The
	// cancel → return latencies are logged, never asserted: on a shared
	// machine the scheduler decides them (all at once, on 2 cores, it
	// alone takes 5-8 ms to run 5,000 goroutines woken by one close).
	lat := make([]time.Duration, n)
	var worstWave time.Duration // the highest p99 of a wave
	for w := range waves {
		for i := w * wave; i < (w+1)*wave; i++ {
			if cancels[i] != nil {
				cancelled[i] = int64(time.Since(t0))
				cancels[i]()
			}
		}
		c := int64(time.Since(t0))
		waveCancel[w]()
		for i := w * wave; i < (w+1)*wave; i += 2 {
			cancelled[i] = c
		}
		waves[w].Wait()
		if w > 0 && slices.ContainsFunc(errs[w*wave:(w+1)*wave], func(err error) bool { return err == nil }) {
			// The work ended before this wave was cancelled (the machine
			// stalled for seconds): its Waits may rightly return nil, and
			// the later waves prove nothing more. The waves before it did.
			if done, _ := events[0].Query(); done {
				t.Logf("the work (%v) ended before wave %d of %d was cancelled, %v after it was queued: waves 0 to %d checked",
					work, w, len(waves), time.Since(t0).Round(time.Millisecond), w-1)
				for v := w + 1; v < len(waves); v++ { // their Waits end too: let them, before the test does
					waveCancel[v]()
					for i := v * wave; i < (v+1)*wave; i++ {
						if cancels[i] != nil {
							cancels[i]()
						}
					}
					waves[v].Wait()
				}
				return
			}
		}
		wl := make([]time.Duration, 0, wave)
		for i := w * wave; i < (w+1)*wave; i++ {
			if !errors.Is(errs[i], context.Canceled) {
				t.Fatalf("Wait %d returned %v, want context.Canceled", i, errs[i])
			}
			lat[i] = time.Duration(returned[i] - cancelled[i])
			wl = append(wl, lat[i])
		}
		worstWave = max(worstWave, p99(wl))
		for i := (w + 1) * wave; i < n; i++ {
			if atomic.LoadInt64(&returned[i]) != 0 {
				t.Fatalf("Wait %d (wave %d) returned when wave %d was cancelled; its context was not", i, i/wave, w)
			}
		}
	}
	if done, _ := events[0].Query(); done {
		t.Fatal("the work completed before the Waits were cancelled; the test proves nothing")
	}
	// Nothing of the cancelled Waits is left but the blocked ones' driver
	// sleeps, on their waiter threads, and the one goroutine that will
	// take their answers.
	u := readUsage(t)
	for i := 0; i < 100 && u.goroutines > before.goroutines+1; i++ { // the Waits' goroutines end
		time.Sleep(10 * time.Millisecond)
		u = readUsage(t)
	}
	if u.goroutines > before.goroutines+1 || u.threads > before.threads+bound || u.fds > before.fds+bound {
		t.Errorf("with every Wait cancelled, before the work completes: goroutines %d, threads %d, descriptors %d; before: %d, %d, %d (allowed: the dispatcher, %d threads and descriptors)",
			u.goroutines, u.threads, u.fds, before.goroutines, before.threads, before.fds, bound)
	}
	p, worst := p99(lat), slices.Max(lat)
	t.Logf("cancel → return over %d Waits: p99 %v (the worst wave's %v), max %v", n, p.Round(time.Microsecond), worstWave.Round(time.Microsecond), worst.Round(time.Microsecond))
	// The blocked Waits' threads sleep on until the work completes; then
	// nothing of the Waits is left.
	ok(t, s.Sync())
	settleUsage(t, "after the work completed", before, bound)
}

// TestWaitManyGPU measures, on a GPU, 1,000 concurrent Waits on 10 ms of
// work (all on one event, with one cancellable context, as a server's
// requests would wait for one batch): the process's CPU time over the wall
// time (per Wait, and for one Wait alone on the same work), the peak
// threads and descriptors, and how late each Wait returns after a Sync of
// the same event (a spinning driver wait, in a goroutine of its own) does.
// It logs the figures; it asserts only what holds on any machine: every
// Wait returns nil with the work complete, and the threads and
// descriptors stay within 64 of before. The fake driver skips it:
// TestLayerWaitScale checks the package's own costs there.
//
//	go test -run '^TestWaitManyGPU$' -v ./cuda_test
func TestWaitManyGPU(t *testing.T) {
	dev := gpu(t)
	if _, fake := fakeCounter("fakecuda_live_handles"); fake {
		t.Skip("skipping: measures the GPU's wake-ups; on the fake driver TestLayerWaitScale checks the package's own costs")
	}
	const n, work, rounds, bound = 1000, 10 * time.Millisecond, 20, 64
	// Threads: the Waits' polls are cgo calls that queue on the driver's
	// locks, and the runtime starts a thread for each P it takes from a
	// call that stays there, so the peak grows with GOMAXPROCS (+35 with
	// 16 Ps, +154 with 32 on an H100 host); a thread per Wait would be n.
	threadBound := bound + 4*runtime.GOMAXPROCS(0)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// One Wait alone: its CPU share.
	var cpu1, wall1 time.Duration
	for r := range rounds + 2 {
		ok(t, s.Spin(work))
		ok(t, s.Record(e))
		c0, w0 := cpuTime(), time.Now()
		ok(t, e.Wait(ctx))
		if r >= 2 { // the first make the context's waiter
			cpu1 += cpuTime() - c0
			wall1 += time.Since(w0)
		}
	}

	// n workers, each waiting once per round.
	runtime.GC()
	before := readUsage(t)
	stats := cuda.ReadWaiterStats()
	start := make([]chan struct{}, 2*rounds)
	for i := range start {
		start[i] = make(chan struct{})
	}
	returned := make([][]time.Time, 2*rounds)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		go func() {
			for r := range start {
				<-start[r]
				err := e.Wait(ctx)
				returned[r][i] = time.Now()
				if err == nil && r >= rounds { // not where CPU is measured
					if done, qerr := e.Query(); !done || qerr != nil {
						err = fmt.Errorf("Wait returned nil before the work completed (%v, %v)", done, qerr)
					}
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
				wg.Done()
			}
		}()
	}
	var cpuN, wallN time.Duration
	var late []time.Duration
	var top usage
	for r := range start {
		returned[r] = make([]time.Time, n)
		latency := r >= rounds // the second half: against a Sync, with usage sampled
		var stop chan struct{}
		var peaks <-chan usage
		if latency {
			stop = make(chan struct{})
			peaks = peak(t, stop)
		}
		wg.Add(n)
		ok(t, s.Spin(work))
		ok(t, s.Record(e))
		c0, w0 := cpuTime(), time.Now()
		synced := make(chan time.Time, 1)
		if latency {
			go func() {
				err := e.Sync()
				synced <- time.Now()
				if err != nil {
					errs <- err
				}
			}()
		}
		close(start[r])
		wg.Wait()
		if !latency {
			cpuN += cpuTime() - c0
			wallN += time.Since(w0)
			continue
		}
		close(stop)
		u := <-peaks
		top = usage{max(top.goroutines, u.goroutines), max(top.threads, u.threads), max(top.fds, u.fds)}
		ts := <-synced
		for _, rt := range returned[r] {
			late = append(late, rt.Sub(ts))
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := cuda.ReadWaiterStats()
	slices.Sort(late)
	share1 := 100 * float64(cpu1) / float64(wall1)
	shareN := 100 * float64(cpuN) / float64(wallN)
	t.Logf("one Wait on %v: %.2f %% of a core", work, share1)
	t.Logf("%d concurrent Waits on %v: %.1f %% of a core in all, %.4f %% per Wait; %d blocked and %d polled over %d rounds",
		n, work, shareN, shareN/n, st.BlockedTotal-stats.BlockedTotal, st.PolledTotal-stats.PolledTotal, 2*rounds)
	t.Logf("%d concurrent Waits: return after Sync's: median %v, p99 %v, max %v (min %v)", n,
		late[len(late)/2].Round(time.Microsecond), p99(slices.Clone(late)).Round(time.Microsecond),
		late[len(late)-1].Round(time.Microsecond), late[0].Round(time.Microsecond))
	t.Logf("%d concurrent Waits: peak threads %d, descriptors %d, goroutines %d (before: %d, %d, %d); waiter threads now %d",
		n, top.threads, top.fds, top.goroutines, before.threads, before.fds, before.goroutines, st.Threads)
	if top.threads > before.threads+threadBound || top.fds > before.fds+bound {
		t.Errorf("%d concurrent Waits: %d threads and %d descriptors at the peak, %d and %d before: more than %d threads or %d descriptors above",
			n, top.threads, top.fds, before.threads, before.fds, threadBound, bound)
	}
}
