package cuda_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// The examples check every error as real code would: without a driver or a
// GPU each prints its first error (one matching cuda.ErrNoDriver or
// cuda.ErrNoDevice) and returns.

// Timing GPU work with two events (cuda.core's timing example; torch's
// Event(enable_timing=True) and elapsed_time).
func Example_timing() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	s, err := dev.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	start, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer start.Close()
	end, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer end.Close()

	if err := s.Record(start); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Spin(5 * time.Millisecond); err != nil { // GPU work of known duration
		fmt.Println(err)
		return
	}
	if err := s.Record(end); err != nil {
		fmt.Println(err)
		return
	}
	if err := end.Wait(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	d, err := end.Sub(start)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d >= 4*time.Millisecond)
	// Output: true
}

// Record, query, synchronize (torch.cuda.Event.record / query / synchronize).
func Example_query() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	s, err := dev.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ev, err := dev.NewEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ev.Close()

	done, err := ev.Query() // never recorded: complete
	fmt.Println(done, err)

	if err := s.Spin(50 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Record(ev); err != nil {
		fmt.Println(err)
		return
	}
	done, err = ev.Query() // the work is pending
	fmt.Println(done, err)

	if err := ev.Sync(); err != nil {
		fmt.Println(err)
		return
	}
	done, err = ev.Query()
	fmt.Println(done, err)
	// Output:
	// true <nil>
	// false <nil>
	// true <nil>
}

// One stream waits for another without blocking the host
// (torch.cuda.Event.wait / Stream.wait_event; cuStreamWaitEvent).
func Example_streamWait() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	producer, err := dev.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer producer.Close()
	consumer, err := dev.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer consumer.Close()
	ready, err := dev.NewEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ready.Close()

	if err := producer.Spin(20 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	if err := producer.Record(ready); err != nil {
		fmt.Println(err)
		return
	}
	if err := consumer.Wait(ready); err != nil { // work queued on consumer from now on waits
		fmt.Println(err)
		return
	}
	done, err := consumer.RecordEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done.Close()

	fmt.Println(done.Query())
	fmt.Println(done.Sync(), ready.Recorded())
	// Output:
	// false <nil>
	// <nil> true
}

// Waiting with a deadline, and in a select.
func Example_wait() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	s, err := dev.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ev, err := dev.NewEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ev.Close()

	if err := s.Spin(200 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Record(ev); err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err = ev.Wait(ctx)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))

	select {
	case err := <-ev.WaitChan(context.Background()):
		fmt.Println("done:", err)
	case <-time.After(10 * time.Second):
		fmt.Println("timed out")
	}
	// Output:
	// true
	// done: <nil>
}

// The legacy default stream (MAX's DeviceEvent on the device's default
// stream), with an event that sleeps rather than spins while waited for.
func Example_defaultStream() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	s := dev.DefaultStream()
	ev, err := dev.NewEvent(cuda.EventOptions{BlockingSync: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ev.Close()

	if err := s.Spin(time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Record(ev); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Sync(), ev.BlockingSync())
	// Output: <nil> true
}

// The per-thread default stream does not wait for blocking streams; the
// legacy default stream does.
func Example_perThreadStream() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	blocking, err := dev.NewStream(cuda.StreamOptions{Blocking: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer blocking.Close()
	if err := blocking.Spin(300 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}

	// A mark on the per-thread stream completes while blocking still runs.
	mark, err := dev.PerThreadStream().RecordEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mark.Close()
	if err := mark.Sync(); err != nil {
		fmt.Println(err)
		return
	}
	idle, err := blocking.Query()
	fmt.Println("per-thread mark done; blocking stream idle:", idle, err)

	// A mark on the legacy stream completes only after blocking's work.
	legacy, err := dev.DefaultStream().RecordEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer legacy.Close()
	if err := legacy.Sync(); err != nil {
		fmt.Println(err)
		return
	}
	idle, err = blocking.Query()
	fmt.Println("legacy mark done; blocking stream idle:", idle, err)
	// Output:
	// per-thread mark done; blocking stream idle: false <nil>
	// legacy mark done; blocking stream idle: true <nil>
}

// Elapsed-time errors say what was wrong.
func Example_errors() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	a, err := dev.NewEvent(cuda.EventOptions{Timing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := dev.NewEvent(cuda.EventOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	_, err = b.Sub(a)
	fmt.Println(errors.Is(err, cuda.ErrTimingDisabled))
	_, err = a.Sub(a)
	fmt.Println(errors.Is(err, cuda.ErrNotRecorded))
	fmt.Println(err)
	_, err = dev.NewEvent(cuda.EventOptions{IPC: true, Timing: true})
	fmt.Println(errors.Is(err, cuda.ErrInvalidOptions))
	// Output:
	// true
	// true
	// cuda: elapsed time between events: the start event was never recorded; record both events on a stream before calling Sub
	// true
}

// A stream and an event made elsewhere, here by the generated layer standing
// in for a C library that hands over its CUstream and CUevent as uintptrs
// (torch.cuda.ExternalStream, cuda.core's Stream.from_handle). The wrappers
// work like the package's own; closing them leaves the handles to their
// creator.
func Example_adopt() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()

	// The other library's side: it creates, and later destroys, the handles.
	rawStream, err := driver.StreamCreateCtx(dev.Context(), driver.StreamNonBlocking)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer driver.StreamDestroyCtx(dev.Context(), rawStream)
	rawEvent, err := driver.EventCreateCtx(dev.Context(), driver.EventDisableTiming)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer driver.EventDestroyCtx(dev.Context(), rawEvent)
	cStream, cEvent := uintptr(rawStream), uintptr(rawEvent)

	// Ours: adopt, use, close.
	s, err := dev.AdoptStream(driver.Stream(cStream))
	if err != nil {
		fmt.Println(err)
		return
	}
	ev, err := dev.AdoptEvent(driver.Event(cEvent), cuda.EventOptions{}) // created without timing
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Spin(10 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Record(ev); err != nil {
		fmt.Println(err)
		return
	}
	if err := ev.Wait(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Close(), ev.Close())
	_, err = ev.Query()
	fmt.Println(errors.Is(err, cuda.ErrClosed))

	// The handles are still the other library's, and valid.
	fmt.Println(driver.EventQueryCtx(dev.Context(), rawEvent), driver.StreamQueryCtx(dev.Context(), rawStream))
	// Output:
	// <nil> <nil>
	// true
	// <nil> <nil>
}

// ipcChildArg, as os.Args[1], makes this test binary the other process of
// Example_ipc (see TestMain).
const ipcChildArg = "cudagen-example-ipc-child"

// Sharing an event with another process (torch's ipc_handle /
// from_ipc_handle, cuda.core's get_ipc_descriptor / from_ipc_descriptor).
// The handle travels as text (MarshalText), here as an argument of the
// other process, which is this program run again (ipcChild); the driver
// refuses to open a handle in the process that made it.
func Example_ipc() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	s, err := dev.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ev, err := dev.NewEvent(cuda.EventOptions{IPC: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ev.Close()
	h, err := ev.IPCHandle()
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := h.MarshalText()
	if err != nil {
		fmt.Println(err)
		return
	}

	// Work the other process waits for.
	if err := s.Spin(time.Second); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Record(ev); err != nil {
		fmt.Println(err)
		return
	}
	out, err := exec.Command(os.Args[0], ipcChildArg, string(text)).CombinedOutput()
	fmt.Print(string(out))
	if err != nil {
		fmt.Println(err)
		return
	}
	done, err := ev.Query() // the other process waited for it
	fmt.Println("parent: complete:", done, err)
	// Output:
	// child: opened the event and waited for it
	// parent: complete: true <nil>
}

// ipcChild is Example_ipc's other process: it decodes the handle, opens the
// event in its own context and waits for the parent's work.
func ipcChild(text string) error {
	var h cuda.IPCEventHandle
	if err := h.UnmarshalText([]byte(text)); err != nil {
		return err
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		return err
	}
	defer dev.Close()
	ev, err := dev.OpenIPCEvent(h)
	if err != nil {
		return err
	}
	defer ev.Close()
	if err := ev.Wait(context.Background()); err != nil {
		return err
	}
	fmt.Println("child: opened the event and waited for it")
	return nil
}

// An IPC handle in a JSON message: it travels as its text form. Needs no GPU.
func ExampleIPCEventHandle_MarshalText() {
	type hello struct {
		PID   int                 `json:"pid"`
		Event cuda.IPCEventHandle `json:"event"`
	}
	var dh driver.IPCEventHandle
	dh[0], dh[63] = 0xca, 0xfe
	// From Event.IPCHandle: the driver's handle and the event's options.
	h := cuda.NewIPCEventHandle(dh, cuda.EventOptions{IPC: true, BlockingSync: true})
	msg, err := json.Marshal(hello{PID: 42, Event: h})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(msg))

	var got hello
	if err := json.Unmarshal(msg, &got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Event == h, got.Event.Options().BlockingSync)

	// A damaged handle is an error, never a short handle.
	err = json.Unmarshal([]byte(`{"pid":42,"event":"cuipcev2:AcoAAA"}`), &got)
	fmt.Println(errors.Is(err, cuda.ErrMalformedHandle))
	// So is one of an encoding this package does not know.
	err = json.Unmarshal([]byte(`{"pid":42,"event":"cuipcev3:AcoAAA"}`), &got)
	fmt.Println(err)
	// Output:
	// {"pid":42,"event":"cuipcev2:AcoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAP4"}
	// true true
	// true
	// cuda: decode IPC event handle: the handle is of encoding version 3, and this package knows versions 1 and 2; upgrade this program's cudagen module to the exporter's, or have the exporter write version 2
}

// addOnePTX is add_one(float *x, unsigned n), which adds 1 to each x[i]
// below n: nvcc --ptx of extern "C" __global__ void add_one(float *x,
// unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i <
// n) x[i] += 1; }
const addOnePTX = `.version 6.0
.target sm_50
.address_size 64
.visible .entry add_one(.param .u64 p, .param .u32 n)
{
	.reg .pred %p1;
	.reg .b32 %r<6>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	add.f32 %f2, %f1, 0f3F800000;
	st.global.f32 [%rd4], %f2;
DONE:
	ret;
}
`

// Capturing three launches into a graph, replaying it 1,000 times, and
// updating its arguments to another buffer (cuda.core's GraphBuilder,
// torch.cuda.CUDAGraph).
func Example_graph() {
	if err := graph(); err != nil {
		fmt.Println(err)
	}
}

func graph() error {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		return err
	}
	defer dev.Close()
	mod, err := dev.LoadModule([]byte(addOnePTX))
	if err != nil {
		return err
	}
	defer mod.Close()
	addOne, err := mod.Kernel("add_one")
	if err != nil {
		return err
	}
	const n = 1 << 20
	a, err := cuda.AllocFrom(dev, make([]float32, n))
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := cuda.AllocFrom(dev, make([]float32, n))
	if err != nil {
		return err
	}
	defer b.Close()
	s, err := dev.NewStream() // captures need a non-blocking stream: NewStream's default
	if err != nil {
		return err
	}
	defer s.Close()
	// Three launches on x, recorded, not run. The capture may be begun,
	// fed and ended from any goroutines: no thread is locked.
	three := func(x *cuda.Buffer[float32]) func(*cuda.Stream) error {
		return func(s *cuda.Stream) error {
			for range 3 {
				if err := s.Launch(addOne, cuda.Linear(n, 256), x.Arg(), driver.Arg(uint32(n))); err != nil {
					return err
				}
			}
			return nil
		}
	}
	g, err := s.Capture(three(a))
	if err != nil {
		return err
	}
	defer g.Close()
	exec, err := g.Instantiate()
	if err != nil {
		return err
	}
	defer exec.Close()
	for range 1000 {
		if err := s.LaunchGraph(exec); err != nil { // one driver call for the three kernels
			return err
		}
	}
	// The same work on b: the next launches use the new arguments.
	g2, err := s.Capture(three(b))
	if err != nil {
		return err
	}
	defer g2.Close()
	if err := exec.Update(g2); err != nil {
		return err
	}
	if err := s.LaunchGraph(exec); err != nil {
		return err
	}
	if err := s.Sync(); err != nil {
		return err
	}
	ha, hb := make([]float32, n), make([]float32, n)
	if err := a.CopyTo(ha); err != nil {
		return err
	}
	if err := b.CopyTo(hb); err != nil {
		return err
	}
	fmt.Println(ha[0], ha[n-1], hb[0], hb[n-1]) // 3000 3000 3 3
	return nil
}

// Copies at the copy engine's speed: values written into page-locked host
// memory (cuda.core's pinned memory resource, torch's pin_memory) go to
// the device and back without staging.
func Example_hostBuffer() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	h, err := cuda.AllocHost[float32](dev, 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	x := h.Slice() // valid until h.Close
	for i := range x {
		x[i] = float32(i)
	}
	b, err := cuda.AllocFrom(dev, x) // the copy engine reads x directly
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	clear(x)
	if err := b.CopyTo(x); err != nil { // and writes it directly
		fmt.Println(err)
		return
	}
	fmt.Println(x[1<<20-1])
	// Output: 1.048575e+06
}
