// Hazard slots make the cuda package's hot driver calls safe against a
// concurrent Close without a locked instruction per call.
//
// Every object of the cuda package has a state word (its closing bit, its
// calls in flight, whether an event was recorded). A hot call does not count
// itself in and out of the word: inside its one cgo crossing, the C side
// writes the word's address into a hazard slot of the calling OS thread,
// checks the closing bit, calls the driver and clears the slot. Close sets
// the closing bit and retires the object; the object is destroyed
// only after a barrier (Barrier) and a scan of every thread's slots
// (Held) finds no slot holding its word. A flush that finds one held marks
// the holding thread late (MarkLate), runs a second barrier and scans
// again: the words still held then are their calls' to flush, for each
// such call reads its thread's mark after clearing its slot and reports
// Late; the call never reads the objects' words after the driver call,
// whose lines the driver is likely to have evicted.
//
// The ordering of "slot, then closing bit" against "closing bit, then
// slots" needs a full barrier on each side. On Linux with
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) the calls pay none: Barrier
// makes the kernel run one on every thread of the process (asymmetric
// fences, as in liburcu and folly's hazard pointers; none while no other
// thread has made a call), so the calls need only compiler barriers. Elsewhere, or where the kernel refuses to
// register, or with CUDAGEN_HAZARD=fence, the calls use sequentially
// consistent stores and loads (one locked instruction each on amd64) and
// Barrier does nothing.
//
// A thread's slots live in its static TLS, listed from its first call to
// its exit. The state words
// themselves live in C memory (Words), so C reads them under the cgo
// rules.

package lifetime

import "sync/atomic"

// Bits of a state word: the C side reads Closing and sets Recorded; the
// cuda package's guard uses all of them.
const (
	Closing  = int64(1) << 33 // Close has begun: no new calls
	NoReuse  = int64(1) << 35 // an event whose driver handle must not be reused
	Recorded = int64(1) << 36 // an event recorded at least once (Record sets it)
)

// The hot calls, each with its entry point (SetFn). The first five
// (OpRecord to OpElapsed) are copied into each thread's slot record, so that
// their calls read one cache line less.
const (
	OpRecord = iota
	OpRecordFlags
	OpQuery
	OpSync
	OpElapsed
	OpStreamWait
	OpStreamQuery
	OpStreamSync
	OpLaunch      // cuLaunchKernel
	OpTest   = 15 // for tests (SpinFn), apart from the package's
)

// Results of a call besides the driver's CUresult.
const (
	// Refused: an object's word had the closing bit; the driver was not
	// called.
	Refused = -2
	// NoSlot: no hazard slot could be had (out of memory) or hazard calls
	// are off; the driver was not called. Use the counted path.
	NoSlot = -3
	// Late is or-ed into a result when a flush found the call's slots
	// holding a retired object's word (MarkLate): the object waits in the
	// retired handles for this call, so the caller should have it flushed
	// (Settle).
	Late = 1 << 20
)

// Split separates a call's result into the driver's result and whether
// the caller should flush: Late, or Refused (a flush may have scanned the
// slot between its store and the refusal, and kept the object for it).
func Split(r int32) (int32, bool) {
	if r >= 0 && r&Late != 0 {
		return r &^ Late, true
	}
	return r, r == Refused
}

var mode atomic.Int32 // 0 not set up, 1 fences, 2 asymmetric (membarrier)

// Word is a state word (Words).
type Word struct {
	atomic.Int64
}

// Asymmetric reports whether hazard calls rely on membarrier (no locked
// instruction per call) rather than on their own fences.
func Asymmetric() bool { return mode.Load() == 2 }
