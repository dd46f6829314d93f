package cuda_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// Timing GPU work with two events (cuda.core's timing example; torch's
// Event(enable_timing=True) and elapsed_time).
func Example_timing() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	s, _ := dev.NewStream()
	defer s.Close()
	start, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
	end, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
	defer start.Close()
	defer end.Close()

	s.Record(start)
	s.Spin(5 * time.Millisecond) // GPU work of known duration
	s.Record(end)
	if err := end.Sync(); err != nil {
		fmt.Println(err)
		return
	}
	d, err := end.Sub(start)
	fmt.Println(err, d >= 4*time.Millisecond && d < 50*time.Millisecond)
	// Output: <nil> true
}

// Record, query, synchronize (torch.cuda.Event.record / query / synchronize).
func Example_query() {
	dev, _ := cuda.GetDevice(0)
	defer dev.Close()
	s, _ := dev.NewStream()
	defer s.Close()
	ev, _ := dev.NewEvent(cuda.EventOptions{})
	defer ev.Close()

	done, err := ev.Query() // never recorded: complete
	fmt.Println(done, err)

	s.Spin(50 * time.Millisecond)
	s.Record(ev)
	done, err = ev.Query() // the work is pending
	fmt.Println(done, err)

	ev.Sync()
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
	dev, _ := cuda.GetDevice(0)
	defer dev.Close()
	producer, _ := dev.NewStream()
	consumer, _ := dev.NewStream()
	defer producer.Close()
	defer consumer.Close()
	ready, _ := dev.NewEvent(cuda.EventOptions{})
	defer ready.Close()

	producer.Spin(20 * time.Millisecond)
	producer.Record(ready)
	consumer.Wait(ready) // work queued on consumer from now on waits
	done, _ := dev.NewEvent(cuda.EventOptions{})
	defer done.Close()
	consumer.Record(done)

	fmt.Println(done.Query())
	fmt.Println(done.Sync(), ready.Recorded())
	// Output:
	// false <nil>
	// <nil> true
}

// Waiting with a deadline, and in a select.
func Example_wait() {
	dev, _ := cuda.GetDevice(0)
	defer dev.Close()
	s, _ := dev.NewStream()
	defer s.Close()
	ev, _ := dev.NewEvent(cuda.EventOptions{})
	defer ev.Close()

	s.Spin(200 * time.Millisecond)
	s.Record(ev)
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
	// Output:
	// true
	// done: <nil>
}

// The default stream (MAX's DeviceEvent on the device's default stream).
func Example_defaultStream() {
	dev, _ := cuda.GetDevice(0)
	defer dev.Close()
	s := dev.DefaultStream()
	ev, _ := dev.NewEvent(cuda.EventOptions{BlockingSync: true})
	defer ev.Close()

	s.Spin(time.Millisecond)
	s.Record(ev)
	fmt.Println(ev.Sync(), ev.BlockingSync())
	// Output: <nil> true
}

// Elapsed-time errors say what was wrong.
func Example_errors() {
	dev, _ := cuda.GetDevice(0)
	defer dev.Close()
	a, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
	b, _ := dev.NewEvent(cuda.EventOptions{})
	defer a.Close()
	defer b.Close()

	_, err := b.Sub(a)
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

// Sharing an event with another process (torch's ipc_handle / from_ipc_handle,
// cuda.core's get_ipc_descriptor / from_ipc_descriptor). The receiving side is
// another process: the driver refuses to open a handle where it was made.
func Example_ipc() {
	dev, _ := cuda.GetDevice(0)
	defer dev.Close()
	ev, _ := dev.NewEvent(cuda.EventOptions{IPC: true})
	defer ev.Close()
	h, err := ev.IPCHandle()
	// Send h's bytes to the other process, which opens and waits for it:
	//   peer, err := dev.OpenIPCEvent(h)
	//   err = peer.Wait(ctx)
	fmt.Println(err, len(h))

	// Output: <nil> 64
}
