//go:build cgo && linux

package gputest

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// Close under contention: how long Close keeps its caller, measured
// per call while other goroutines create, record and close (docs/
// performance.md, "Close under contention").
//
// Each worker goroutine is locked to its thread, so that whatever makes a
// Close wait shows in its thread's counters: a Close that sleeps (on a lock,
// behind another goroutine's flush) makes its thread switch out
// voluntarily; one that the kernel takes the CPU from, as it does with more
// runnable threads than cores whatever the Go code does, switches
// involuntarily. The figures (p99 and max, in µs) are the wall time of the
// Closes the kernel did not preempt; the preempted ones are counted apart
// (os-preempted), and the Closes that slept are counted (closes-slept).

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's counters.
const rusageThread = 1

// closeTimes collects one worker's Close samples.
type closeTimes struct {
	wall             []time.Duration // Closes the kernel did not preempt
	slept, preempted int
}

// time runs close (a Close) and records how long it kept the caller.
func (c *closeTimes) time(close func() error) error {
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(rusageThread, &r0)
	t0 := time.Now()
	err := close()
	w := time.Since(t0)
	_ = syscall.Getrusage(rusageThread, &r1)
	if r1.Nivcsw != r0.Nivcsw {
		c.preempted++
		return err
	}
	if r1.Nvcsw != r0.Nvcsw {
		c.slept++
	}
	c.wall = append(c.wall, w)
	return err
}

// report adds the Close figures of all workers to b.
func reportCloseTimes(b *testing.B, all []*closeTimes) {
	var wall []time.Duration
	slept, preempted := 0, 0
	for _, c := range all {
		wall = append(wall, c.wall...)
		slept += c.slept
		preempted += c.preempted
	}
	if len(wall) == 0 {
		return
	}
	slices.Sort(wall)
	q := func(p float64) float64 {
		return float64(wall[min(len(wall)-1, int(p*float64(len(wall))))]) / 1e3
	}
	b.ReportMetric(q(0.99), "close-p99-µs")
	b.ReportMetric(q(0.999), "close-p99.9-µs")
	b.ReportMetric(float64(wall[len(wall)-1])/1e3, "close-max-µs")
	b.ReportMetric(float64(len(wall)), "closes")
	b.ReportMetric(float64(slept), "closes-slept")
	b.ReportMetric(float64(preempted), "os-preempted")
}

// setHold sets the fake driver's length of each call on an event or stream
// (spinning, fakecuda_hold_ns); false on a real driver. It returns the old
// value's restore.
func setHold(d time.Duration) (restore func(), ok bool) {
	old, fake := fakeCounter("fakecuda_hold_ns")
	if !fake || !fakeSet("fakecuda_hold_ns", int64(d)) {
		return func() {}, false
	}
	return func() { fakeSet("fakecuda_hold_ns", old) }, true
}

// BenchmarkCloseContention: 8 and 32 goroutines, each with a stream of its
// own, create an event, record it, query it every other time and close it;
// every 16th round one also creates and closes a stream, every 64th four
// more events (created, recorded, then closed one after another), every
// 128th a Device of its own (an event on it, then the Device closed
// while the shared one stays open). Every Close is timed. The driver's calls
// on events and streams take 0 or 200 µs (the fake driver's hold, spinning:
// run it with CUDAGEN_LIBCUDA pointing at the fake; on a real driver only
// the 0 µs cases run, with the driver's own times). Run it with a fixed
// count, -benchtime 4000x, so that each case has enough Closes for its p99.9.
func BenchmarkCloseContention(b *testing.B) {
	dev := gpu(b)
	for _, hold := range []time.Duration{0, 200 * time.Microsecond} {
		for _, workers := range []int{8, 32} {
			b.Run(fmt.Sprintf("call=%v/goroutines=%d", hold, workers), func(b *testing.B) {
				restore, fake := setHold(hold)
				defer restore()
				if hold != 0 && !fake {
					b.Skip("skipping: calls of a set length need the fake driver (CUDAGEN_LIBCUDA=libfakecuda.so)")
				}
				n := max(1, b.N/workers)
				all := make([]*closeTimes, workers)
				errs := make(chan error, workers)
				var wg sync.WaitGroup
				b.ResetTimer()
				for w := range workers {
					c := &closeTimes{wall: make([]time.Duration, 0, n+n/8+8)}
					all[w] = c
					wg.Go(func() {
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
						if err := closeWorker(dev, n, w, c); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				reportCloseTimes(b, all)
				ok(b, dev.Sync())
			})
		}
	}
}

// closeWorker is one goroutine of BenchmarkCloseContention: n rounds.
func closeWorker(dev *cuda.Device, n, w int, c *closeTimes) error {
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	opts := []cuda.EventOptions{{}, {Timing: true}, {BlockingSync: true}, {}}
	for i := range n {
		e, err := dev.NewEvent(opts[(i+w)%len(opts)])
		if err != nil {
			return err
		}
		if err := s.Record(e); err != nil {
			return err
		}
		if i%2 == 0 {
			if _, err := e.Query(); err != nil {
				return err
			}
		}
		if err := c.time(e.Close); err != nil {
			return err
		}
		if i%16 == 15 {
			x, err := dev.NewStream()
			if err != nil {
				return err
			}
			y, err := dev.NewEvent(cuda.EventOptions{})
			if err != nil {
				return err
			}
			if err := x.Record(y); err != nil {
				return err
			}
			if err := c.time(y.Close); err != nil {
				return err
			}
			if err := c.time(x.Close); err != nil {
				return err
			}
		}
		if i%64 == 63 {
			var got [4]*cuda.Event
			for j := range got {
				var err error
				if got[j], err = dev.NewEvent(cuda.EventOptions{}); err != nil {
					return err
				}
				if err := s.Record(got[j]); err != nil {
					return err
				}
			}
			for _, e := range got {
				if err := c.time(e.Close); err != nil {
					return err
				}
			}
		}
		if i%128 == 127 {
			d, err := cuda.GetDevice(dev.Ordinal())
			if err != nil {
				return err
			}
			x, err := d.NewEvent(cuda.EventOptions{})
			if err != nil {
				return err
			}
			if err := d.DefaultStream().Record(x); err != nil {
				return err
			}
			if err := c.time(d.Close); err != nil {
				return err
			}
			if err := c.time(x.Close); err != nil {
				return err
			}
		}
	}
	return c.time(s.Close)
}

// BenchmarkLastDeviceClose: the last Device of a context closes with 10,000
// events (a quarter of them recorded) and 100 streams open, with the
// driver's calls on events and streams taking 0 or 200 µs (the fake's hold;
// on a real driver only 0 runs). Reported: the Close's wall time and the
// process's CPU time during it (close-cpu-µs), and how long the context
// took to be released after it (release-ms, on the fake driver).
func BenchmarkLastDeviceClose(b *testing.B) {
	gpu(b).Close()
	for _, hold := range []time.Duration{0, 200 * time.Microsecond} {
		b.Run(fmt.Sprintf("call=%v/events=10000", hold), func(b *testing.B) {
			restore, fake := setHold(hold)
			defer restore()
			if hold != 0 && !fake {
				b.Skip("skipping: calls of a set length need the fake driver (CUDAGEN_LIBCUDA=libfakecuda.so)")
			}
			var wall, cpu, release []time.Duration
			b.StopTimer()
			for range b.N {
				waitReleased(b)
				dev, err := cuda.GetDevice(0)
				ok(b, err)
				s := must[*cuda.Stream](b)(dev.NewStream())
				var keep []any
				for i := range 10000 {
					e := must[*cuda.Event](b)(dev.NewEvent(cuda.EventOptions{}))
					if i%4 == 0 {
						ok(b, s.Record(e))
					}
					keep = append(keep, e)
				}
				for range 100 {
					keep = append(keep, must[*cuda.Stream](b)(dev.NewStream()))
				}
				ok(b, s.Sync())
				b.StartTimer()
				c0, w0 := processCPU(), time.Now()
				ok(b, dev.Close())
				w, c := time.Since(w0), processCPU()-c0
				b.StopTimer()
				wall, cpu = append(wall, w), append(cpu, c)
				t0 := time.Now()
				waitReleased(b)
				if fake {
					release = append(release, time.Since(t0))
				}
				runtime.KeepAlive(keep)
			}
			b.ReportMetric(float64(slices.Max(wall))/1e3, "close-max-µs")
			b.ReportMetric(float64(slices.Max(cpu))/1e3, "close-cpu-µs")
			if len(release) > 0 {
				b.ReportMetric(float64(slices.Max(release))/1e6, "release-ms")
			}
		})
	}
}

// waitReleased waits, on the fake driver, until no primary context is
// retained and no event or stream is alive: the state after every Device
// closed and the package's background work done. A minute without it is a
// failure (a leak), never a figure.
func waitReleased(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c := readCounters()
		if !c.ok || c.retains == 0 && c.live == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("with every Device closed, %d primary context retains and %d events and streams alive after a minute", c.retains, c.live)
		}
		time.Sleep(time.Millisecond)
	}
}
