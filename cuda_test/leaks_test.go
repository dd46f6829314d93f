//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// Tolerances of the soak and the create+close loop: the process's resident
// memory and the device's free memory (cuMemGetInfo) must come back to
// within these of their level after the warm-up.
// Under -race the race detector's own memory (shadow memory, per-goroutine
// state, outside the Go heap) grows the RSS too, with the number of
// goroutines and operations: +205 MiB over a 60s soak on the H100 with the
// Go heap flat (1.0 → 1.1 MiB). So under -race the soak reports the RSS and
// asserts the Go heap; the build without -race asserts the RSS (run both:
// the race build finds races, the other leaks). The create+close loop,
// which starts no goroutine, stays flat under -race too and is asserted in
// both builds.
const (
	rssTolerance    = 64 << 20
	heapTolerance   = 16 << 20
	devMemTolerance = 64 << 20
)

// heapLive is the Go heap in use after a collection.
func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// rss is the process's resident set size, from /proc/self/statm.
func rss(tb testing.TB) int64 {
	tb.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		tb.Skipf("skipping: needs /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// settledRSS collects garbage and returns memory to the system first.
func settledRSS(tb testing.TB) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return rss(tb)
}

func devFree(tb testing.TB, dev *cuda.Device) uint64 {
	tb.Helper()
	free, _, err := memInfo(dev.Context())
	if err != nil {
		tb.Fatalf("device free memory: %v", err)
	}
	return free
}

// One million events created and closed: the process's memory stays flat
// (RSS within rssTolerance of its level after the first 10%), and nothing
// leaks. On the fake driver (CI, under -race) it runs 100,000.
func TestLayerCreateCloseMillion(t *testing.T) {
	dev := gpu(t)
	n := 1_000_000
	if readCounters().ok {
		n = 100_000
	}
	leaked := cuda.Leaked()
	var base, peak int64
	for i := 0; i < n; i++ {
		e, err := dev.NewEvent(cuda.EventOptions{})
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if err := e.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
		if (i+1)%(n/10) == 0 {
			r := settledRSS(t)
			if base == 0 {
				base = r
			}
			peak = max(peak, r)
		}
	}
	t.Logf("%d create+close: RSS %.1f MiB after 10%%, peak %.1f MiB at the checkpoints (tolerance %d MiB, asserted without -race; race detector on: %v)", n, float64(base)/(1<<20), float64(peak)/(1<<20), rssTolerance>>20, raceEnabled)
	// Not under -race: its runtime keeps state for every address of C
	// memory touched atomically (the package's state words, cuda/internal/
	// hazard), which it never learns is freed or reused; the plain build
	// asserts it.
	if peak-base > rssTolerance && !raceEnabled {
		t.Errorf("RSS grew by %.1f MiB over %d create+close", float64(peak-base)/(1<<20), n)
	}
	if d := cuda.Leaked() - leaked; d != 0 {
		t.Errorf("Leaked grew by %d with every event closed", d)
	}
}

// soakErr reports whether err is one the soak's mix of calls may meet:
// objects closed by another goroutine, cancelled waits, Sub on events not
// recorded or not complete.
func soakErr(err error) bool {
	for _, target := range []error{cuda.ErrClosed, context.DeadlineExceeded, context.Canceled, cuda.ErrNotReady, cuda.ErrNotRecorded} {
		if errors.Is(err, target) {
			return true
		}
	}
	return err == nil
}

// TestLayerSoak runs CUDAGEN_SOAK (a duration, e.g. 10m) of 64 goroutines
// (CUDAGEN_SOAK_G) mixing every call on shared and own objects: Record,
// Query, Sync, Wait with and without cancellation, WaitChan, Sub,
// Stream.Wait, Close of objects other goroutines use, short-lived events, and
// Devices opened and closed. Only documented errors; at the end Leaked is
// unchanged, the process's RSS, the Go heap and the device's free memory are
// back within rssTolerance (without -race: see above), heapTolerance and
// devMemTolerance of their level after a warm-up, and on
// the fake driver no call ran on a released context or with a destroyed
// handle. Skipped unless CUDAGEN_SOAK is set.
func TestLayerSoak(t *testing.T) {
	env := os.Getenv("CUDAGEN_SOAK")
	if env == "" {
		t.Skip("skipping: set CUDAGEN_SOAK to a duration (e.g. CUDAGEN_SOAK=10m) to run the soak")
	}
	dur, err := time.ParseDuration(env)
	if err != nil {
		t.Fatalf("CUDAGEN_SOAK=%q: %v", env, err)
	}
	workers := 64
	if g := os.Getenv("CUDAGEN_SOAK_G"); g != "" {
		if workers, err = strconv.Atoi(g); err != nil || workers < 1 {
			t.Fatalf("CUDAGEN_SOAK_G=%q: want a positive count", g)
		}
	}
	released(t)
	dev := gpu(t)
	before := readCounters()
	leaked := cuda.Leaked()

	// The shared objects: slots that a goroutine replaces from time to
	// time, closing the old one while others use it.
	const nShared = 8
	var events [nShared]atomic.Pointer[cuda.Event]
	var streams [nShared]atomic.Pointer[cuda.Stream]
	newShared := func(i int) error {
		e, err := dev.NewEvent(cuda.EventOptions{Timing: true, BlockingSync: i%2 == 1})
		if err != nil {
			return err
		}
		s, err := dev.NewStream()
		if err != nil {
			e.Close()
			return err
		}
		if old := events[i].Swap(e); old != nil {
			old.Close()
		}
		if old := streams[i].Swap(s); old != nil {
			old.Close()
		}
		return nil
	}
	for i := range nShared {
		ok(t, newShared(i))
	}

	var ops, bad atomic.Int64
	var errMu sync.Mutex
	var errs []string
	report := func(what string, err error) {
		if soakErr(err) {
			return
		}
		bad.Add(1)
		errMu.Lock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf("%s: %v", what, err))
		}
		errMu.Unlock()
	}

	run := func(stop <-chan struct{}, g int) {
		r := rand.New(rand.NewPCG(uint64(g), 1))
		own, err := dev.NewStream()
		if err != nil {
			report("own stream", err)
			return
		}
		defer own.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			i := r.IntN(nShared)
			e, s := events[i].Load(), streams[i].Load()
			e2 := events[(i+1)%nShared].Load()
			switch op := r.IntN(16); op {
			case 0:
				report("record", s.Record(e))
			case 1:
				_, err := e.Query()
				report("query", err)
			case 2:
				report("record on own stream", own.Record(e))
				report("sync", e.Sync())
			case 3:
				report("wait", e.Wait(context.Background()))
			case 4:
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(200))*time.Microsecond)
				report("cancelled wait", e.Wait(ctx))
				cancel()
			case 5:
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				select {
				case err := <-e.WaitChan(ctx):
					report("waitchan", err)
				case <-time.After(10 * time.Second):
					report("waitchan", errors.New("no result in 10s"))
				}
				cancel()
			case 6:
				_, err := e.Sub(e2)
				report("sub", err)
			case 7:
				report("stream wait", own.Wait(e))
			case 8:
				report("spin", s.Spin(time.Duration(r.IntN(100))*time.Microsecond))
			case 9:
				p, err := dev.NewEvent(cuda.EventOptions{})
				if err != nil {
					report("short-lived event", err)
					break
				}
				report("short-lived record", own.Record(p))
				if r.IntN(2) == 0 {
					report("short-lived wait", p.Wait(context.Background()))
				}
				report("short-lived close", p.Close())
			case 10:
				if r.IntN(64) == 0 {
					report("replace shared", newShared(i))
				}
			case 11:
				if r.IntN(16) == 0 { // a Device of our own, opened and closed
					d, err := cuda.GetDevice(0)
					if err != nil {
						report("get device", err)
						break
					}
					x, err := d.NewEvent(cuda.EventOptions{})
					report("own device event", err)
					if err == nil {
						report("own device record", d.DefaultStream().Record(x))
						report("own device wait", x.Wait(context.Background()))
						if r.IntN(2) == 0 {
							report("own device event close", x.Close())
							report("close own device", d.Close())
						} else { // closing the device first leaves the event usable: dev is open
							report("close own device", d.Close())
							report("own device event after its Device closed", x.Sync())
							report("own device event close", x.Close())
						}
					} else {
						report("close own device", d.Close())
					}
				}
			case 12:
				report("stream sync", own.Sync())
			case 13:
				_, err := s.Query()
				report("stream query", err)
			case 14:
				x, err := own.RecordEvent(cuda.EventOptions{})
				report("record event", err)
				if err == nil {
					report("close new event", x.Close())
				}
			case 15:
				report("wait stream", own.WaitStream(s))
			}
			ops.Add(1)
		}
	}
	phase := func(d time.Duration) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); run(stop, g) }()
		}
		time.Sleep(d)
		close(stop)
		wg.Wait()
	}

	// Warm-up: loads the spin kernel, grows the pools and the heap.
	phase(min(dur/10, 10*time.Second))
	ok(t, dev.Sync())
	rss0, heap0, free0 := settledRSS(t), heapLive(), devFree(t, dev)
	warm := ops.Load()
	t0 := time.Now()
	phase(dur)
	elapsed := time.Since(t0)
	ok(t, dev.Sync())
	for i := range nShared {
		ok(t, events[i].Load().Close())
		ok(t, streams[i].Load().Close())
	}
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	rss1, heap1, free1 := settledRSS(t), heapLive(), devFree(t, dev)
	n := ops.Load() - warm
	t.Logf("soak: %d goroutines, %v: %d operations (%.0f/s), %d undocumented errors", workers, elapsed.Round(time.Second), n, float64(n)/elapsed.Seconds(), bad.Load())
	t.Logf("RSS %.1f → %.1f MiB (tolerance %d MiB, asserted without -race; race detector on: %v); Go heap %.1f → %.1f MiB (tolerance %d MiB); device free %.1f → %.1f MiB (tolerance %d MiB)",
		float64(rss0)/(1<<20), float64(rss1)/(1<<20), rssTolerance>>20, raceEnabled, float64(heap0)/(1<<20), float64(heap1)/(1<<20), heapTolerance>>20,
		float64(free0)/(1<<20), float64(free1)/(1<<20), devMemTolerance>>20)
	for _, e := range errs {
		t.Error(e)
	}
	if d := cuda.Leaked() - leaked; d != 0 {
		t.Errorf("Leaked grew by %d", d)
	}
	if rss1-rss0 > rssTolerance && !raceEnabled {
		t.Errorf("RSS grew by %.1f MiB", float64(rss1-rss0)/(1<<20))
	}
	if heap1-heap0 > heapTolerance {
		t.Errorf("Go heap grew by %.1f MiB", float64(heap1-heap0)/(1<<20))
	}
	if int64(free0)-int64(free1) > devMemTolerance {
		t.Errorf("device free memory fell by %.1f MiB", float64(int64(free0)-int64(free1))/(1<<20))
	}
	if now := readCounters(); now.ok {
		if now.released != before.released || now.stale != before.stale {
			t.Errorf("%d calls on a released context, %d with a destroyed handle", now.released-before.released, now.stale-before.stale)
		}
		// The device is still open: the cuda package keeps the driver
		// handles of closed events known complete for reuse, at most
		// keptMax (cuda/recycle.go); any more is a leak.
		if d := now.live - before.live; d < 0 || d > keptMax {
			t.Errorf("events and streams alive in the driver: %d, %d before (at most %d event handles are kept for reuse)", now.live, before.live, keptMax)
		}
	}
}

// keptMax is the most event handles the cuda package keeps for reuse per
// context: 64 per flag set, 8 flag sets (cuda/recycle.go).
const keptMax = 64 * 8
