// Package lifetime decides when the cuda package's driver objects (events,
// streams, the wrappers of adopted ones, a context's Devices) may be
// destroyed, and which event handles are kept for reuse.
//
// Design. Every object has a Handle: one atomic state word (Words, in C
// memory) that holds its count of counted calls in flight and its flags
// (Closing, Finished, NoReuse, Recorded, ClosedByDevice, Waiting), and the
// Domain of its context. Hot calls do not count: inside their one cgo
// crossing they hold the word in a hazard slot of their thread
// (hazard.go), so Close never waits and the hot path pays no locked
// instruction; the other calls count themselves in and out (Enter, Exit).
// Close sets Closing; whichever of Close and the last counted call sees
// the word closing with no count left retires the object exactly once
// (the Finished bit) onto its Domain's stack of retired handles: a push
// without a lock, so that no Close waits for another goroutine.
//
// Flushes. A flush (one at a time per Domain) takes a bounded batch of the
// retired handles, runs a membarrier and scans every thread's slots:
// objects no slot holds are destroyed, or, for complete events (never
// recorded, or the driver's query says so, asked outside the lock), kept
// by creation flags for the next create (Reuse); held ones wait, marked
// Waiting, and their calls, marked late, ask for a flush when they return
// (Settle). Flushes run off Close's path: on the flusher, one goroutine of
// the process that runs while any Domain has asked (Ask: a closed stream
// or wrapper, AskEvents closed events, a late call, a closing Domain) and
// then ends; and on a create that finds no kept handle while a batch of
// LimboBatch waits (Help, which never waits for a flush in progress), so
// that creating and closing events in a loop costs no driver call in
// steady state. What waits is bounded: past HighWater, each create flushes
// a batch first (Throttle).
//
// Release. The Domain counts its live handles: the drop of the last one of
// a closing Domain makes its Release owed, which the flusher runs, handing
// the kept handles to its Owner, which then releases the context, so no
// call ever runs on a released context and a call in flight delays the
// release, never Close. The Owner does what needs the driver (destroy,
// query, release); this package calls it outside its lock, never on a
// Close's goroutine, and never calls the driver itself.
package lifetime
