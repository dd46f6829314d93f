// Package cuda is cudagen's idiomatic Go layer over the CUDA driver API's
// event management: creating events, recording them on streams, querying,
// waiting (cancellably), timing GPU work and sharing events across processes.
//
//	dev, err := cuda.GetDevice(0)   // retains the primary context; dev.Close() releases it
//	s, err := dev.NewStream()       // non-blocking stream; dev.DefaultStream() is the NULL stream
//	start, err := dev.NewEvent(cuda.EventOptions{Timing: true})
//	end, err := dev.NewEvent(cuda.EventOptions{Timing: true})
//	err = s.Record(start)
//	// ... GPU work on s ...
//	err = s.Record(end)
//	err = end.Wait(ctx)             // cancellable, low-CPU; end.Sync() is the driver's wait
//	d, err := end.Sub(start)        // time.Duration, like time.Time.Sub
//	fmt.Println("GPU time:", d)
//
// Building needs no CUDA toolkit or driver: the driver library is loaded on
// first use. Without one, every call returns an error matching ErrNoDriver;
// a driver too old for a function returns one matching ErrNotSupported.
//
// Every call works from any goroutine: the device's context is made current
// inside the same cgo call as the driver call, so LockOSThread is never
// needed.
//
// # Semantics kept from the driver
//
//   - An event never recorded is complete: Query reports true and Sync and
//     Wait return at once (the driver's "empty set of work"). Sub, which
//     needs timestamps, returns ErrNotRecorded instead.
//   - Recording again overwrites: Query, Sync, Wait and Sub refer to the
//     latest Record.
//   - Close does not wait for pending work; the driver frees the event when
//     the work completes.
//   - Sub distinguishes its failures: ErrTimingDisabled, ErrNotRecorded
//     (both checked before the driver is called) and ErrNotReady.
//   - IPC events cannot have timing: NewEvent rejects the combination.
//   - An event recorded on a stream of another device is ErrWrongDevice,
//     naming both.
//
// Elapsed times have the driver's resolution of about half a microsecond.
//
// Closing is idempotent, and use after Close returns ErrClosed. Events and
// streams that are never closed are released by a garbage-collection
// backstop (counted by Leaked), which does nothing once their device's
// context is gone.
package cuda
