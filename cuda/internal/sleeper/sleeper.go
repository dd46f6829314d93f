// Package sleeper sleeps in the driver on a thread of its own, so that a
// long wait holds no Go thread in a cgo call.
//
// A Go thread blocked in a cgo call keeps its P in the syscall state, and
// the runtime's monitor thread (sysmon) then wakes every 20 µs to 10 ms to
// look at it: on 10 ms of GPU work that costs about 1 % of a core on the GPU
// machine (BenchmarkWaitStrategy: "blocking" against "cthread"). A Sleeper
// is a C thread that calls cuEventSynchronize for it and then writes an
// eventfd, which the Go side reads through the runtime's netpoller: while
// the GPU works, no Go thread runs, and all of the process's threads sleep.
package sleeper

import "errors"

// ErrUnavailable: no sleeper can be made here (no cgo, not Linux, or no
// thread or eventfd could be made).
var ErrUnavailable = errors.New("cuda: no driver sleeper thread available")

// ErrKicked: Kick ended an Await before the job's answer came.
var ErrKicked = errors.New("cuda: a sleeper's wait was kicked")
