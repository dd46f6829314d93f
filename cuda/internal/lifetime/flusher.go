package lifetime

import "sync/atomic"

// The flusher: one goroutine of the process that flushes the Domains that
// ask (Ask), so that no Close flushes, destroys or waits for a flush. It
// runs while any Domain has asked and not been served, and then ends: it
// is started again by the next Ask. Each turn flushes at most flushMax
// handles of a Domain, which asks again if more wait, so that one Domain's
// backlog does not hold up another's.
var flusher struct {
	queue atomic.Pointer[Domain] // the Domains that asked (a stack, by qnext)
	state atomic.Int32           // flusherIdle, flusherRunning or flusherAgain
}

const (
	flusherIdle    = iota // no flusher goroutine
	flusherRunning        // one runs, and has taken the queue
	flusherAgain          // one runs, and the queue may have more
)

// Ask has the flusher flush d (and run its Release, if owed). It never
// blocks: a Domain already asked is left in the queue, and the flusher is
// started if none runs.
func (d *Domain) Ask() {
	if d.asked.Load() || !d.asked.CompareAndSwap(false, true) {
		return
	}
	d.asks.Add(1)
	for {
		old := flusher.queue.Load()
		d.qnext = old
		if flusher.queue.CompareAndSwap(old, d) {
			break
		}
	}
	if flusher.state.Swap(flusherAgain) == flusherIdle {
		go flush()
	}
}

// flush is the flusher goroutine. A Domain that asks after the flusher
// took the queue sets flusherAgain, so the flusher takes the queue again
// rather than end; one that asks after it ended starts another.
func flush() {
	for {
		flusher.state.Store(flusherRunning)
		for d := flusher.queue.Swap(nil); d != nil; {
			next := d.qnext
			d.qnext = nil
			d.asked.Store(false) // asked again from here on: queued again
			d.serve()
			d = next
		}
		if flusher.state.CompareAndSwap(flusherRunning, flusherIdle) {
			return
		}
	}
}

// serve is the flusher's turn on d: a batch, then d's Release if it is
// owed; d asks again if more wait.
func (d *Domain) serve() {
	d.flushMu.Lock()
	more := d.flushBatch(flushMax)
	if !more {
		d.release()
	}
	d.flushMu.Unlock()
	if more {
		d.Ask()
	}
}

// FlusherRunning reports whether the flusher goroutine runs (for tests).
func FlusherRunning() bool { return flusher.state.Load() != flusherIdle }
