//go:build cgo

// Package gputest (directory cuda_test) holds the tests and benchmarks that need a GPU. Without
// one (CI) each test skips, saying so. tools/gpu-suite.sh builds the test
// binaries for every pinned toolkit and runs them on the GPU machine.
package gputest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// gpu returns device 0, or skips the test where there is no GPU.
func gpu(tb testing.TB) *cuda.Device {
	tb.Helper()
	dev, err := cuda.GetDevice(0)
	if err != nil {
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
			tb.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU; tools/gpu-suite.sh runs this on the GPU machine): %v", err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dev.Close() })
	return dev
}

func must[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

func ok(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func TestBindingsVersion(t *testing.T) {
	gpu(t)
	v, err := cuda.DriverVersion()
	ok(t, err)
	t.Logf("bindings: CUDA %s (tag %s, CUDA_VERSION %d); driver: CUDA %s", driver.Toolkit, driver.BuildTag, driver.HeaderVersion, driver.VersionString(v))
	for _, f := range driver.Functions {
		if _, err := f.Resolve(); err != nil {
			t.Errorf("%s: %v", f.Symbol, err)
		}
	}
	// The 13.0 build resolves elapsed time as the _v2 entry point.
	for _, f := range driver.Functions {
		if f.Go == "EventElapsedTime" {
			t.Logf("EventElapsedTime → %s at ABI %d", f.Symbol, f.ABIVersion)
			if driver.HeaderVersion >= 13000 && (f.Symbol != "cuEventElapsedTime_v2" || f.ABIVersion != 12080) {
				t.Errorf("13.0 elapsed time is %s@%d", f.Symbol, f.ABIVersion)
			}
		}
	}
}

func TestDriverTooOld(t *testing.T) {
	gpu(t)
	v, _ := cuda.DriverVersion()
	// An entry point at an ABI version newer than the driver.
	_, err := driver.Lookup("cuEventElapsedTime", v+10)
	var nse *driver.NotSupportedError
	if !errors.As(err, &nse) || !errors.Is(err, cuda.ErrNotSupported) || nse.DriverVersion != v || nse.Need != v+10 {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
	// A name the driver does not have.
	_, err = driver.Lookup("cuEventNoSuchFunction", 2000)
	if !errors.Is(err, cuda.ErrNotSupported) || !strings.Contains(err.Error(), "cuEventNoSuchFunction") {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
}

// The generated layer on its own: create, record, query, synchronize, time
// and destroy through the driver package.
func TestGeneratedLayer(t *testing.T) {
	dev := gpu(t)
	ctx := dev.Context()
	e1 := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventDefault))
	e2 := must[driver.Event](t)(driver.EventCreateCtx(ctx, driver.EventBlockingSync))
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	ok(t, driver.EventRecordCtx(ctx, e1, s))
	ok(t, driver.EventRecordWithFlagsCtx(ctx, e2, s, driver.EventRecordDefault))
	ok(t, driver.EventSynchronizeCtx(ctx, e2))
	ok(t, driver.EventQueryCtx(ctx, e1))
	ms, err := driver.EventElapsedTimeCtx(ctx, e1, e2)
	ok(t, err)
	if ms < 0 || ms > 1000 {
		t.Errorf("elapsed %v ms", ms)
	}
	// Timing disabled on neither? both have timing: an INVALID_HANDLE from
	// the driver is what it returns for a destroyed event.
	ok(t, driver.EventDestroyCtx(ctx, e1))
	ok(t, driver.EventDestroyCtx(ctx, e2))
	ok(t, driver.StreamDestroyCtx(ctx, s))
	name, err := driver.DeviceGetName(0)
	ok(t, err)
	t.Logf("device 0: %s", name)
	if s, err := driver.GetErrorName(driver.ErrorNotReady); err != nil || s != "CUDA_ERROR_NOT_READY" {
		t.Errorf("GetErrorName: %q %v", s, err)
	}
}

func TestLifecycle(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	start := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	end := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	ok(t, s.Record(start))
	ok(t, s.Spin(2*time.Millisecond))
	ok(t, end.Record(s))
	ok(t, end.Sync())
	done, err := end.Query()
	if !done || err != nil {
		t.Fatalf("query after sync: %v %v", done, err)
	}
	d, err := end.Sub(start)
	ok(t, err)
	if d <= 0 {
		t.Fatalf("elapsed %v", d)
	}
	if !start.TimingEnabled() || start.BlockingSync() || start.IPCEnabled() || start.Device() != dev || start.Handle() == 0 {
		t.Fatal("accessors")
	}
	ok(t, start.Close())
	ok(t, end.Close())
}

func TestNeverRecordedIsComplete(t *testing.T) {
	dev := gpu(t)
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer e.Close()
	done, err := e.Query()
	if !done || err != nil {
		t.Fatalf("query: %v %v", done, err)
	}
	ok(t, e.Sync())
	ok(t, e.Wait(context.Background()))
	_, err = e.Sub(e)
	if !errors.Is(err, cuda.ErrNotRecorded) {
		t.Fatalf("sub: %v", err)
	}
}

func TestRecordOverwrites(t *testing.T) {
	dev := gpu(t)
	busy := must[*cuda.Stream](t)(dev.NewStream())
	idle := must[*cuda.Stream](t)(dev.NewStream())
	defer busy.Close()
	defer idle.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	ok(t, busy.Spin(2*time.Second))
	ok(t, busy.Record(e))
	if done, _ := e.Query(); done {
		t.Fatal("event complete while its work runs")
	}
	ok(t, idle.Record(e)) // the latest record is of an idle stream
	ok(t, e.Sync())       // returns without waiting for the busy stream
	if done, _ := busy.Query(); done {
		t.Fatal("the busy stream finished first; the test proves nothing")
	}
	ok(t, busy.Sync())
}

func TestClosePendingDoesNotBlock(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Spin(2*time.Second))
	ok(t, s.Record(e))
	ok(t, e.Close())
	if done, _ := s.Query(); done {
		t.Fatal("Close waited for the pending work")
	}
	ok(t, e.Close()) // idempotent
	if _, err := e.Query(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("query after close: %v", err)
	}
	if err := s.Record(e); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("record after close: %v", err)
	}
	for _, err := range []error{e.Sync(), e.Wait(context.Background()), s.Wait(e)} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Fatalf("after close: %v", err)
		}
	}
	if _, err := e.Sub(e); !errors.Is(err, cuda.ErrClosed) && !errors.Is(err, cuda.ErrTimingDisabled) {
		t.Fatalf("sub after close: %v", err)
	}
	ok(t, s.Sync())
	ok(t, s.Close())
	if err := s.Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("stream sync after close: %v", err)
	}
}

func TestElapsedErrors(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	a := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	b := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	plain := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer a.Close()
	defer b.Close()
	defer plain.Close()

	_, err := b.Sub(plain)
	if !errors.Is(err, cuda.ErrTimingDisabled) || !strings.Contains(err.Error(), "start event was created without timing") {
		t.Fatalf("timing disabled: %v", err)
	}
	ok(t, s.Record(plain))
	ok(t, s.Record(a))
	_, err = b.Sub(a)
	if !errors.Is(err, cuda.ErrNotRecorded) || !strings.Contains(err.Error(), "end event was never recorded") {
		t.Fatalf("not recorded: %v", err)
	}
	ok(t, s.Spin(time.Second))
	ok(t, s.Record(b))
	_, err = b.Sub(a)
	if !errors.Is(err, cuda.ErrNotReady) || !strings.Contains(err.Error(), "not completed") {
		t.Fatalf("not ready: %v", err)
	}
	t.Log(err)
	ok(t, b.Sync())
	d, err := b.Sub(a)
	ok(t, err)
	if d < 900*time.Millisecond {
		t.Fatalf("elapsed %v for a 1s spin", d)
	}
	// The driver itself says timing disabled as INVALID_HANDLE: we catch it
	// before the driver is called, so the error names the cause.
	_, err = plain.Sub(a)
	if errors.Is(err, cuda.ErrInvalidHandle) {
		t.Fatalf("driver error leaked: %v", err)
	}
}

func TestIPCTimingRejected(t *testing.T) {
	dev := gpu(t)
	_, err := dev.NewEvent(cuda.EventOptions{IPC: true, Timing: true})
	if !errors.Is(err, cuda.ErrInvalidOptions) || !strings.Contains(err.Error(), "IPC event cannot record timing") {
		t.Fatalf("got %v", err)
	}
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	if _, err := e.IPCHandle(); !errors.Is(err, cuda.ErrInvalidOptions) {
		t.Fatalf("IPC handle of a non-IPC event: %v", err)
	}
}

// Elapsed time of GPU work of known duration agrees within tolerance.
func TestElapsedAccuracy(t *testing.T) {
	env := newEnv(t, cuda.EventOptions{Timing: true})
	s, a, b := env.s, env.a, env.b
	// Warm up: the first launch JIT-compiles the kernel.
	ok(t, s.Spin(time.Microsecond))
	ok(t, s.Sync())
	for _, want := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond} {
		ok(t, s.Record(a))
		ok(t, s.Spin(want))
		ok(t, s.Record(b))
		ok(t, b.Wait(context.Background()))
		got, err := b.Sub(a)
		ok(t, err)
		// The kernel's own launch and the timer reads add a few µs.
		tol := 50*time.Microsecond + want/50
		t.Logf("spin %v: elapsed %v (tolerance +%v, -1µs)", want, got, tol)
		if got < want-time.Microsecond || got > want+tol {
			t.Errorf("spin %v: elapsed %v, outside [%v, %v]", want, got, want-time.Microsecond, want+tol)
		}
	}
}

func TestWaitContext(t *testing.T) {
	dev := gpu(t)
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprintf("blocking=%v", blocking), func(t *testing.T) {
			s := must[*cuda.Stream](t)(dev.NewStream())
			defer s.Close()
			e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{BlockingSync: blocking}))
			defer e.Close()
			ok(t, s.Spin(time.Second))
			ok(t, s.Record(e))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			err := e.Wait(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("cancelled wait: %v", err)
			}
			if done, _ := e.Query(); done {
				t.Fatal("the work finished before the deadline; the test proves nothing")
			}
			// Already cancelled: returns at once with ctx.Err().
			cctx, ccancel := context.WithCancel(context.Background())
			ccancel()
			if err := e.Wait(cctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("wait with a cancelled context: %v", err)
			}
			select {
			case err := <-e.WaitChan(context.Background()):
				ok(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("WaitChan never delivered")
			}
			if done, _ := e.Query(); !done {
				t.Fatal("wait returned before completion")
			}
		})
	}
}

// Calls from many goroutines, landing on many OS threads, none locked, with
// the context cleared on threads in between: every call must still find its
// context.
func TestGoroutinesAndThreads(t *testing.T) {
	dev := gpu(t)
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(4)
	}
	var tids sync.Map
	var nthreads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := dev.NewStream()
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			a, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
			b, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
			defer a.Close()
			defer b.Close()
			for i := 0; i < 50; i++ {
				if _, loaded := tids.LoadOrStore(syscall.Gettid(), true); !loaded {
					nthreads.Add(1)
				}
				// Leave this thread with no current context.
				_ = driver.CtxSetCurrent(0)
				runtime.Gosched()
				if err := s.Record(a); err != nil {
					errs <- err
					return
				}
				if err := s.Record(b); err != nil {
					errs <- err
					return
				}
				if err := b.Sync(); err != nil {
					errs <- err
					return
				}
				if _, err := b.Sub(a); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					time.Sleep(time.Millisecond) // let the goroutine move
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("calls ran on %d OS threads with GOMAXPROCS=%d", nthreads.Load(), runtime.GOMAXPROCS(0))
	if nthreads.Load() < 2 {
		t.Fatal("all calls ran on one thread; the test proves nothing")
	}
}

func TestSeveralDevices(t *testing.T) {
	dev := gpu(t)
	n, err := cuda.DeviceCount()
	ok(t, err)
	if _, err := cuda.GetDevice(n); !errors.Is(err, cuda.ErrInvalidDevice) || !strings.Contains(err.Error(), fmt.Sprintf("no device %d", n)) {
		t.Fatalf("device %d of %d: %v", n, n, err)
	}
	if n < 2 {
		t.Skipf("skipping the cross-device checks: this machine has %d GPU (they run on a machine with 2 or more)", n)
	}
	dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
	defer dev1.Close()
	s1 := must[*cuda.Stream](t)(dev1.NewStream())
	defer s1.Close()
	e0 := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer e0.Close()
	err = s1.Record(e0)
	if !errors.Is(err, cuda.ErrWrongDevice) || !strings.Contains(err.Error(), "device 0") || !strings.Contains(err.Error(), "device 1") {
		t.Fatalf("cross-device record: %v", err)
	}
	t.Log(err)
	// A stream may wait for an event of another device.
	s0 := must[*cuda.Stream](t)(dev.NewStream())
	defer s0.Close()
	ok(t, s0.Spin(10*time.Millisecond))
	ok(t, s0.Record(e0))
	ok(t, s1.Wait(e0))
	e1 := must[*cuda.Event](t)(dev1.NewEvent(cuda.EventOptions{Timing: true}))
	defer e1.Close()
	ok(t, s1.Record(e1))
	ok(t, e1.Sync())
	if done, _ := e0.Query(); !done {
		t.Fatal("device 1 did not wait for device 0")
	}
	if _, err := e1.Sub(e0); !errors.Is(err, cuda.ErrWrongDevice) {
		t.Fatalf("cross-device Sub: %v", err)
	}
}

// IPC across three processes: this test binary re-executes itself as the
// child, which opens the exporter's BlockingSync event, checks that the
// handle held the option, and passes the handle it re-exports (the same
// text: IPCHandle of an imported event) on to a grandchild, which opens it
// and sees the exporter's work pending, then complete.
func TestIPC(t *testing.T) {
	if h := os.Getenv("CUDAGEN_IPC_CHILD"); h != "" {
		ipcChild(t, h, os.Getenv("CUDAGEN_IPC_GRANDCHILD") == "")
		return
	}
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{IPC: true, BlockingSync: true}))
	defer e.Close()
	h, err := e.IPCHandle()
	ok(t, err)
	if o := h.Options(); !o.BlockingSync || !o.IPC {
		t.Fatalf("the handle's options: %+v", o)
	}
	// The driver refuses to open a handle in the process that made it.
	if peer, err := dev.OpenIPCEvent(h); err == nil {
		peer.Close()
		t.Log("the driver opened an IPC handle in the exporting process")
	} else {
		t.Logf("open in the exporting process: %v", err)
	}
	// Long enough for two process starts: the grandchild sees it pending.
	ok(t, s.Spin(8*time.Second))
	ok(t, s.Record(e))
	cmd := exec.Command(os.Args[0], "-test.run=^TestIPC$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGEN_IPC_CHILD="+h.String())
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	for _, want := range []string{"child: re-exported the same handle", "grandchild: blocking sync, pending then complete"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the child's output lacks %q", want)
		}
	}
}

func ipcChild(t *testing.T, text string, passOn bool) {
	who := "child"
	if !passOn {
		who = "grandchild"
	}
	dev := gpu(t)
	var h cuda.IPCEventHandle
	ok(t, h.UnmarshalText([]byte(text)))
	e, err := dev.OpenIPCEvent(h)
	ok(t, err)
	defer e.Close()
	if o := e.Options(); o != (cuda.EventOptions{IPC: true, BlockingSync: true}) || !e.BlockingSync() {
		t.Fatalf("%s: imported event options %+v, want IPC and the exporter's BlockingSync", who, o)
	}
	again, err := e.IPCHandle()
	ok(t, err)
	if again != h || again.String() != text {
		t.Fatalf("%s: re-exported %s, imported %s", who, again, text)
	}
	done, err := e.Query()
	ok(t, err)
	if done {
		t.Fatalf("%s: the exporter's work already completed", who)
	}
	if passOn {
		fmt.Println("child: re-exported the same handle")
		cmd := exec.Command(os.Args[0], "-test.run=^TestIPC$", "-test.v")
		cmd.Env = append(os.Environ(), "CUDAGEN_IPC_CHILD="+again.String(), "CUDAGEN_IPC_GRANDCHILD=1")
		out, err := cmd.CombinedOutput()
		fmt.Printf("grandchild's output:\n%s\n", out)
		if err != nil {
			t.Fatalf("grandchild: %v", err)
		}
	}
	ok(t, e.Wait(context.Background()))
	done, err = e.Query()
	ok(t, err)
	if !done {
		t.Fatalf("%s: not complete after Wait", who)
	}
	if !passOn {
		fmt.Println("grandchild: blocking sync, pending then complete")
	}
}

// Leaked events are released by the backstop, also after their context is
// gone, and a process that exits without closing anything exits cleanly.
func TestBackstopAndExit(t *testing.T) {
	if os.Getenv("CUDAGEN_EXIT_CHILD") != "" {
		dev, err := cuda.GetDevice(0)
		ok(t, err)
		s, _ := dev.NewStream()
		for i := 0; i < 100; i++ {
			e, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
			s.Record(e)
		}
		s.Spin(50 * time.Millisecond)
		fmt.Println("child: exiting with work pending and nothing closed")
		os.Exit(0)
	}
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	before := cuda.Leaked()
	// The only open Device of this process: closing it releases the context.
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	for i := 0; i < 1000; i++ {
		_ = must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	}
	for i := 0; i < 20 && cuda.Leaked()-before < 1000; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := cuda.Leaked() - before; n < 1000 {
		t.Errorf("backstop released %d of 1000 leaked events", n)
	}
	// Leak more, close the device (the context goes when the last Device
	// closes), then collect: the backstop must tolerate the lost context.
	for i := 0; i < 100; i++ {
		_ = must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	}
	ok(t, dev.Close())
	ok(t, dev.Close())
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackstopAndExit$")
	cmd.Env = append(os.Environ(), "CUDAGEN_EXIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: exiting") {
		t.Fatalf("child exit: %v\n%s", err, out)
	}
}

// With the device closed, its objects say so.
func TestDeviceClosed(t *testing.T) {
	gpu(t)
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Close())
	ok(t, e.Close())
	ok(t, dev.Close())
	if _, err := dev.NewEvent(cuda.EventOptions{}); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("NewEvent on a closed device: %v", err)
	}
	if _, err := dev.NewStream(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("NewStream on a closed device: %v", err)
	}
	if err := dev.DefaultStream().Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("default stream of a closed device: %v", err)
	}
}

func TestRecordExternalOutsideCapture(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	// Outside stream capture the driver rejects the EXTERNAL flags; the
	// flag reaches it (cuEventRecordWithFlags, cuStreamWaitEvent).
	err := s.Record(e, cuda.RecordExternal)
	t.Logf("record external outside capture: %v", err)
	ok(t, s.Record(e))
	err = s.Wait(e, cuda.WaitExternal)
	t.Logf("wait external outside capture: %v", err)
}

// From a thread with no current context, the raw driver calls that take a
// handle mostly work, but cuEventElapsedTime does not (seen with driver
// 580, CUDA 13.0: INVALID_HANDLE). The package therefore makes the context
// current for every call; this test asserts that its Ctx variants work from
// such a thread and logs what the raw calls do.
func TestCallsFromThreadWithoutContext(t *testing.T) {
	env := newEnv(t, cuda.EventOptions{Timing: true})
	dev, s, a, b := env.dev, env.s, env.a, env.b
	runtime.LockOSThread() // the experiment needs one thread; the package never locks
	defer runtime.UnlockOSThread()
	ctx := dev.Context()
	type call struct {
		name     string
		raw, pkg func() error
	}
	calls := []call{
		{"cuEventRecord", func() error { return driver.EventRecord(a.Handle(), s.Handle()) },
			func() error { return driver.EventRecordCtx(ctx, a.Handle(), s.Handle()) }},
		{"cuEventRecordWithFlags", func() error { return driver.EventRecordWithFlags(b.Handle(), s.Handle(), 0) },
			func() error { return driver.EventRecordWithFlagsCtx(ctx, b.Handle(), s.Handle(), 0) }},
		{"cuEventSynchronize", func() error { return driver.EventSynchronize(b.Handle()) },
			func() error { return driver.EventSynchronizeCtx(ctx, b.Handle()) }},
		{"cuEventQuery", func() error { return driver.EventQuery(a.Handle()) },
			func() error { return driver.EventQueryCtx(ctx, a.Handle()) }},
		{"cuEventElapsedTime", func() error { _, err := driver.EventElapsedTime(a.Handle(), b.Handle()); return err },
			func() error { _, err := driver.EventElapsedTimeCtx(ctx, a.Handle(), b.Handle()); return err }},
		{"cuStreamWaitEvent", func() error { return driver.StreamWaitEvent(s.Handle(), a.Handle(), 0) },
			func() error { return driver.StreamWaitEventCtx(ctx, s.Handle(), a.Handle(), 0) }},
		{"cuStreamSynchronize", func() error { return driver.StreamSynchronize(s.Handle()) },
			func() error { return driver.StreamSynchronizeCtx(ctx, s.Handle()) }},
	}
	for _, c := range calls {
		ok(t, driver.CtxSetCurrent(0))
		t.Logf("raw %s with no current context: %v", c.name, c.raw())
		ok(t, driver.CtxSetCurrent(0))
		if err := c.pkg(); err != nil {
			t.Errorf("%sCtx from a thread with no current context: %v", c.name, err)
		}
		if cur, _ := driver.CtxGetCurrent(); cur != ctx {
			t.Errorf("%sCtx did not leave its context current", c.name)
		}
	}
}

func TestRecordEventAndWaitStream(t *testing.T) {
	dev := gpu(t)
	a := must[*cuda.Stream](t)(dev.NewStream())
	b := must[*cuda.Stream](t)(dev.NewStream())
	defer a.Close()
	defer b.Close()
	ok(t, a.Spin(time.Second))
	ok(t, b.WaitStream(a))
	e := must[*cuda.Event](t)(b.RecordEvent(cuda.EventOptions{Timing: true}))
	defer e.Close()
	if !e.Recorded() || !e.TimingEnabled() {
		t.Fatal("RecordEvent: not recorded with timing")
	}
	if done, _ := e.Query(); done {
		t.Fatal("b did not wait for a")
	}
	ok(t, e.Sync())
	if done, _ := a.Query(); !done {
		t.Fatal("b's event completed before a's work")
	}
}

func TestEventPool(t *testing.T) {
	dev := gpu(t)
	if _, err := dev.NewEventPool(cuda.EventOptions{IPC: true, Timing: true}, 0); !errors.Is(err, cuda.ErrInvalidOptions) {
		t.Fatalf("invalid options: %v", err)
	}
	pool := must[*cuda.EventPool](t)(dev.NewEventPool(cuda.EventOptions{Timing: true}, 4))
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	a := must[*cuda.Event](t)(pool.Get())
	b := must[*cuda.Event](t)(pool.Get())
	ok(t, s.Record(a))
	ok(t, s.Record(b))
	ok(t, b.Sync())
	pool.Put(a)
	pool.Put(b)
	if pool.Len() != 2 {
		t.Fatalf("len %d", pool.Len())
	}
	c := must[*cuda.Event](t)(pool.Get())
	if c != a && c != b {
		t.Fatal("pool did not reuse an event")
	}
	if c.Recorded() {
		t.Fatal("reused event still marked recorded")
	}
	if _, err := c.Sub(c); !errors.Is(err, cuda.ErrNotRecorded) {
		t.Fatalf("reused event: %v", err)
	}
	// An event whose work is pending is not handed out.
	ok(t, s.Spin(time.Second))
	ok(t, s.Record(c))
	pool.Put(c)
	d := must[*cuda.Event](t)(pool.Get())
	if d == c {
		t.Fatal("pool handed out an event with pending work")
	}
	if done, _ := d.Query(); !done {
		t.Fatal("event from the pool is not complete")
	}
	// Other options are closed, not pooled.
	other := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	pool.Put(other)
	if _, err := other.Query(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("foreign event: %v", err)
	}
	ok(t, s.Sync())
	pool.Put(d)
	ok(t, pool.Close())
	ok(t, pool.Close())
	if _, err := pool.Get(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
}

// Once the last Device of an ordinal is closed, its context is gone: its
// events and streams say so instead of reaching the driver.
func TestLastDeviceClosed(t *testing.T) {
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	dev := must[*cuda.Device](t)(cuda.GetDevice(0)) // the only open Device here
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	ok(t, s.Record(e))
	ok(t, dev.Close())
	for name, err := range map[string]error{
		"Query":       func() error { _, err := e.Query(); return err }(),
		"Sync":        e.Sync(),
		"Wait":        e.Wait(context.Background()),
		"Sub":         func() error { _, err := e.Sub(e); return err }(),
		"Record":      s.Record(e),
		"Stream.Sync": s.Sync(),
	} {
		if !errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), "device") {
			t.Errorf("%s after the device closed: %v", name, err)
		}
	}
	ok(t, e.Close()) // nothing to destroy: the context took it
	ok(t, s.Close())
}

// Close racing with calls from other goroutines: every call either works or
// returns ErrClosed, and nothing reaches the driver with a destroyed handle.
func TestCloseRacesWithUse(t *testing.T) {
	dev := gpu(t)
	for round := 0; round < 20; round++ {
		s := must[*cuda.Stream](t)(dev.NewStream())
		e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
		var wg sync.WaitGroup
		errs := make(chan error, 400)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					for _, err := range []error{s.Record(e), e.Sync(), s.Wait(e), func() error { _, err := e.Query(); return err }()} {
						if err != nil && !errors.Is(err, cuda.ErrClosed) {
							errs <- err
						}
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		ok(t, e.Close())
		ok(t, s.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}
