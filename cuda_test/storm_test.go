//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// stormErr reports whether err is one the storm's random calls may meet:
// objects closed by other goroutines (or with their Device), cancelled
// waits, timing of events not recorded, not complete or without timing,
// and an event recorded on a stream of the other device.
func stormErr(err error) bool {
	for _, target := range []error{cuda.ErrClosed, context.DeadlineExceeded, context.Canceled, cuda.ErrNotReady,
		cuda.ErrNotRecorded, cuda.ErrTimingDisabled, cuda.ErrWrongDevice} {
		if errors.Is(err, target) {
			return true
		}
	}
	return err == nil
}

// TestLayerStorm: random calls of every kind from 16 goroutines
// (CUDAGEN_STORM_G) on shared Devices, streams, events and buffers
// (allocated or from a pool; copied and set synchronously and on streams,
// through views at times, and between buffers), which
// goroutines close and replace while others use them, Devices included
// (GetDevice, AdoptContext of an open one, Close, on each device), in
// rounds of stormCalls calls per goroutine, CUDAGEN_STORM rounds (default
// 4; docs/runs/fake-driver-runs.md records the long runs). At the end of
// each round everything is closed, and then every context's Done must
// close, and on the fake driver no primary context may stay retained, no
// event, stream, device memory or page-locked staging memory alive, no call
// may have run on a released context or with a destroyed handle, and
// Leaked must not have grown. Only documented errors are allowed. The seed
// of a failed round is logged (CUDAGEN_STORM_SEED replays it).
func TestLayerStorm(t *testing.T) {
	rounds := 4
	if env := os.Getenv("CUDAGEN_STORM"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 1 {
			t.Fatalf("CUDAGEN_STORM=%q: want a positive count of rounds", env)
		}
		rounds = n
	}
	workers := 16
	if g := os.Getenv("CUDAGEN_STORM_G"); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 1 {
			t.Fatalf("CUDAGEN_STORM_G=%q: want a positive count", g)
		}
		workers = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CUDAGEN_STORM_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CUDAGEN_STORM_SEED=%q: %v", s, err)
		}
		seed = v
	}
	ndev := 1
	if n, err := cuda.DeviceCount(); err == nil && n > 1 {
		ndev = 2
	}
	gpu(t).Close()
	released(t)
	before := readCounters()
	allocs0, _ := fakeCounter("fakecuda_live_allocs")
	hosts0, _ := fakeCounter("fakecuda_live_host_allocs")
	leaked := cuda.Leaked()
	var ops int64
	for round := range rounds {
		rs := seed + uint64(round)
		n, ok := stormRound(t, rs, workers, ndev)
		ops += n
		if !ok {
			t.Fatalf("round %d failed: replay it with CUDAGEN_STORM_SEED=%d CUDAGEN_STORM_G=%d CUDAGEN_STORM=1", round, rs, workers)
		}
		if c := readCounters(); c.ok && (c.retains != 0 || c.live != before.live || c.released != before.released || c.stale != before.stale) {
			t.Fatalf("round %d (CUDAGEN_STORM_SEED=%d): with every Device closed and every Done closed, %d primary context retains, %d events and streams alive (%d before), %d calls on a released context, %d with a destroyed handle",
				round, rs, c.retains, c.live, before.live, c.released-before.released, c.stale-before.stale)
		}
		if d := cuda.Leaked() - leaked; d != 0 {
			t.Fatalf("round %d: Leaked grew by %d with every object closed", round, d)
		}
		allocs, fake := fakeCounter("fakecuda_live_allocs")
		hosts, _ := fakeCounter("fakecuda_live_host_allocs")
		if fake && (allocs != allocs0 || hosts != hosts0) {
			t.Fatalf("round %d (CUDAGEN_STORM_SEED=%d): with every context released, %d device allocations and %d page-locked staging allocations alive (%d and %d before)",
				round, rs, allocs, hosts, allocs0, hosts0)
		}
	}
	t.Logf("storm: %d goroutines, %d rounds: %d operations, every context released and nothing alive after each round (on the fake driver: %v)",
		workers, rounds, ops, before.ok)
}

// stormCalls is how many random calls each goroutine makes in a round.
const stormCalls = 1500

// stormBufLen is the length of the storm's buffers.
const stormBufLen = 256

// stormRound is one round of TestLayerStorm: stormCalls random calls per
// goroutine, then
// everything closed and every context's Done waited for. It returns the
// calls made, and false if a call met an undocumented error or a Done did
// not close within a minute.
func stormRound(t *testing.T, seed uint64, workers, ndev int) (int64, bool) {
	const slots = 8
	var (
		devs    [4]atomic.Pointer[cuda.Device] // two per device ordinal
		events  [slots]atomic.Pointer[cuda.Event]
		streams [slots]atomic.Pointer[cuda.Stream]
		buffers [slots]atomic.Pointer[cuda.Buffer[float32]]
		mu      sync.Mutex
		opened  []*cuda.Device // every Device of the round, for Done
		bad     []string
		ops     atomic.Int64
	)
	report := func(what string, err error) {
		if stormErr(err) {
			return
		}
		mu.Lock()
		if len(bad) < 10 {
			bad = append(bad, fmt.Sprintf("%s: %v", what, err))
		}
		mu.Unlock()
	}
	keep := func(d *cuda.Device) {
		mu.Lock()
		opened = append(opened, d)
		mu.Unlock()
	}
	openDev := func(r *rand.Rand, i int) {
		ord := i % ndev
		d, err := cuda.GetDevice(ord)
		if err != nil {
			report("get device", err)
			return
		}
		keep(d)
		if r.IntN(3) == 0 {
			// Adopt the context of the Device just opened (which keeps it
			// retained meanwhile), then let that one go.
			a, err := cuda.AdoptContext(d.Context())
			report("adopt context", err)
			if err == nil {
				keep(a)
				report("close the adopted context's first Device", d.Close())
				d = a
			}
		}
		if old := devs[i].Swap(d); old != nil {
			report("close device", old.Close())
		}
	}
	r0 := rand.New(rand.NewPCG(seed, 0))
	for i := range devs {
		openDev(r0, i)
	}
	anyDev := func(r *rand.Rand) *cuda.Device { return devs[r.IntN(len(devs))].Load() }
	run := func(g int) {
		r := rand.New(rand.NewPCG(seed, uint64(g)+1))
		for range stormCalls {
			i := r.IntN(slots)
			e, s := events[i].Load(), streams[r.IntN(slots)].Load()
			switch r.IntN(24) {
			case 0, 1:
				x, err := anyDev(r).NewEvent(cuda.EventOptions{Timing: r.IntN(2) == 0, BlockingSync: r.IntN(2) == 0})
				report("new event", err)
				if err == nil {
					if old := events[i].Swap(x); old != nil {
						report("close event", old.Close())
					}
				}
			case 2:
				x, err := anyDev(r).NewStream(cuda.StreamOptions{Blocking: r.IntN(2) == 0})
				report("new stream", err)
				if err == nil {
					if old := streams[i].Swap(x); old != nil {
						report("close stream", old.Close())
					}
				}
			case 3, 4, 5:
				if e != nil && s != nil {
					report("record", s.Record(e))
				}
			case 6:
				if e != nil {
					_, err := e.Query()
					report("query", err)
				}
			case 7:
				if e != nil {
					report("sync", e.Sync())
				}
			case 8:
				if e != nil {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(300))*time.Microsecond)
					if r.IntN(4) == 0 {
						report("waitchan", <-e.WaitChan(ctx))
					} else {
						report("wait", e.Wait(ctx))
					}
					cancel()
				}
			case 9:
				if start := events[(i+1)%slots].Load(); e != nil && start != nil {
					_, err := e.Sub(start)
					report("sub", err)
				}
			case 10:
				if s != nil {
					report("spin", s.Spin(time.Duration(r.IntN(50))*time.Microsecond))
				}
			case 11:
				if s != nil && e != nil {
					report("stream wait", s.Wait(e))
				}
			case 12:
				if s != nil {
					x, err := s.RecordEvent(cuda.EventOptions{})
					report("record event", err)
					if err == nil {
						report("close recorded event", x.Close())
					}
				}
			case 13:
				if o := streams[(i+1)%slots].Load(); s != nil && o != nil {
					report("wait stream", s.WaitStream(o))
				}
			case 14: // an event of the stream's Device, recorded and closed at once
				if s != nil {
					x, err := s.Device().NewEvent(cuda.EventOptions{})
					report("short-lived event", err)
					if err == nil {
						report("short-lived record", s.Record(x))
						report("short-lived close", x.Close())
					}
				}
			case 15: // one of any Device, closed at once
				x, err := anyDev(r).NewEvent(cuda.EventOptions{})
				report("short-lived event", err)
				if err == nil {
					report("short-lived close", x.Close())
				}
			case 16:
				if r.IntN(16) == 0 {
					openDev(r, r.IntN(len(devs)))
				}
			case 17:
				if x := events[i].Swap(nil); x != nil {
					report("close event", x.Close())
				}
			case 18:
				if x := streams[i].Swap(nil); x != nil {
					report("close stream", x.Close())
				}
			case 19:
				_, err := anyDev(r).Name()
				report("device name", err)
			case 20: // a buffer, allocated or from the pool on a stream
				var x *cuda.Buffer[float32]
				var err error
				if s != nil && r.IntN(2) == 0 {
					x, err = cuda.AllocAsync[float32](s, stormBufLen)
					report("alloc async", err)
				} else {
					x, err = cuda.Alloc[float32](anyDev(r), stormBufLen)
					report("alloc", err)
				}
				if err == nil {
					if old := buffers[i].Swap(x); old != nil {
						report("close buffer", old.Close())
					}
				}
			case 21: // copies and sets, through a view at times
				b := buffers[i].Load()
				if b == nil {
					break
				}
				var view *cuda.Buffer[float32]
				if r.IntN(3) == 0 {
					v, err := b.Slice(0, stormBufLen)
					report("slice", err)
					if err != nil {
						break
					}
					b, view = v, v
				}
				host := make([]float32, stormBufLen) // CopyToAsync writes it after returning
				switch {
				case s == nil:
					report("copy from", b.CopyFrom(host))
				case r.IntN(4) == 0:
					report("copy from async", b.CopyFromAsync(s, host))
				case r.IntN(3) == 0:
					report("copy to async", b.CopyToAsync(s, host))
				case r.IntN(2) == 0:
					report("set async", b.SetAsync(s, 1))
				default:
					report("set", b.Set(2))
				}
				if view != nil {
					report("close view", view.Close())
				}
			case 22:
				if o := buffers[(i+1)%slots].Load(); s != nil && o != nil {
					if b := buffers[i].Load(); b != nil {
						report("copy between buffers", b.CopyFromBuffer(s, o))
					}
				}
			case 23:
				if x := buffers[i].Swap(nil); x != nil {
					report("close buffer", x.Close())
				}
			}
			ops.Add(1)
		}
	}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() { run(g) })
	}
	wg.Wait()
	// Everything closed, in an order of its own each round: the objects,
	// then the Devices; a Device closed first leaves its objects closed.
	closeObjects := func() {
		for i := range slots {
			if x := events[i].Swap(nil); x != nil {
				report("close event", x.Close())
			}
			if x := streams[i].Swap(nil); x != nil {
				report("close stream", x.Close())
			}
		}
		for i := range buffers {
			if x := buffers[i].Swap(nil); x != nil {
				report("close buffer", x.Close())
			}
		}
	}
	devicesFirst := seed%2 == 0
	if !devicesFirst {
		closeObjects()
	}
	for i := range devs {
		if x := devs[i].Swap(nil); x != nil {
			report("close device", x.Close())
		}
	}
	if devicesFirst {
		closeObjects()
	}
	good := true
	for _, d := range opened {
		select {
		case <-d.Done():
		case <-time.After(time.Minute):
			t.Errorf("a context's Done was not closed a minute after its last Device closed (%v)", d)
			good = false
		}
	}
	for _, b := range bad {
		t.Error(b)
		good = false
	}
	return ops.Load(), good
}
