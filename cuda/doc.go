// Package cuda is cudagen's idiomatic Go layer over the CUDA driver API:
// devices and streams; events (recording them on streams, querying,
// waiting cancellably, timing GPU work, sharing them across processes);
// modules and their kernels (loaded from PTX, CUBIN or fatbin, or compiled
// from CUDA C++ at run time with NVRTC: Device.Compile, CompileModule),
// launched with typed arguments checked against
// the kernel's parameters, or prepared once for a hot loop (PreparedLaunch);
// typed device memory (Buffer: allocated, or taken from the device's pool
// on a stream; copied from and to Go slices, synchronously or on a stream
// through page-locked staging memory of the package's, and between buffers
// and devices; set; sliced into views); and graphs: work captured from a
// stream, instantiated and launched as one (Graph, GraphExec).
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
// first use. Without one, or in a build without cgo, every call that needs
// the driver returns an error matching ErrNoDriver that says what to install
// or enable.
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
// call; calls on events and on streams other than the default ones, which
// the driver resolves through their handles, skip that check and make the
// context current only if the driver refuses the call. LockOSThread is
// never needed.
//
// These rules are the package's guarantees, stated here and nowhere else;
// the repository's docs/cuda-package.md explains the design behind them and
// lists the tests that check them, in CI on a fake driver and on the GPU.
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
//     the driver's query said so), so that create and close cost no driver
//     call; the event is then what a new one is: complete, with the options
//     asked for. Never reused: a handle whose latest record may be pending,
//     an IPC or imported event's, one taken with Event.Handle (work may be
//     recorded through it), one recorded or waited on with RecordExternal or
//     WaitExternal (a captured graph may record or wait on it at every
//     launch), and one closed by its Device's Close.
//   - Sub distinguishes its failures: ErrTimingDisabled, ErrNotRecorded
//     (both checked before the driver is called) and ErrNotReady.
//   - IPC events cannot have timing: NewEvent rejects the combination.
//   - An event recorded on a stream of another device, or of another
//     context of the device, is ErrWrongDevice, naming both (and their
//     contexts where the device is the same).
//
// Elapsed times have the driver's resolution of about half a microsecond.
//
// # Compiling
//
// Device.Compile compiles CUDA C++ with NVRTC (package cuda/nvrtc) for the
// device's compute capability (compute_XY for PTX and LTO-IR, sm_XY for a
// CUBIN), with CompileOptions' defines, include paths, in-memory headers,
// standard, debug and line information and further options, and returns
// the image with NVRTC's log; a source that does not compile returns an
// error holding the log and matching nvrtc.ErrorCompilation. Without NVRTC,
// or in a build whose toolkit has no pinned nvrtc.h, the error matches
// nvrtc.ErrNoLibrary and says what to do. A closed device is refused
// before NVRTC is called.
//
// # Graphs
//
// Stream.Capture (or BeginCapture and EndCapture) records the kernels,
// copies and memsets queued on a stream into a Graph; Graph.Instantiate
// makes a GraphExec, which Stream.LaunchGraph launches as one piece of the
// stream's work, and GraphExec.Update gives new arguments from a capture
// of the same work. A capture is the driver's stream capture in
// CU_STREAM_CAPTURE_MODE_RELAXED. The driver's other modes tie a capture to
// the OS thread that began it: in them the driver refuses potentially
// unsafe calls (cuMemAlloc, cuMemFree, synchronous copies, module loads)
// on that thread (THREAD_LOCAL), or on every thread (GLOBAL, the driver's
// default), and ends the capture only on that thread. Go runs a goroutine
// on whichever thread is free and runs other goroutines on the thread it
// leaves, so those modes would refuse unrelated goroutines' calls, break
// the capture with them, or refuse an EndCapture made from another thread.
// The relaxed mode refuses nothing on any thread and lets any thread end
// the capture, so no OS thread is locked: capture, queue the work and end
// the capture from any goroutines. Only work queued on the captured stream
// (and on streams made to wait for an event recorded on it during the
// capture) is captured; other goroutines' calls on other streams, their
// allocations and copies run as usual. Captures are refused on the default
// streams (the driver captures neither) and on blocking streams
// (StreamOptions.Blocking): work other goroutines queue on the legacy
// default stream, Buffer.CopyFrom's included, synchronises with a blocking
// stream and would invalidate its capture. A call that waits for the
// capturing stream's own work (its Sync or Query) is refused by the driver
// and invalidates the capture, which EndCapture then reports. Code that
// begins a capture itself through cuda/driver in the GLOBAL mode makes the
// driver refuse this package's potentially unsafe calls on every thread
// until it ends; cuThreadExchangeStreamCaptureMode, which sets a thread's
// own mode, cannot help a goroutine that moves between threads. Such code
// also risks the driver's crash: a driver has crashed when modules were
// loaded or unloaded on one thread while another began and ended GLOBAL
// captures, never with RELAXED ones (docs/cuda-package.md); this package
// unloads a closed Module on a goroutine of its own.
//
// # Guarantees
//
// Close, on an Event, Stream, Device, Module, Buffer, Graph or GraphExec,
// never blocks, never spins and never waits for another goroutine (it takes no lock that is
// held across a driver call, and calls the driver for nothing), and is
// idempotent: it marks the object closed and returns; calls already in
// flight on it in other goroutines (a Sync on pending work, a Wait, a
// cancelled Wait's driver sleep) finish normally (a Wait returns as if the
// Close had come after it: nil once the work completes, or ctx.Err(), in
// every mode of Wait and every kind of context), and the driver object is
// destroyed once none of them holds it, never under one, by the package's
// flusher goroutine or a later NewEvent (an event's, if known complete, is
// kept for reuse instead: see NewEvent; closed events go in batches, see
// Event.Close). Closing the last open Device of a context closes every
// event, stream, module, buffer, shared pool, graph and executable graph
// of it the same way; a primary context is released only
// once no call on it is in flight, so no call ever runs on a released
// context; Device.Done is closed when the package is done with the context.
//
//   - A Buffer view (Buffer.Slice) owns nothing: its Close releases the
//     view, never the memory, and the Close of the buffer that owns the
//     memory closes its views (their calls return ErrClosed); a view keeps
//     that buffer from the garbage collector.
//   - Safe concurrently: every method of Device, Stream, Event, Module,
//     Kernel, Buffer, Graph and GraphExec, Close included, from any
//     goroutine; a PreparedLaunch is set and launched by one goroutine at a
//     time (one used by two at once refuses the second with ErrInvalid). Work
//     queued on the GPU is the caller's to order: close a module or buffer
//     after synchronising the work that uses it (Close itself never waits
//     for it; the driver's unload or free comes later, off Close's path).
//   - After Close: every call returns an error matching ErrClosed, naming the
//     object, or its device when the device's Close closed it (also for an
//     old event used with a device opened again).
//   - Pending work after a cancelled Wait: a long Wait (past its first
//     spin) that is cancelled returns at once, and where it was blocked (see
//     Event.Wait; never in an adopted context, where a cancellable Wait
//     polls) its waiter thread stays asleep in the driver until the work
//     completes, holding its call on the event: a Close meanwhile still
//     returns at once, and the destroy (and the context's release) comes
//     when that sleep ends.
//   - Nil and zero values: a nil or zero-value *Device, *Stream, *Event,
//     *Module, *Kernel, *Buffer, *Graph, *GraphExec or
//     *PreparedLaunch, and a nil argument (a pointer, a Context, a driver event
//     or context handle, the zero IPCEventHandle), get an error matching
//     ErrInvalid that names what was nil; never a panic. A nil handle also
//     matches the driver's result for it (AdoptEvent(0) ErrInvalidHandle,
//     AdoptContext(0) driver.ErrorInvalidContext); a driver.Stream of 0 is
//     not nil but the NULL stream. Accessors without an error (Ordinal,
//     Handle, Options, ...) return zero values (Ordinal -1, DefaultStream
//     and PerThreadStream nil).
//   - Bad input is refused before the driver is called: options that cannot
//     go together, unknown record or wait flags, a Spin duration outside
//     [0, MaxSpin], more than one StreamOptions, an IPC handle's text or
//     bytes that are not exactly an encoding (ErrInvalidOptions,
//     ErrMalformedHandle, which names a version it does not know); a device
//     ordinal outside int32 (ErrInvalidDevice); a launch (or a Kernel.Prepare) whose
//     block has more threads than the kernel takes or whose SharedMem is
//     outside 0 to 2^32-1 (ErrInvalidOptions), whose kernel is of another
//     context (ErrWrongDevice), with a zero argument (ErrInvalid) or one
//     holding Go pointers (ErrInvalidType), or whose arguments' count or
//     sizes differ from the kernel's parameters where the driver tells
//     them (ErrMismatch); a PreparedLaunch.Set of another size than the
//     argument it replaces (ErrMismatch) or of an index out of range
//     (ErrInvalidOptions); a graph launched on, or updating an executable
//     graph of, another context (ErrWrongDevice); a capture of a default
//     or blocking stream (ErrInvalidOptions); a Buffer copy of another
//     length than the buffer's (ErrMismatch); a Buffer.Set value whose
//     bytes do not repeat every 1, 2 or 4 bytes, and a Buffer.Slice range
//     outside the buffer (ErrInvalidOptions); a copy between overlapping
//     ranges of one buffer (ErrInvalidOptions); a Buffer's copy or set on a
//     stream of another context (ErrWrongDevice); a copy from or to a Go
//     slice, or an AllocAsync, on a stream being captured
//     (driver.ErrorStreamCaptureUnsupported); a Buffer element type that
//     holds Go pointers, has no size or has a part of size 0 (an empty
//     struct or array, which C lacks; ErrInvalidType). A stream priority outside the device's
//     range is refused (ErrInvalidOptions), never clamped, after the driver
//     is asked for the range and before anything is created.
//   - A call that may run a compiler in the calling thread (LoadModule,
//     LoadModuleFile, CompileModule's load, and in the driver, nvrtc and
//     nvjitlink packages every load, link and compile listed as a compiler
//     in the generator's config) blocks the thread's asynchronous signals
//     for the call and restores its mask after: the driver's PTX JIT
//     compiler crashed in Go processes with asynchronous preemption
//     (SIGURG) on, and did not with the compiling thread's signals
//     blocked. Signals sent to that thread wait until the call returns;
//     the process's go to its other threads. So a CPU profile (SIGPROF)
//     samples such a call at most once, and a thread the compiler starts
//     during the call keeps the blocked mask. A JIT link also needs its
//     calls on one OS thread: cuda/driver's and nvjitlink's links run
//     theirs on a thread the link owns, and so, as a precaution, do
//     nvrtc's programs (those of CompileModule among them), whose
//     thread's goroutine ends when the program is destroyed
//     (docs/cuda-package.md, "JIT links and OS threads").
//   - No goroutine of this package panics, and none outlives its call but
//     these four kinds, each of which ends once its work is done: the
//     dispatcher that hands the waiter threads' answers to long Waits,
//     while any answer is owed (a cancelled Wait's driver sleep included,
//     until it returns); the flusher, which destroys closed objects off
//     their Close's path, while any wait for it; per context, the
//     goroutine of its calls that may wait for its pending GPU work, in
//     order: the frees of its buffers and of its asynchronous copies'
//     staging memory, the unloads of its modules and, last,
//     the release of a primary context (forever for work waiting on an IPC
//     event whose exporter died), after which it closes Device.Done's
//     channel; and
//     WaitChan's, until it has delivered its Wait's result.
//   - Long Waits cost bounded resources, however many run at once: at
//     most MaxBlockedWaits + 1 (17 on Linux with cgo) waiter threads in the
//     process (each exits after 10s idle), one eventfd, the dispatcher, and
//     no thread of the Go runtime while they wait; cancellation returns at
//     once. See Event.Wait, and ReadWaiterStats for the counts.
//   - Closed objects waiting for their destroy are bounded: past 1,024 in a
//     context, each create in it (NewEvent, NewStream, OpenIPCEvent,
//     AdoptStream, AdoptEvent, LoadModule, AdoptModule, Alloc, AllocAsync,
//     EndCapture,
//     Instantiate, AdoptGraph, AdoptGraphExec) first
//     destroys a batch of them itself.
//   - Events, streams, modules, buffers, graphs and executable graphs that
//     are never closed are
//     released by a garbage-collection backstop (counted by Leaked); nothing is leaked by
//     closing the device first. Events come 64 to an allocation, with one
//     backstop for the 64: a reachable event delays the release of its
//     leaked neighbours.
//   - Handles made elsewhere (AdoptContext, AdoptStream, AdoptEvent,
//     AdoptModule, AdoptGraph, AdoptGraphExec) are
//     never destroyed or released by this package: Close of a wrapper, or of
//     its Device, releases only the wrapper.
//   - No allocation: in steady state, Record, Query, Sub, Sync, Wait,
//     Stream.Wait, Stream.Launch, Stream.LaunchGraph, PreparedLaunch.Set,
//     Stream.LaunchPrepared, and Buffer's CopyFrom, CopyTo, CopyFromBuffer,
//     Set and SetAsync allocate nothing, nor does Buffer.CopyFromAsync once its
//     context has idle staging memory (CopyToAsync allocates its host
//     function), and a long Wait, once its context has a waiter, allocates
//     nothing of its own.
//   - Errors say the operation, the cause and the next step: every error
//     the package returns is an *Error, or wraps the generated layer's error
//     (ErrNoDriver, ErrNotSupported), with a message "cuda: operation:
//     cause; fix"; the one exception is ctx.Err(), which Wait and WaitChan
//     return as it is. Each matches its sentinel with errors.Is, and a
//     driver's error also its driver.Result. A driver too old for the
//     bindings' entry point names the build tag of older pinned bindings
//     that it supports, where there is one (-tags cuda12.4).
package cuda
