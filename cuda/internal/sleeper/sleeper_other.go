//go:build !cgo || !linux

package sleeper

// Jobs cannot run here: Get returns nil, and Wait polls on a Go thread.

// MaxBlockers is how many Block jobs may run at once: none here.
const MaxBlockers = 0

// Job is unavailable here.
type Job struct {
	// Owner is the caller's.
	Owner any
}

// Abandoned is never called here.
var Abandoned func(j *Job, res int32)

// Setup reports false.
func Setup(sync, query, setCurrent uintptr) bool { return false }

// Get returns nil.
func Get() *Job { return nil }

// Put does nothing.
func (j *Job) Put() {}

// Reserve reports false.
func Reserve() bool { return false }

// Unreserve does nothing.
func Unreserve() {}

// Block reports false.
func (j *Job) Block(ctx, ev uintptr) bool { return false }

// Poll reports false.
func (j *Job) Poll(ctx, ev uintptr) bool { return false }

// Wait reports false.
func (j *Job) Wait(done <-chan struct{}) (int32, bool) { return -1, false }

// Stats are the pool's counts: all zero here.
type Stats struct {
	Blockers, Reserved int
	Poller             bool
	Blocks, Polls      int64
}

// ReadStats returns zero counts.
func ReadStats() Stats { return Stats{} }
