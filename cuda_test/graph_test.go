//go:build cgo

package gputest

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// checkAll checks that every value of b is want.
func checkAll(t *testing.T, what string, b *cuda.Buffer[float32], want float32) {
	t.Helper()
	got := make([]float32, b.Len())
	ok(t, b.CopyTo(got))
	for i, v := range got {
		if v != want {
			t.Fatalf("%s: element %d is %v, want %v", what, i, v, want)
		}
	}
}

// updateSupported is whether GraphExec.Update reaches the driver: in
// builds for 12.0 and later it needs a driver from 12.0.
func updateSupported(t *testing.T) bool {
	v, err := cuda.DriverVersion()
	ok(t, err)
	return driver.HeaderVersion < 12000 || v >= 12000
}

// A capture records the stream's launches into a graph without running
// them; the instantiated graph runs them at each launch, in order after the
// stream's earlier work; an update with a capture of the same work on
// other arguments takes effect at the next launch, and one of other work
// is refused and changes nothing; events recorded after a graph launch
// complete with it; Close refuses every later use and the driver's
// objects are destroyed once each.
func TestLayerGraph(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	graphs0, fake := fakeCounter("fakecuda_live_graphs")
	execs0, _ := fakeCounter("fakecuda_live_graph_execs")
	launches0, _ := fakeCounter("fakecuda_graph_launches")
	kernels0, _ := fakeCounter("fakecuda_graph_kernels")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	const n = 1000
	a := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer a.Close()
	b := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer b.Close()
	three := func(buf *cuda.Buffer[float32]) func(*cuda.Stream) error {
		return func(s *cuda.Stream) error {
			if c, err := s.Capturing(); err != nil || !c {
				t.Errorf("Capturing inside Capture: %v, %v; want true", c, err)
			}
			for range 3 {
				if err := s.Launch(k, cuda.Linear(n, 256), buf.Arg(), driver.Arg(uint32(n))); err != nil {
					return err
				}
			}
			return nil
		}
	}
	g := must[*cuda.Graph](t)(s.Capture(three(a)))
	if c, err := s.Capturing(); err != nil || c {
		t.Errorf("Capturing after Capture: %v, %v; want false", c, err)
	}
	checkAll(t, "after the capture (nothing ran)", a, 0)
	if nodes := must[int](t)(g.Nodes()); nodes != 3 {
		t.Errorf("the graph has %d nodes, want 3 (one per launch)", nodes)
	}
	if g.Handle() == 0 || g.Device() != dev {
		t.Errorf("Graph accessors: %#x, %v", g.Handle(), g.Device())
	}
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	if x.Handle() == 0 || x.Device() != dev {
		t.Errorf("GraphExec accessors: %#x, %v", x.Handle(), x.Device())
	}
	for range 5 {
		ok(t, s.LaunchGraph(x))
	}
	done := must[*cuda.Event](t)(s.RecordEvent(cuda.EventOptions{}))
	ok(t, done.Sync())
	ok(t, done.Close())
	checkAll(t, "after 5 launches of 3 kernels", a, 15)
	if fake {
		if v, _ := fakeCounter("fakecuda_graph_launches"); v != launches0+5 {
			t.Errorf("the driver launched %d graphs, want 5", v-launches0)
		}
		if v, _ := fakeCounter("fakecuda_graph_kernels"); v != kernels0+15 {
			t.Errorf("the driver ran %d kernel nodes, want 15", v-kernels0)
		}
	}

	// Update: the same work on b from the next launch on.
	g2 := must[*cuda.Graph](t)(s.Capture(three(b)))
	err := x.Update(g2)
	if updateSupported(t) {
		ok(t, err)
		ok(t, s.LaunchGraph(x))
		ok(t, s.Sync())
		checkAll(t, "b after an updated launch", b, 3)
		checkAll(t, "a after an updated launch", a, 15)
		// Other work: refused, x unchanged.
		g3 := must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error {
			return s.Launch(k, cuda.Linear(n, 256), a.Arg(), driver.Arg(uint32(n)))
		}))
		isErr(t, "Update with a graph of one kernel for three", x.Update(g3), driver.ErrorGraphExecUpdateFailure, "not the same work")
		ok(t, g3.Close())
		ok(t, s.LaunchGraph(x))
		ok(t, s.Sync())
		checkAll(t, "b after a refused update and a launch", b, 6)
		checkAll(t, "a after a refused update and a launch", a, 15)
	} else {
		if !errors.Is(err, cuda.ErrNotSupported) {
			t.Errorf("Update on a driver before 12.0 in a build for %d: %v, want an error matching ErrNotSupported", driver.HeaderVersion, err)
		}
		t.Logf("the driver is older than 12.0: Update is not supported in this build (%v)", err)
	}

	// Closed: every use refused, the driver's objects destroyed once.
	ok(t, g.Close())
	ok(t, g.Close())
	ok(t, g2.Close())
	_, err = g.Instantiate()
	isErr(t, "Instantiate of a closed graph", err, cuda.ErrClosed, "graph is closed")
	_, err = g.Nodes()
	isErr(t, "Nodes of a closed graph", err, cuda.ErrClosed, "graph is closed")
	ok(t, s.LaunchGraph(x)) // independent of its graph
	ok(t, x.Close())
	ok(t, x.Close())
	isErr(t, "LaunchGraph of a closed graph exec", s.LaunchGraph(x), cuda.ErrClosed, "graph exec is closed")
	if fake {
		waitCounter(t, "fakecuda_live_graphs", graphs0)
		waitCounter(t, "fakecuda_live_graph_execs", execs0)
	}
	ok(t, s.Sync())

	var nilg *cuda.Graph
	var nilx *cuda.GraphExec
	isErr(t, "Close of a nil Graph", nilg.Close(), cuda.ErrInvalid, "graph")
	isErr(t, "Close of a nil GraphExec", nilx.Close(), cuda.ErrInvalid, "graph exec")
	isErr(t, "LaunchGraph(nil)", s.LaunchGraph(nil), cuda.ErrInvalid, "graph exec")
	if nilg.Handle() != 0 || nilx.Handle() != 0 || nilg.Device() != nil || nilx.String() != "cuda graph exec <invalid>" || nilg.String() != "cuda graph <invalid>" {
		t.Errorf("nil Graph and GraphExec accessors")
	}
}

// What capture refuses, and how a capture that fails ends: the default and
// blocking streams are refused before the driver is called; a Sync of the
// capturing stream invalidates the capture; a capture function's error or
// panic ends the capture and leaves no graph; EndCapture without a capture
// is the driver's error.
func TestLayerGraphCaptureRefused(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	graphs0, fake := fakeCounter("fakecuda_live_graphs")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 16))
	defer buf.Close()
	launch := func(s *cuda.Stream) error {
		return s.Launch(k, cuda.Linear(16, 16), buf.Arg(), driver.Arg(uint32(16)))
	}

	_, err := s.Capture(nil)
	isErr(t, "Capture(nil)", err, cuda.ErrInvalid, "capture function")
	isErr(t, "BeginCapture of the default stream", dev.DefaultStream().BeginCapture(), cuda.ErrInvalidOptions, "default stream")
	isErr(t, "BeginCapture of the per-thread stream", dev.PerThreadStream().BeginCapture(), cuda.ErrInvalidOptions, "per-thread")
	blocking := must[*cuda.Stream](t)(dev.NewStream(cuda.StreamOptions{Blocking: true}))
	isErr(t, "BeginCapture of a blocking stream", blocking.BeginCapture(), cuda.ErrInvalidOptions, "blocking", "non-blocking")
	if c := must[bool](t)(blocking.Capturing()); c {
		t.Error("a refused BeginCapture left the blocking stream capturing")
	}
	ok(t, blocking.Close())
	_, err = s.EndCapture()
	isErr(t, "EndCapture without a capture", err, driver.ErrorIllegalState)

	// BeginCapture of a capturing stream: refused, the capture going on
	// (the driver invalidates a capture on a stream's flags query).
	ok(t, s.BeginCapture())
	isErr(t, "BeginCapture of a capturing stream", s.BeginCapture(), driver.ErrorIllegalState, "capturing already")
	ok(t, launch(s))
	g := must[*cuda.Graph](t)(s.EndCapture())
	ok(t, g.Close())

	// A Sync of the capturing stream: refused, and the capture invalidated.
	ok(t, s.BeginCapture())
	ok(t, launch(s))
	if err := s.Sync(); !errors.Is(err, driver.ErrorStreamCaptureUnsupported) {
		t.Errorf("Sync of a capturing stream: %v, want an error matching ErrorStreamCaptureUnsupported", err)
	}
	_, err = s.EndCapture()
	isErr(t, "EndCapture of an invalidated capture", err, driver.ErrorStreamCaptureInvalidated, "invalidated")
	if c := must[bool](t)(s.Capturing()); c {
		t.Error("the stream still captures after EndCapture of an invalidated capture")
	}

	// The capture function's error: returned as it is, no graph left.
	mine := errors.New("the capture function's own error")
	_, err = s.Capture(func(s *cuda.Stream) error {
		if err := launch(s); err != nil {
			return err
		}
		return mine
	})
	if err != mine {
		t.Errorf("Capture whose function fails: %v, want its error as it is", err)
	}
	// A panic: the capture ended, no graph left, the panic goes on.
	func() {
		defer func() {
			if r := recover(); r != "in capture" {
				t.Errorf("the capture function's panic: recovered %v", r)
			}
		}()
		s.Capture(func(s *cuda.Stream) error {
			launch(s)
			panic("in capture")
		})
	}()
	if c := must[bool](t)(s.Capturing()); c {
		t.Error("the stream still captures after its capture function panicked")
	}
	// The stream runs its work again.
	ok(t, buf.CopyFrom(make([]float32, 16)))
	ok(t, launch(s))
	ok(t, s.Sync())
	checkAll(t, "a launch after the failed captures", buf, 1)
	if fake {
		waitCounter(t, "fakecuda_live_graphs", graphs0)
	}

	// Across devices.
	if n, _ := cuda.DeviceCount(); n >= 2 {
		dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
		defer dev1.Close()
		_, k1 := computeSetup(t, dev1)
		s1 := must[*cuda.Stream](t)(dev1.NewStream())
		defer s1.Close()
		buf1 := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev1, 16))
		defer buf1.Close()
		g1 := must[*cuda.Graph](t)(s1.Capture(func(s *cuda.Stream) error {
			return s.Launch(k1, cuda.Linear(16, 16), buf1.Arg(), driver.Arg(uint32(16)))
		}))
		defer g1.Close()
		x1 := must[*cuda.GraphExec](t)(g1.Instantiate())
		defer x1.Close()
		isErr(t, "LaunchGraph of device 1's graph on device 0", s.LaunchGraph(x1), cuda.ErrWrongDevice, "device 1", "device 0")
		g0 := must[*cuda.Graph](t)(s.Capture(launch))
		defer g0.Close()
		isErr(t, "Update with another device's graph", x1.Update(g0), cuda.ErrWrongDevice, "device 0", "device 1")
	} else {
		t.Log("one device: the graphs across devices are not tried")
	}
}

// A capture from ordinary goroutines: begun in one, its work queued from
// another, ended from a third, while other goroutines make unrelated calls
// of every kind on the same device (allocations, synchronous copies, module
// loads, launches on other streams, frees); none of them fails, and the
// graph holds exactly the captured stream's launches.
// TestLayerGraphGlobalCaptureRefuses shows that the same calls would fail
// in the driver's default mode.
func TestLayerGraphCaptureFromGoroutines(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	other := must[*cuda.Stream](t)(dev.NewStream())
	defer other.Close()
	const n = 64
	capt := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer capt.Close()

	for round := 0; round < 20; round++ {
		ok(t, s.BeginCapture())
		stop := make(chan struct{})
		errs := make(chan error, 64)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				host := make([]float32, n)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					err := func() error {
						b, err := cuda.AllocFrom(dev, host) // cuMemAlloc, a synchronous copy, a legacy-stream sync
						if err != nil {
							return err
						}
						defer b.Close() // cuMemFree, later
						if err := other.Launch(k, cuda.Linear(n, 64), b.Arg(), driver.Arg(uint32(n))); err != nil {
							return err
						}
						if err := other.Sync(); err != nil {
							return err
						}
						if err := b.CopyTo(host); err != nil {
							return err
						}
						if host[0] != float32(i)+1 {
							t.Errorf("an unrelated launch during the capture: %v, want %v", host[0], float32(i)+1)
						}
						if g == 0 && i%4 == 0 {
							m, err := dev.LoadModule([]byte(computePTX))
							if err != nil {
								return err
							}
							m.Close()
						}
						return nil
					}()
					if err != nil {
						errs <- err
						return
					}
					runtime.Gosched()
				}
			}()
		}
		// The capture's work, from another goroutine.
		captured := make(chan error)
		go func() {
			var err error
			for i := 0; i < 3 && err == nil; i++ {
				err = s.Launch(k, cuda.Linear(n, 64), capt.Arg(), driver.Arg(uint32(n)))
				runtime.Gosched()
			}
			captured <- err
		}()
		ok(t, <-captured)
		// Ended from a third goroutine.
		type result struct {
			g   *cuda.Graph
			err error
		}
		ended := make(chan result)
		go func() {
			time.Sleep(time.Millisecond) // the others' calls go on meanwhile
			g, err := s.EndCapture()
			ended <- result{g, err}
		}()
		res := <-ended
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: an unrelated call during the capture failed: %v", round, err)
		}
		if res.err != nil {
			t.Fatalf("round %d: EndCapture: %v", round, res.err)
		}
		if nodes := must[int](t)(res.g.Nodes()); nodes != 3 {
			t.Fatalf("round %d: the graph has %d nodes, want the captured stream's 3 launches", round, nodes)
		}
		ok(t, res.g.Close())
	}
	checkAll(t, "the captured buffer (never launched)", capt, 0)

}

// The fake driver refuses potentially unsafe calls as the driver documents
// for the capture modes: during a capture begun through the driver in the
// GLOBAL mode, the driver's default, an allocation on another thread is
// refused and the capture invalidated, which is what the package's
// capture mode avoids (TestLayerGraphCaptureFromGoroutines). It runs in a
// context of its own, with no earlier test's free or unload still to come,
// which the capture would refuse too.
func TestLayerGraphGlobalCaptureRefuses(t *testing.T) {
	released(t) // every earlier context released: their frees and unloads done
	dev := fakeOnly(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ok(t, driver.StreamBeginCaptureCtx(dev.Context(), s.Handle(), driver.StreamCaptureModeGlobal))
	refused := make(chan error)
	go func() {
		runtime.LockOSThread() // another thread than the capture's
		defer runtime.UnlockOSThread()
		b, err := cuda.Alloc[float32](dev, 4)
		if err == nil {
			b.Close()
		}
		refused <- err
	}()
	if err := <-refused; !errors.Is(err, driver.ErrorStreamCaptureUnsupported) {
		t.Errorf("an allocation on another thread during a GLOBAL capture: %v, want an error matching ErrorStreamCaptureUnsupported", err)
	}
	_, err := driver.StreamEndCaptureCtx(dev.Context(), s.Handle())
	if !errors.Is(err, driver.ErrorStreamCaptureInvalidated) {
		t.Errorf("the GLOBAL capture after the refused call: %v, want it invalidated", err)
	}
	// Outside the capture, the same call works.
	b := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 4))
	ok(t, b.Close())
}

// Graphs and executable graphs made elsewhere are adopted: they
// instantiate, launch and update through the package, and closing the
// wrappers (or their device) never destroys them.
func TestLayerGraphAdopt(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	graphs0, fake := fakeCounter("fakecuda_live_graphs")
	execs0, _ := fakeCounter("fakecuda_live_graph_execs")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, 8)))
	defer buf.Close()
	ok(t, driver.StreamBeginCaptureCtx(dev.Context(), s.Handle(), driver.StreamCaptureModeRelaxed))
	ok(t, s.Launch(k, cuda.Linear(8, 8), buf.Arg(), driver.Arg(uint32(8))))
	gh, err := driver.StreamEndCaptureCtx(dev.Context(), s.Handle())
	ok(t, err)
	g := must[*cuda.Graph](t)(dev.AdoptGraph(gh))
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	xh := x.Handle()
	ax := must[*cuda.GraphExec](t)(dev.AdoptGraphExec(xh))
	ok(t, s.LaunchGraph(ax))
	ok(t, s.Sync())
	checkAll(t, "after an adopted graph exec's launch", buf, 1)
	ok(t, g.Close())
	ok(t, ax.Close())
	isErr(t, "LaunchGraph of a closed adopted graph exec", s.LaunchGraph(ax), cuda.ErrClosed, "graph exec is closed")
	ok(t, s.LaunchGraph(x)) // the exec itself is alive
	ok(t, s.Sync())
	checkAll(t, "after the exec's launch", buf, 2)
	ok(t, x.Close())
	if fake {
		waitCounter(t, "fakecuda_live_graph_execs", execs0)
		if v, _ := fakeCounter("fakecuda_live_graphs"); v != graphs0+1 {
			t.Errorf("live graphs: %d, want the adopted one alive", v-graphs0)
		}
	}
	ok(t, driver.GraphDestroyCtx(dev.Context(), gh)) // its creator's to destroy

	_, err = dev.AdoptGraph(0)
	isErr(t, "AdoptGraph(0)", err, cuda.ErrInvalid)
	if !errors.Is(err, cuda.ErrInvalidHandle) {
		t.Errorf("AdoptGraph(0): %v, want it to match ErrInvalidHandle too", err)
	}
	_, err = dev.AdoptGraphExec(0)
	isErr(t, "AdoptGraphExec(0)", err, cuda.ErrInvalid)
}

// The last Device's Close closes its graphs and executable graphs, which
// then refuse use with ErrClosed naming the device, and the package
// destroys them; those never closed are released by the garbage
// collector, counted in Leaked.
func TestLayerGraphClosedWithDevice(t *testing.T) {
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	released(t)
	c0 := readCounters()
	graphs0, fake := fakeCounter("fakecuda_live_graphs")
	execs0, _ := fakeCounter("fakecuda_live_graph_execs")
	dev := must[*cuda.Device](t)(cuda.GetDevice(0)) // the only open Device here
	m := must[*cuda.Module](t)(dev.LoadModule([]byte(computePTX)))
	k := must[*cuda.Kernel](t)(m.Kernel("add_one"))
	s := must[*cuda.Stream](t)(dev.NewStream())
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 8))
	capture := func() *cuda.Graph {
		return must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error {
			return s.Launch(k, cuda.Linear(8, 8), buf.Arg(), driver.Arg(uint32(8)))
		}))
	}
	before := cuda.Leaked()
	func() {
		g := capture()
		must[*cuda.GraphExec](t)(g.Instantiate())
	}()
	for i := 0; i < 100 && cuda.Leaked()-before < 2; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := cuda.Leaked() - before; n != 2 {
		t.Errorf("Leaked grew by %d, want 2 (a graph and its exec)", n)
	}
	g := capture()
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	ok(t, dev.Close())
	_, err := g.Instantiate()
	isErr(t, "Instantiate after the device closed", err, cuda.ErrClosed, "graph's device is closed")
	isErr(t, "Update after the device closed", x.Update(g), cuda.ErrClosed, "graph exec's device is closed")
	select {
	case <-dev.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done not closed 30s after the last Device closed")
	}
	if fake {
		waitCounter(t, "fakecuda_live_graphs", graphs0)
		waitCounter(t, "fakecuda_live_graph_execs", execs0)
	}
	ok(t, g.Close())
	ok(t, x.Close())
	settle(t, c0)
}

// A graph launch allocates nothing.
func TestLayerGraphNoAllocations(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, 8)))
	defer buf.Close()
	g := must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error {
		return s.Launch(k, cuda.Linear(8, 8), buf.Arg(), driver.Arg(uint32(8)))
	}))
	defer g.Close()
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	defer x.Close()
	var failed error
	if n := testing.AllocsPerRun(1000, func() {
		if err := s.LaunchGraph(x); err != nil && failed == nil {
			failed = err
		}
	}); n != 0 {
		t.Errorf("LaunchGraph allocates %v times per call", n)
	}
	ok(t, failed)
	ok(t, s.Sync())
}

// Close of graphs and executable graphs racing with launches, instantiates
// and updates in other goroutines: each call either runs whole or is
// refused with ErrClosed, and none reaches the driver with a destroyed
// graph (the fake refuses those with INVALID_HANDLE, which would surface
// here).
func TestLayerGraphCloseRacesWithUse(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, 64)))
	defer buf.Close()
	capture := func() *cuda.Graph {
		return must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error {
			return s.Launch(k, cuda.Linear(64, 64), buf.Arg(), driver.Arg(uint32(64)))
		}))
	}
	update := updateSupported(t)
	shared, fake := fakeCounter("fakecuda_graph_shared")
	defer func() {
		if now, _ := fakeCounter("fakecuda_graph_shared"); fake && now != shared {
			t.Errorf("%d driver calls on a graph or graph exec overlapped another on it: the driver requires them serialized", now-shared)
		}
	}()
	for round := 0; round < 200; round++ {
		g, g2 := capture(), capture()
		x := must[*cuda.GraphExec](t)(g.Instantiate())
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		start := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ls := must[*cuda.Stream](t)(dev.NewStream())
				defer ls.Close()
				<-start
				for i := 0; i < 300; i++ {
					var err error
					switch (w + i) % 3 {
					case 0:
						err = ls.LaunchGraph(x)
					case 1:
						var x2 *cuda.GraphExec
						if x2, err = g.Instantiate(); err == nil {
							err = x2.Close()
						}
					case 2:
						if update {
							err = x.Update(g2)
						}
					}
					if err != nil && !errors.Is(err, cuda.ErrClosed) {
						errs <- err
						return
					}
				}
				errs <- ls.Sync()
			}()
		}
		close(start)
		runtime.Gosched()
		ok(t, x.Close())
		ok(t, g.Close())
		ok(t, g2.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: a call racing with Close: %v", round, err)
			}
		}
	}
}
