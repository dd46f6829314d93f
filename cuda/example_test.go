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

// The examples check every error as real code would and print the one
// that stops them: without a driver or a GPU, GetDevice's (one matching
// cuda.ErrNoDriver or cuda.ErrNoDevice). Example_timing opens its device,
// stream and events and checks each itself, as a program would. The others
// are the body of a call of onDevice, onStream or onStreamAndEvent, which
// open device 0 (and a stream, and an event, on it) for the body, close
// them when it returns and print the error it returns. Calls that only
// queue work on streams are checked together, with errors.Join.

// onDevice opens device 0, runs body with it and closes it. It prints
// GetDevice's error, or the one body returns.
func onDevice(body func(dev *cuda.Device) error) {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	if err := body(dev); err != nil {
		fmt.Println(err)
	}
}

// onStream is onDevice with, for body, a new stream of opts on device 0
// (s.Device() is the device), closed when body returns.
func onStream(opts cuda.StreamOptions, body func(s *cuda.Stream) error) {
	onDevice(func(dev *cuda.Device) error {
		s, err := dev.NewStream(opts)
		if err != nil {
			return err
		}
		defer s.Close()
		return body(s)
	})
}

// onStreamAndEvent is onStream with a stream of the default options and,
// besides, a new event of opts on its device, closed when body returns.
func onStreamAndEvent(opts cuda.EventOptions, body func(s *cuda.Stream, ev *cuda.Event) error) {
	onStream(cuda.StreamOptions{}, func(s *cuda.Stream) error {
		ev, err := s.Device().NewEvent(opts)
		if err != nil {
			return err
		}
		defer ev.Close()
		return body(s, ev)
	})
}

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

	err = errors.Join(
		s.Record(start),
		s.Spin(5*time.Millisecond), // GPU work of known duration
		s.Record(end),
	)
	if err != nil {
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
	onStreamAndEvent(cuda.EventOptions{}, func(s *cuda.Stream, ev *cuda.Event) error {
		done, err := ev.Query() // never recorded: complete
		fmt.Println(done, err)

		if err := errors.Join(s.Spin(50*time.Millisecond), s.Record(ev)); err != nil {
			return err
		}
		done, err = ev.Query() // the work is pending
		fmt.Println(done, err)

		if err := ev.Sync(); err != nil {
			return err
		}
		done, err = ev.Query()
		fmt.Println(done, err)
		return nil
	})
	// Output:
	// true <nil>
	// false <nil>
	// true <nil>
}

// One stream waits for another without blocking the host
// (torch.cuda.Event.wait / Stream.wait_event; cuStreamWaitEvent).
func Example_streamWait() {
	onStreamAndEvent(cuda.EventOptions{}, func(producer *cuda.Stream, ready *cuda.Event) error {
		consumer, err := producer.Device().NewStream()
		if err != nil {
			return err
		}
		defer consumer.Close()

		err = errors.Join(
			producer.Spin(20*time.Millisecond),
			producer.Record(ready),
			consumer.Wait(ready), // work queued on consumer from now on waits
		)
		if err != nil {
			return err
		}
		done, err := consumer.RecordEvent(cuda.EventOptions{})
		if err != nil {
			return err
		}
		defer done.Close()

		fmt.Println(done.Query())
		fmt.Println(done.Sync(), ready.Recorded())
		return nil
	})
	// Output:
	// false <nil>
	// <nil> true
}

// Waiting with a deadline, and in a select.
func Example_wait() {
	onStreamAndEvent(cuda.EventOptions{}, func(s *cuda.Stream, ev *cuda.Event) error {
		if err := errors.Join(s.Spin(200*time.Millisecond), s.Record(ev)); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		err := ev.Wait(ctx)
		fmt.Println(errors.Is(err, context.DeadlineExceeded))

		select {
		case err := <-ev.WaitChan(context.Background()):
			fmt.Println("done:", err)
		case <-time.After(10 * time.Second):
			fmt.Println("timed out")
		}
		return nil
	})
	// Output:
	// true
	// done: <nil>
}

// The legacy default stream (MAX's DeviceEvent on the device's default
// stream), with an event that sleeps rather than spins while waited for.
func Example_defaultStream() {
	onDevice(func(dev *cuda.Device) error {
		s := dev.DefaultStream()
		ev, err := dev.NewEvent(cuda.EventOptions{BlockingSync: true})
		if err != nil {
			return err
		}
		defer ev.Close()

		if err := errors.Join(s.Spin(time.Millisecond), s.Record(ev)); err != nil {
			return err
		}
		fmt.Println(ev.Sync(), ev.BlockingSync())
		return nil
	})
	// Output: <nil> true
}

// The per-thread default stream does not wait for blocking streams; the
// legacy default stream does.
func Example_perThreadStream() {
	onStream(cuda.StreamOptions{Blocking: true}, func(blocking *cuda.Stream) error {
		if err := blocking.Spin(300 * time.Millisecond); err != nil {
			return err
		}
		dev := blocking.Device()

		// markAndSync records a mark on s and waits for it.
		markAndSync := func(s *cuda.Stream) error {
			mark, err := s.RecordEvent(cuda.EventOptions{})
			if err != nil {
				return err
			}
			defer mark.Close()
			return mark.Sync()
		}

		// A mark on the per-thread stream completes while blocking still runs.
		if err := markAndSync(dev.PerThreadStream()); err != nil {
			return err
		}
		idle, err := blocking.Query()
		fmt.Println("per-thread mark done; blocking stream idle:", idle, err)

		// A mark on the legacy stream completes only after blocking's work.
		if err := markAndSync(dev.DefaultStream()); err != nil {
			return err
		}
		idle, err = blocking.Query()
		fmt.Println("legacy mark done; blocking stream idle:", idle, err)
		return nil
	})
	// Output:
	// per-thread mark done; blocking stream idle: false <nil>
	// legacy mark done; blocking stream idle: true <nil>
}

// Elapsed-time errors say what was wrong.
func Example_errors() {
	onDevice(func(dev *cuda.Device) error {
		a, err := dev.NewEvent(cuda.EventOptions{Timing: true})
		if err != nil {
			return err
		}
		defer a.Close()
		b, err := dev.NewEvent(cuda.EventOptions{})
		if err != nil {
			return err
		}
		defer b.Close()

		_, err = b.Sub(a)
		fmt.Println(errors.Is(err, cuda.ErrTimingDisabled))
		_, err = a.Sub(a)
		fmt.Println(errors.Is(err, cuda.ErrNotRecorded))
		fmt.Println(err)
		_, err = dev.NewEvent(cuda.EventOptions{IPC: true, Timing: true})
		fmt.Println(errors.Is(err, cuda.ErrInvalidOptions))
		return nil
	})
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
	onDevice(func(dev *cuda.Device) error {
		// The other library's side: it creates, and later destroys, the handles.
		rawStream, err := driver.StreamCreateCtx(dev.Context(), driver.StreamNonBlocking)
		if err != nil {
			return err
		}
		defer driver.StreamDestroyCtx(dev.Context(), rawStream)
		rawEvent, err := driver.EventCreateCtx(dev.Context(), driver.EventDisableTiming)
		if err != nil {
			return err
		}
		defer driver.EventDestroyCtx(dev.Context(), rawEvent)
		cStream, cEvent := uintptr(rawStream), uintptr(rawEvent)

		// Ours: adopt, use, close.
		s, err := dev.AdoptStream(driver.Stream(cStream))
		if err != nil {
			return err
		}
		ev, err := dev.AdoptEvent(driver.Event(cEvent), cuda.EventOptions{}) // created without timing
		if err != nil {
			return err
		}
		if err := errors.Join(s.Spin(10*time.Millisecond), s.Record(ev)); err != nil {
			return err
		}
		if err := ev.Wait(context.Background()); err != nil {
			return err
		}
		fmt.Println(s.Close(), ev.Close())
		_, err = ev.Query()
		fmt.Println(errors.Is(err, cuda.ErrClosed))

		// The handles are still the other library's, and valid.
		fmt.Println(driver.EventQueryCtx(dev.Context(), rawEvent), driver.StreamQueryCtx(dev.Context(), rawStream))
		return nil
	})
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
	onStreamAndEvent(cuda.EventOptions{IPC: true}, func(s *cuda.Stream, ev *cuda.Event) error {
		h, err := ev.IPCHandle()
		if err != nil {
			return err
		}
		text, err := h.MarshalText()
		if err != nil {
			return err
		}

		// Work the other process waits for.
		if err := errors.Join(s.Spin(time.Second), s.Record(ev)); err != nil {
			return err
		}
		out, err := exec.Command(os.Args[0], ipcChildArg, string(text)).CombinedOutput()
		fmt.Print(string(out))
		if err != nil {
			return err
		}
		done, err := ev.Query() // the other process waited for it
		fmt.Println("parent: complete:", done, err)
		return nil
	})
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
	onDevice(func(dev *cuda.Device) error {
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
	})
}

// Copies at the copy engine's speed: values written into page-locked host
// memory (cuda.core's pinned memory resource, torch's pin_memory) go to
// the device and back without staging.
func Example_hostBuffer() {
	onDevice(func(dev *cuda.Device) error {
		h, err := cuda.AllocHost[float32](dev, 1<<20)
		if err != nil {
			return err
		}
		defer h.Close()
		x := h.Slice() // valid until h.Close
		for i := range x {
			x[i] = float32(i)
		}
		b, err := cuda.AllocFrom(dev, x) // the copy engine reads x directly
		if err != nil {
			return err
		}
		defer b.Close()
		clear(x)
		if err := b.CopyTo(x); err != nil { // and writes it directly
			return err
		}
		fmt.Println(x[1<<20-1])
		return nil
	})
	// Output: 1.048575e+06
}
