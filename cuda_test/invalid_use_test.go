//go:build cgo

package gputest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// The misuse a careful user or a tester tries, each case checked for no
// panic, no hang (a watchdog ends the process with every goroutine's stack)
// and no spin (the process's CPU time during Close), and, on the fake
// driver, for no call on a released context and none with a destroyed
// handle. CI runs it on the fake driver (fakedriver_test.go), whose spin
// kernel keeps a stream busy like the GPU's; the GPU machine runs it too.

// pending is how long the work queued in these cases takes: long against
// a busy machine's stalls, so that a Close that does not wait for it
// returns before it completes however loaded the machine is.
const pending = time.Second

// queued queues d of work on s (its spin kernel) and returns the earliest
// time it can complete: the time before it was queued, plus d.
func queued(t *testing.T, s *cuda.Stream, d time.Duration) time.Time {
	t.Helper()
	t0 := time.Now()
	ok(t, s.Spin(d))
	return t0.Add(d)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// prompt runs a Close (or any call that must not wait for queued work) and
// checks an order: it returned while the work queued before it was still
// pending, that is, before end (queued's). A Close that waited for the
// work, or spun until it completed, starts before end and returns after
// it. This is no bound on the call's speed: the work is long against a
// machine's stalls. A call that starts after end (the test's own steps
// before it took longer than the work, on a loaded machine) cannot show
// the order: that is logged, not judged. A zero end means nothing is
// pending: the call's wall and CPU time are only logged
// (TestLayerCloseWhileDestroyHeld holds a driver call to show that no Close
// waits for one).
func prompt(t *testing.T, what string, end time.Time, f func() error) error {
	t.Helper()
	c0, w0 := processCPU(), time.Now()
	err := f()
	w1 := time.Now()
	wall, cpu := w1.Sub(w0), processCPU()-c0
	t.Logf("%s: %v wall, %v CPU (process)", what, wall.Round(time.Microsecond), cpu.Round(time.Microsecond))
	if !end.IsZero() && !w0.Before(end) {
		t.Logf("%s started %v after the work queued before it could complete: the order is not shown", what, w0.Sub(end).Round(time.Microsecond))
		return err
	}
	if !end.IsZero() && !w1.Before(end) {
		t.Errorf("%s returned %v after the work queued before it could complete: it waited for the work (took %v wall, %v CPU)",
			what, w1.Sub(end).Round(time.Microsecond), wall.Round(time.Microsecond), cpu.Round(time.Microsecond))
	}
	return err
}

// counters are the fake driver's; ok is false on a real driver.
type counters struct {
	released, stale, live, retains int64
	ok                             bool
}

func readCounters() counters {
	var c counters
	c.released, c.ok = fakeCounter("fakecuda_released_calls")
	c.stale, _ = fakeCounter("fakecuda_stale_calls")
	c.live, _ = fakeCounter("fakecuda_live_handles")
	c.retains, _ = fakeCounter("fakecuda_retains")
	return c
}

// settle checks, on the fake driver, that no call ran on a released context
// or with a destroyed handle since before, and that the events and streams
// alive and the context retains return to before's (the destroys and the
// release may come from a goroutine finishing a call, so it waits up to 5s).
func settle(t *testing.T, before counters) {
	t.Helper()
	if !before.ok {
		t.Log("not on the fake driver: the released-context and destroyed-handle counts are checked there (CI)")
		return
	}
	var now counters
	for i := 0; i < 500; i++ {
		now = readCounters()
		if now.live == before.live && now.retains == before.retains {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if now.released != before.released {
		t.Errorf("%d driver calls ran on a released context", now.released-before.released)
	}
	if now.stale != before.stale {
		t.Errorf("%d driver calls ran with a destroyed handle", now.stale-before.stale)
	}
	if now.live != before.live {
		t.Errorf("events and streams alive in the driver: %d, %d before", now.live, before.live)
	}
	if now.retains != before.retains {
		t.Errorf("primary context retains: %d, %d before", now.retains, before.retains)
	}
}

// released waits, on the fake driver, for the contexts of the Devices closed
// so far to be released (Device.Close releases in the background), so that
// they are not counted in a case's before.
func released(t *testing.T) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if c := readCounters(); !c.ok || c.retains == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("primary contexts still retained with every Device closed: %d", readCounters().retains)
}

// is checks that err matches target and, if want is not empty, says it.
func is(t *testing.T, what string, err, target error, want string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got %v, want an error matching %v", what, err, target)
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "cuda: ") || want != "" && !strings.Contains(msg, want) {
		t.Errorf("%s: message %q lacks %q", what, msg, want)
	}
}

// noPanic runs f and turns a panic into a test error.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// onlyDevice opens device 0, which must be the only open Device of this
// process (the tests close theirs), so that closing it releases the context.
func onlyDevice(t *testing.T) *cuda.Device {
	t.Helper()
	gpu(t).Close()
	dev, err := cuda.GetDevice(0)
	ok(t, err)
	return dev
}

var misuseCases = []struct {
	name string
	run  func(t *testing.T)
}{
	{"LastDeviceCloseDuringWait", func(t *testing.T) {
		dev := onlyDevice(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		end := queued(t, s, pending)
		ok(t, s.Record(e))
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Add(3)
		go func() { defer wg.Done(); errs[0] = e.Wait(context.Background()) }()
		go func() { defer wg.Done(); errs[1] = e.Sync() }()
		go func() { defer wg.Done(); errs[2] = s.Sync() }()
		time.Sleep(20 * time.Millisecond)
		ok(t, prompt(t, "Device.Close with a Wait, a Sync and a Stream.Sync in flight", end, dev.Close))
		wg.Wait()
		for i, err := range errs {
			if err != nil && !errors.Is(err, cuda.ErrClosed) {
				t.Errorf("call %d in flight during Device.Close: %v", i, err)
			}
		}
		is(t, "Query after Device.Close", func() error { _, err := e.Query(); return err }(), cuda.ErrClosed, "event's device is closed")
		is(t, "Record after Device.Close", s.Record(e), cuda.ErrClosed, "closed")
		ok(t, e.Close())
		ok(t, s.Close())
	}},
	{"CloseDuringWaitAndSync", func(t *testing.T) {
		dev := gpu(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		defer s.Close()
		for _, opts := range []cuda.EventOptions{{}, {BlockingSync: true}} {
			e := must[*cuda.Event](t)(dev.NewEvent(opts))
			end := queued(t, s, pending)
			ok(t, s.Record(e))
			var wg sync.WaitGroup
			errs := make([]error, 4)
			wg.Add(4)
			go func() { defer wg.Done(); errs[0] = e.Wait(context.Background()) }()
			go func() { defer wg.Done(); errs[1] = e.Sync() }()
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				defer cancel()
				errs[2] = <-e.WaitChan(ctx)
			}()
			go func() { defer wg.Done(); errs[3] = s.Wait(e) }()
			time.Sleep(20 * time.Millisecond)
			ok(t, prompt(t, fmt.Sprintf("Event.Close (%+v) with Wait, Sync and WaitChan in flight", opts), end, e.Close))
			ok(t, e.Close())
			wg.Wait()
			for i, err := range errs {
				if err != nil && !errors.Is(err, cuda.ErrClosed) {
					t.Errorf("call %d in flight during Close: %v", i, err)
				}
			}
			is(t, "Sync after Close", e.Sync(), cuda.ErrClosed, "the event is closed")
		}
		ok(t, s.Sync())
	}},
	{"CloseAfterCancelledBlockingWait", func(t *testing.T) {
		dev := onlyDevice(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{BlockingSync: true}))
		end := queued(t, s, pending)
		ok(t, s.Record(e))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := e.Wait(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled Wait: %v", err)
		}
		ok(t, prompt(t, "Event.Close after a cancelled BlockingSync Wait", end, e.Close))
		ok(t, prompt(t, "Stream.Close with its work pending", end, s.Close))
		ok(t, prompt(t, "Device.Close with the driver's wait still blocked", end, dev.Close))
	}},
	{"WaitNilContextAndNilEvent", func(t *testing.T) {
		dev := gpu(t)
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		defer e.Close()
		var nilEvent *cuda.Event
		// A nil Context on purpose: the misuse under test.
		is(t, "Wait(nil)", e.Wait(nil), cuda.ErrInvalid, "nil Context") //lint:ignore SA1012 the misuse under test
		for name, ch := range map[string]<-chan error{
			"WaitChan(nil)":           e.WaitChan(nil), //lint:ignore SA1012 the misuse under test
			"nil event's WaitChan":    nilEvent.WaitChan(context.Background()),
			"zero Event's WaitChan":   new(cuda.Event).WaitChan(context.Background()),
			"nil event WaitChan(nil)": nilEvent.WaitChan(nil), //lint:ignore SA1012 the misuse under test
		} {
			select {
			case err := <-ch:
				is(t, name, err, cuda.ErrInvalid, "nil")
			case <-time.After(10 * time.Second):
				t.Errorf("%s never delivered", name)
			}
		}
	}},
	{"GetDeviceOutOfRange", func(t *testing.T) {
		gpu(t)
		for _, n := range []int{1 << 32, math.MinInt, -1, math.MaxInt32 + 1, math.MaxInt} {
			d, err := cuda.GetDevice(n)
			is(t, fmt.Sprintf("GetDevice(%d)", n), err, cuda.ErrInvalidDevice, fmt.Sprintf("no device %d", n))
			if d != nil {
				t.Errorf("GetDevice(%d) returned device %d", n, d.Ordinal())
				d.Close()
			}
		}
		_, err := cuda.GetDevice(math.MaxInt32)
		is(t, "GetDevice(MaxInt32)", err, cuda.ErrInvalidDevice, "")
	}},
	{"SpinOutOfRange", func(t *testing.T) {
		dev := gpu(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		defer s.Close()
		for _, d := range []time.Duration{-time.Second, -1, math.MinInt64, cuda.MaxSpin + 1, math.MaxInt64} {
			is(t, fmt.Sprintf("Spin(%v)", d), s.Spin(d), cuda.ErrInvalidOptions, "cuda.MaxSpin")
		}
		if done, err := s.Query(); !done || err != nil {
			t.Errorf("a refused Spin queued work: %v %v", done, err)
		}
	}},
	{"ReopenedDeviceOldEvent", func(t *testing.T) {
		dev := onlyDevice(t)
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		ok(t, dev.Close())
		dev2, err := cuda.GetDevice(0)
		ok(t, err)
		defer dev2.Close()
		s2 := must[*cuda.Stream](t)(dev2.NewStream())
		defer s2.Close()
		is(t, "old event recorded on a new stream", s2.Record(e), cuda.ErrClosed, "event's device is closed")
		is(t, "new stream waits for an old event", s2.Wait(e), cuda.ErrClosed, "event's device is closed")
		is(t, "old device's NewEvent", func() error { _, err := dev.NewEvent(cuda.EventOptions{}); return err }(), cuda.ErrClosed, "device is closed")
		is(t, "old device's default stream", dev.DefaultStream().Sync(), cuda.ErrClosed, "stream's device is closed")
		is(t, "old device's per-thread stream", dev.PerThreadStream().Sync(), cuda.ErrClosed, "stream's device is closed")
		is(t, "old device's AdoptStream", func() error { _, err := dev.AdoptStream(s2.Handle()); return err }(), cuda.ErrClosed, "device is closed")
		is(t, "old device's AdoptEvent", func() error { _, err := dev.AdoptEvent(e.Handle(), cuda.EventOptions{}); return err }(), cuda.ErrClosed, "device is closed")
		ok(t, e.Close())
	}},
	{"UnknownFlags", func(t *testing.T) {
		dev := gpu(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		defer s.Close()
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		defer e.Close()
		// The fake driver refuses any flag with ILLEGAL_STATE, so these
		// prove the check comes first.
		is(t, "Record with unknown flags", s.Record(e, cuda.RecordFlag(0x80)), cuda.ErrInvalidOptions, "unknown record flags 0x80")
		is(t, "Event.Record with unknown flags", e.Record(s, cuda.RecordExternal, cuda.RecordFlag(2)), cuda.ErrInvalidOptions, "unknown record flags 0x2")
		is(t, "Wait with unknown flags", s.Wait(e, cuda.WaitFlag(4)), cuda.ErrInvalidOptions, "unknown wait flags 0x4")
		if e.Recorded() {
			t.Error("a refused Record marked the event recorded")
		}
	}},
	{"ClosedBeforeOptions", func(t *testing.T) {
		dev := gpu(t)
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		ok(t, e.Close())
		_, err := e.IPCHandle()
		is(t, "IPCHandle of a closed non-IPC event", err, cuda.ErrClosed, "the event is closed")
		t2 := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		ok(t, t2.Close())
		_, err = t2.Sub(t2)
		is(t, "Sub of a closed event without timing", err, cuda.ErrClosed, "closed")
	}},
	{"DriverErrorSaysNextStep", func(t *testing.T) {
		dev := gpu(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		defer s.Close()
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		defer e.Close()
		// Outside capture the driver refuses the EXTERNAL flags (the fake
		// with ILLEGAL_STATE).
		for what, err := range map[string]error{"record external": s.Record(e, cuda.RecordExternal), "wait external": s.Wait(e, cuda.WaitExternal)} {
			if err == nil {
				if readCounters().ok {
					t.Errorf("%s outside capture: no error from the fake driver", what)
				} else {
					t.Logf("%s outside capture: the driver accepted it", what)
				}
				continue
			}
			t.Logf("%s: %v", what, err)
			msg := err.Error()
			var ce *cuda.Error
			if !errors.As(err, &ce) || ce.Fix == "" || strings.Contains(msg, "see the driver") {
				t.Errorf("%s: the fix says no next step: %v", what, err)
			}
			if errors.Is(err, driver.ErrorIllegalState) && !strings.Contains(msg, "stream capture") {
				t.Errorf("%s: the fix does not name stream capture: %v", what, err)
			}
		}
	}},
	{"NilAndZeroValues", func(t *testing.T) {
		dev := gpu(t)
		s := must[*cuda.Stream](t)(dev.NewStream())
		defer s.Close()
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		defer e.Close()
		var (
			ne *cuda.Event
			ns *cuda.Stream
			nd *cuda.Device
			ze = new(cuda.Event)
			zs = new(cuda.Stream)
			zd = new(cuda.Device)
		)
		calls := map[string]func() error{
			"nil Event.Record":                func() error { return ne.Record(s) },
			"Event.Record(nil stream)":        func() error { return e.Record(nil) },
			"nil Event.Query":                 func() error { _, err := ne.Query(); return err },
			"nil Event.Sync":                  func() error { return ne.Sync() },
			"nil Event.Wait":                  func() error { return ne.Wait(context.Background()) },
			"nil Event.Sub":                   func() error { _, err := ne.Sub(e); return err },
			"Event.Sub(nil)":                  func() error { _, err := e.Sub(nil); return err },
			"nil Event.IPCHandle":             func() error { _, err := ne.IPCHandle(); return err },
			"nil Event.Close":                 func() error { return ne.Close() },
			"zero Event.Query":                func() error { _, err := ze.Query(); return err },
			"zero Event.Close":                func() error { return ze.Close() },
			"Stream.Record(nil)":              func() error { return s.Record(nil) },
			"Stream.Record(zero)":             func() error { return s.Record(ze) },
			"nil Stream.Record":               func() error { return ns.Record(e) },
			"Stream.Wait(nil)":                func() error { return s.Wait(nil) },
			"nil Stream.Wait":                 func() error { return ns.Wait(e) },
			"nil Stream.Sync":                 func() error { return ns.Sync() },
			"nil Stream.Query":                func() error { _, err := ns.Query(); return err },
			"nil Stream.Spin":                 func() error { return ns.Spin(time.Millisecond) },
			"nil Stream.RecordEvent":          func() error { _, err := ns.RecordEvent(cuda.EventOptions{}); return err },
			"nil Stream.WaitStream":           func() error { return ns.WaitStream(s) },
			"Stream.WaitStream(nil)":          func() error { return s.WaitStream(nil) },
			"nil Stream.Close":                func() error { return ns.Close() },
			"nil Stream.Priority":             func() error { _, err := ns.Priority(); return err },
			"zero Stream.Priority":            func() error { _, err := zs.Priority(); return err },
			"nil Device.StreamPriorityRange":  func() error { _, _, err := nd.StreamPriorityRange(); return err },
			"zero Device.StreamPriorityRange": func() error { _, _, err := zd.StreamPriorityRange(); return err },
			"zero Stream.Sync":                func() error { return zs.Sync() },
			"zero Stream.Close":               func() error { return zs.Close() },
			"nil Device.Close":                func() error { return nd.Close() },
			"nil Device.Name":                 func() error { _, err := nd.Name(); return err },
			"nil Device.Sync":                 func() error { return nd.Sync() },
			"nil Device.NewEvent":             func() error { _, err := nd.NewEvent(cuda.EventOptions{}); return err },
			"nil Device.NewStream":            func() error { _, err := nd.NewStream(); return err },
			"nil Device.NewBlocking":          func() error { _, err := nd.NewStream(cuda.StreamOptions{Blocking: true}); return err },
			"nil Device.OpenIPCEvent":         func() error { _, err := nd.OpenIPCEvent(cuda.IPCEventHandle{}); return err },
			"zero Device.NewEvent":            func() error { _, err := zd.NewEvent(cuda.EventOptions{}); return err },
			"zero Device.Close":               func() error { return zd.Close() },
			"nil Device.AdoptStream":          func() error { _, err := nd.AdoptStream(s.Handle()); return err },
			"nil Device.AdoptEvent":           func() error { _, err := nd.AdoptEvent(e.Handle(), cuda.EventOptions{}); return err },
			"zero Device.AdoptStream":         func() error { _, err := zd.AdoptStream(s.Handle()); return err },
			"zero Device.AdoptEvent":          func() error { _, err := zd.AdoptEvent(e.Handle(), cuda.EventOptions{}); return err },
		}
		for name, f := range calls {
			noPanic(t, name, func() { is(t, name, f(), cuda.ErrInvalid, "nil or a zero value") })
		}
		noPanic(t, "AdoptContext(0)", func() {
			_, err := cuda.AdoptContext(0)
			is(t, "AdoptContext(0)", err, cuda.ErrInvalid, "the context handle is nil")
		})
		var nh *cuda.IPCEventHandle
		noPanic(t, "decode into a nil IPCEventHandle", func() {
			is(t, "nil IPCEventHandle.UnmarshalText", nh.UnmarshalText([]byte("cuipcev1:")), cuda.ErrInvalid, "the handle pointer is nil")
			is(t, "nil IPCEventHandle.UnmarshalBinary", nh.UnmarshalBinary(make([]byte, 64)), cuda.ErrInvalid, "the handle pointer is nil")
		})
		// The accessors return zero values.
		noPanic(t, "accessors of nil and zero values", func() {
			_ = []any{ne.TimingEnabled(), ne.BlockingSync(), ne.IPCEnabled(), ne.Options(), ne.Device(), ne.Handle(), ne.Recorded(), ne.String(),
				ze.String(), ns.Device(), ns.Handle(), ns.String(), zs.String(), nd.Ordinal(), nd.Context(), nd.String(), nd.DefaultStream(),
				zd.Ordinal(), zd.String(), zd.DefaultStream(), nd.PerThreadStream(), zd.PerThreadStream()}
			if nd.Ordinal() != -1 || nd.DefaultStream() != nil || nd.PerThreadStream() != nil || zd.PerThreadStream() != nil || ne.Device() != nil {
				t.Error("nil accessors: not the documented zero values")
			}
		})
	}},
	{"AdoptedHandlesOutliveTheirWrappers", func(t *testing.T) {
		// Another library's stream and event in the primary context, used
		// through a second Device of that context; the fake driver counts a
		// destroy by a wrapper as a call with a destroyed handle when the
		// library uses or destroys them afterwards.
		dev := onlyDevice(t)
		ctx := dev.Context()
		rawS := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
		rawE := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventDisableTiming))
		same := must[*cuda.Device](t)(cuda.AdoptContext(ctx))
		s := must[*cuda.Stream](t)(same.AdoptStream(rawS))
		e := must[*cuda.Event](t)(same.AdoptEvent(rawE, cuda.EventOptions{}))
		end := queued(t, s, pending)
		ok(t, s.Record(e))
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Add(3)
		go func() { defer wg.Done(); errs[0] = e.Sync() }()
		go func() { defer wg.Done(); errs[1] = s.Sync() }()
		go func() { defer wg.Done(); errs[2] = e.Wait(context.Background()) }()
		time.Sleep(20 * time.Millisecond)
		ok(t, prompt(t, "Close of an adopted event with a Sync and a Wait in flight", end, e.Close))
		ok(t, prompt(t, "Close of the adopting Device with a Stream.Sync in flight", end, same.Close))
		wg.Wait()
		for i, err := range errs {
			if err != nil && !errors.Is(err, cuda.ErrClosed) {
				t.Errorf("call %d in flight during Close: %v", i, err)
			}
		}
		is(t, "closed adopted event", e.Sync(), cuda.ErrClosed, "the event is closed")
		is(t, "adopted stream of a closed Device", s.Sync(), cuda.ErrClosed, "stream's device is closed")
		is(t, "per-thread stream of a closed Device", same.PerThreadStream().Sync(), cuda.ErrClosed, "stream's device is closed")
		is(t, "AdoptStream on a closed Device", func() error { _, err := same.AdoptStream(rawS); return err }(), cuda.ErrClosed, "device is closed")
		ok(t, s.Close())
		// The handles are still the library's, and the context still
		// retained by dev.
		ok(t, driver.StreamSynchronizeCtx(ctx, rawS))
		ok(t, driver.EventSynchronizeCtx(ctx, rawE))
		ok(t, dev.PerThreadStream().Sync())
		ok(t, driver.EventDestroyCtx(ctx, rawE))
		ok(t, driver.StreamDestroyCtx(ctx, rawS))
		ok(t, prompt(t, "Device.Close", time.Time{}, dev.Close))
	}},
	{"AdoptedPrimaryClosedLast", func(t *testing.T) {
		// A Device adopting a primary context shares GetDevice's retain:
		// closed last, it lets the context go (settle checks the retain
		// count), and until then the context works.
		dev := onlyDevice(t)
		same := must[*cuda.Device](t)(cuda.AdoptContext(dev.Context()))
		ok(t, dev.Close())
		s := must[*cuda.Stream](t)(same.NewStream())
		ok(t, s.Spin(time.Millisecond))
		ok(t, s.Sync())
		ok(t, same.PerThreadStream().Sync())
		ok(t, prompt(t, "Close of the last Device, an adopting one", time.Time{}, same.Close))
		is(t, "stream after its context's last Device closed", s.Sync(), cuda.ErrClosed, "stream's device is closed")
		ok(t, s.Close())
	}},
	{"DeviceCloseUnderLoad", func(t *testing.T) {
		dev := onlyDevice(t)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		// Work pending before the goroutines start: the Close must not
		// wait for it.
		s0 := must[*cuda.Stream](t)(dev.NewStream())
		end := queued(t, s0, pending)
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Never closed here: Device.Close closes them.
				s, err := dev.NewStream()
				if err != nil {
					if !errors.Is(err, cuda.ErrClosed) {
						errs <- err
					}
					return
				}
				e, err := dev.NewEvent(cuda.EventOptions{BlockingSync: g%2 == 0})
				if err != nil {
					if !errors.Is(err, cuda.ErrClosed) {
						errs <- err
					}
					return
				}
				if g%4 == 0 {
					if err := s.Spin(pending); err != nil {
						errs <- err
						return
					}
				}
				for i := 0; ; i++ {
					var err error
					switch i % 6 {
					case 0:
						err = s.Record(e)
					case 1:
						_, err = e.Query()
					case 2:
						ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
						err = e.Wait(ctx)
						cancel()
						if errors.Is(err, context.DeadlineExceeded) {
							err = nil
						}
					case 3:
						err = s.Wait(e)
					case 4:
						var p *cuda.Event
						if p, err = dev.NewEvent(cuda.EventOptions{}); err == nil {
							err = p.Close()
						}
					case 5:
						_, err = dev.DefaultStream().Query()
					}
					if err != nil {
						if !errors.Is(err, cuda.ErrClosed) {
							errs <- err
						}
						return
					}
				}
			}()
		}
		time.Sleep(50 * time.Millisecond)
		ok(t, prompt(t, "Device.Close under load", end, dev.Close))
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("under Device.Close: %v", err)
		}
	}},
}

func TestLayerMisuse(t *testing.T) {
	gpu(t).Close() // skips without a GPU; holds no Device while the cases run
	for _, c := range misuseCases {
		t.Run(c.name, func(t *testing.T) {
			released(t)
			before := readCounters()
			t.Cleanup(func() { settle(t, before) }) // after the case's own cleanups
			// No hang: a case that has not returned in a minute ends the
			// process, showing where every goroutine is.
			dog := time.AfterFunc(time.Minute, func() {
				buf := make([]byte, 1<<20)
				fmt.Fprintf(os.Stderr, "FAIL: TestLayerMisuse/%s hangs\n%s\n", c.name, buf[:runtime.Stack(buf, true)])
				os.Exit(2)
			})
			defer dog.Stop()
			noPanic(t, c.name, func() { c.run(t) })
		})
	}
}
