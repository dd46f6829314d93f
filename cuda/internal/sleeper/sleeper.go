// Package sleeper waits for the driver's events for Wait, on a bounded pool
// of C threads of its own, so that no long wait holds a Go thread in a cgo
// call, and a thousand waits cost no more threads or descriptors than one.
//
// A Go thread blocked in a cgo call keeps its P in the syscall state, and
// the runtime's monitor thread (sysmon) then wakes every 20 µs to 10 ms to
// look at it: on 10 ms of GPU work that costs about 1 % of a core on the GPU
// machine (BenchmarkWaitStrategy: "blocking" against "cthread"). So the
// driver's calls run on C threads, which report each answer through one
// eventfd that a goroutine of this package (the dispatcher) reads through
// the runtime's netpoller, and hands to the waiting goroutine over its
// Job's channel. While the GPU works, no Go thread runs.
//
// A Job is one wait, in one of two modes:
//
//   - Block: a thread of its own sleeps in cuEventSynchronize on the event
//     (one the caller made to complete with the work, created with
//     CU_EVENT_BLOCKING_SYNC, so the driver sleeps rather than spins): one
//     wake when the work completes. At most MaxBlockers at once in the
//     process (Reserve); the call cannot be interrupted, so a Job whose
//     waiter gave up runs on until the driver returns, and its answer goes
//     to the Abandoned hook.
//   - Poll: the process's one poller thread queries the event, with every
//     other polled Job's, then sleeps (from 20 µs, growing with the time
//     the youngest of its Jobs has waited to a sixteenth of it, at most
//     1 ms). A waiter that gives up cancels the Job at once: the poller
//     never touches its event again, and the caller may reuse the Job.
//
// Resources, whatever the number of Jobs: MaxBlockers + 1 threads (each
// exits after idling 10 s), one eventfd (and the netpoller's own, should
// nothing else of the process have started it), one goroutine while any
// Job's answer is owed, and about 200 bytes per Job (kept for reuse: as
// many as were ever in use at once).
package sleeper

import "errors"

// ErrUnavailable: no job can run here (no cgo, not Linux, or the eventfd
// could not be made).
var ErrUnavailable = errors.New("cuda: no driver waiter thread available")
