// Package lifetime decides when the cuda package's driver objects (events,
// streams, the wrappers of adopted ones, a context's Devices) may be
// destroyed, and which event handles are kept for reuse.
//
// Design. Every object has a Handle: one atomic state word (Words, in C
// memory) that holds its count of counted calls in flight and its flags
// (Closing, Finished, NoReuse, Recorded, ClosedByDevice), and the Domain of
// its context. Hot calls do not count: inside their one cgo crossing they
// hold the word in a hazard slot of their thread (hazard.go), so Close
// never waits and the hot path pays no locked instruction; the other calls
// count themselves in and out (Enter, Exit). Close sets Closing; whichever
// of Close and the last counted call sees the word closing with no count
// left retires the object exactly once (the Finished bit) into its Domain's
// limbo. A flush (one at a time per Domain) takes the limbo, runs a
// membarrier and scans every thread's slots: objects no slot holds are
// destroyed, or, for complete events (never recorded, or the driver's query
// says so, asked outside the lock), kept by creation flags for the next
// create (Reuse); held ones go back to the limbo and their calls, marked
// late, flush when they return (Settle). Events are flushed in batches of
// LimboBatch, everything else at once, and everything once the Domain is
// closing. The Domain also counts its live handles: the drop of the last
// one of a closing Domain hands the kept handles to its Owner, which then
// releases the context, so no call ever runs on a released context and a
// call in flight delays the release, never Close. The Owner does what needs
// the driver (destroy, query, release); this package calls it outside its
// lock and never calls the driver itself.
package lifetime
