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
//	err = end.Wait(ctx)             // cancellable, low-CPU, scales; end.Sync() is the driver's wait
//	d, err := end.Sub(start)        // time.Duration, like time.Time.Sub
//	fmt.Println("GPU time:", d)
//
// Building needs no CUDA toolkit or driver: the driver library is loaded on
// first use. Without one, every call returns an error matching ErrNoDriver.
// This package runs on every driver from CUDA 11.3, whichever toolkit's
// bindings it is built with (the build tags cuda11.8, cuda12.4, or none for
// 13.0): where the bindings declare a newer entry point than the driver has,
// it calls the older one (Sub: see Event.Sub). The generated package
// (cuda/driver) needs, per function, the ABI version the pinned header
// declares, and returns an error matching ErrNotSupported, naming it, on an
// older driver.
//
// Every call works from any goroutine: where the driver call depends on the
// current context, the device's context is made current inside the same cgo
// call; calls on event and stream handles, which the driver resolves through
// the handles, skip that check and make the context current only if the
// driver refuses the call (handlecall.go). LockOSThread is never needed.
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
//   - NewEvent may get the driver handle of a closed event of the same
//     options that was complete when it was retired (never recorded, or
//     the driver's query said so), so that
//     create and close cost no driver call; the event is then what a new
//     one is: complete, with the options asked for. A handle whose latest
//     record may be pending, an IPC or imported event's, and one taken with
//     Event.Handle (work may be recorded through it) are never reused.
//   - Sub distinguishes its failures: ErrTimingDisabled, ErrNotRecorded
//     (both checked before the driver is called) and ErrNotReady.
//   - IPC events cannot have timing: NewEvent rejects the combination.
//   - An event recorded on a stream of another device, or of another
//     context of the device, is ErrWrongDevice, naming both (and their
//     contexts where the device is the same).
//
// Elapsed times have the driver's resolution of about half a microsecond.
//
// # Guarantees
//
// Close, on an Event, Stream, Device or EventPool, never blocks, never
// spins and never waits for another goroutine (it takes no lock that is
// held across a driver call, and calls the driver for nothing), and is
// idempotent: it marks the object closed and returns; calls already in
// flight on it in other goroutines (a Sync on pending work, a Wait, a
// cancelled Wait's driver sleep) finish normally (a Wait returns as if the
// Close had come after it: nil once the work completes, or ctx.Err(), in
// every mode of Wait and every kind of context), and the driver object is
// destroyed once none of them holds it, never under one, by the package's
// flusher goroutine or a later NewEvent (an event's, if known complete, is
// kept for reuse instead: see NewEvent; closed events go in batches, see
// Event.Close). Closing the last open Device of an ordinal closes every
// event and stream of it the same way, and its primary context is released
// only once no call on it is in flight, so no call ever runs on a released
// context; Device.Done says when that is over.
//
//   - Safe concurrently: every method of Device, Stream, Event and
//     EventPool, Close included, from any goroutine.
//   - After Close: every call returns an error matching ErrClosed, naming the
//     object, or its device when the device's Close closed it (also for an
//     old event used with a device opened again).
//   - Nil and zero values: a nil or zero-value *Device, *Stream, *Event or
//     *EventPool, and a nil argument (a pointer, a Context, a driver event
//     or context handle, the zero IPCEventHandle), get an error matching
//     ErrInvalid that names what was nil; never a panic. (A nil handle also
//     matches the driver's result for it; a driver.Stream of 0 is not nil
//     but the NULL stream.) Accessors without an error (Ordinal, Handle,
//     Options, ...) return zero values (Ordinal -1, DefaultStream and
//     PerThreadStream nil).
//   - Bad input is refused before the driver is called: options that cannot
//     go together, unknown record or wait flags, a Spin duration outside
//     [0, MaxSpin], more than one StreamOptions, an IPC handle's text or
//     bytes that are not exactly an encoding (ErrInvalidOptions,
//     ErrMalformedHandle, which names a version it does not know); a device
//     ordinal outside int32 (ErrInvalidDevice); an event put in a pool
//     while idle in it (ErrInvalid). A stream priority outside the device's
//     range is refused (ErrInvalidOptions) after the driver is asked for the
//     range and before anything is created.
//   - No goroutine of this package panics (WaitChan's included), and none
//     outlives its call but these three kinds, each of which ends once its
//     work is done: the dispatcher that hands the waiter threads' answers
//     to long Waits, while any answer is owed (a cancelled Wait's driver
//     sleep included, until it returns); the flusher, which destroys closed
//     objects off their Close's path, while any wait for it; and, per
//     primary context released, the goroutine of the driver's release,
//     which waits for the context's pending GPU work (forever for work
//     waiting on an IPC event whose exporter died), then closes
//     Device.Done's channel.
//   - Long Waits cost bounded resources, however many run at once: at
//     most MaxBlockedWaits + 1 (17) waiter threads in the process (each
//     exits after 10s idle), one eventfd, the dispatcher, and no thread of
//     the Go runtime while they wait; cancellation returns at once. See
//     Event.Wait, and ReadWaiterStats for the counts.
//   - Closed objects waiting for their destroy are bounded: past 1,024 in a
//     context, each create in it (NewEvent, NewStream, OpenIPCEvent,
//     AdoptStream, AdoptEvent) first destroys a batch of them itself.
//   - Events and streams that are never closed are released by a
//     garbage-collection backstop (counted by Leaked); nothing is leaked by
//     closing the device first. Events come 64 to an allocation, with one
//     backstop for the 64: a reachable event delays the release of its
//     leaked neighbours.
//   - Handles made elsewhere (AdoptContext, AdoptStream, AdoptEvent) are
//     never destroyed or released by this package: Close of a wrapper, or of
//     its Device, releases only the wrapper.
//   - Every error says the operation, the cause and the next step.
package cuda
