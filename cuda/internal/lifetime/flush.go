package lifetime

import (
	"slices"
)

// Flush flushes every retired handle of d that no hazard slot holds
// (destroyed, or kept for reuse), and runs d's Release if it is owed, on
// the caller's goroutine, waiting for a flush in progress first. The held
// ones wait for their calls, which ask for a flush when they return. For
// tests and for callers that must see d flushed; the package's own
// flushes are the flusher's (Ask) and a create's (Help, Throttle).
func (d *Domain) Flush() {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	for d.flushBatch(flushMax) {
	}
	d.release()
}

// Help flushes a batch of d's retired handles on the caller's goroutine,
// for a create that found no kept handle: if at least LimboBatch wait and
// no flush is running (it never waits for one). It reports whether it
// flushed. A create then costs, once per batch of closes, what the batch's
// flush costs (a membarrier, and the driver's query and destroy of
// recorded events), as the Close of every LimboBatch-th event used to.
func (d *Domain) Help() bool {
	if d.pending.Load() < LimboBatch || !d.flushMu.TryLock() {
		return false
	}
	d.flushBatch(LimboBatch)
	d.flushMu.Unlock()
	return true
}

// Throttle is a create's bound on what waits for a flush: past HighWater
// retired handles, the create flushes a batch first, waiting for a flush
// in progress if need be, so that creating and closing faster than the
// flusher destroys cannot grow the backlog further. Below it, it costs an
// atomic load.
func (d *Domain) Throttle() {
	if d.pending.Load() < HighWater {
		return
	}
	d.flushMu.Lock()
	d.flushBatch(flushMax)
	d.flushMu.Unlock()
}

// flushBatch flushes up to max retired handles of d, and those a call held
// at the last flush: reclaim, then keep or destroy. It reports whether
// more wait. Under d.flushMu; the barrier, the scan, the driver's queries
// and destroys run outside d.Mu, and in steady state it allocates nothing.
// Should the barrier fail (it does not, once registered), nothing held can
// be told apart: the batch waits for the next flush.
func (d *Domain) flushBatch(max int) (more bool) {
	batch := d.take(max)
	if len(batch) != 0 {
		ok := d.scan(batch)
		ready, ask := d.sort(batch, ok)
		if ask {
			ready = d.keepComplete(ready)
		}
		d.destroyAll(ready)
	}
	return d.backlog != nil || d.retired.Load() != nil
}

// push adds a retired handle to d's stack of retired handles, without a
// lock, and returns how many wait.
func (d *Domain) push(h *Handle) int64 {
	for {
		old := d.retired.Load()
		h.next = old
		if d.retired.CompareAndSwap(old, h) {
			return d.pending.Add(1)
		}
	}
}

// take makes the batch of one flush: the handles a call held at the last
// flush, and up to max retired handles, oldest first. Under d.flushMu.
func (d *Domain) take(max int) []*Handle {
	b := append(d.batch[:0], d.waiting...)
	clear(d.waiting)
	d.waiting = d.waiting[:0]
	if d.backlog == nil {
		// The stack, newest first, becomes the backlog, oldest first.
		var rev *Handle
		for h := d.retired.Swap(nil); h != nil; {
			next := h.next
			h.next = rev
			rev, h = h, next
		}
		d.backlog = rev
	}
	n := 0
	for ; d.backlog != nil && n < max; n++ {
		h := d.backlog
		d.backlog, h.next = h.next, nil
		b = append(b, h)
	}
	d.pending.Add(-int64(n))
	d.batch = b
	return b
}

// scan leaves in d.held the words of batch that hazard slots still hold
// after a barrier; false if a barrier failed (then nothing held can be told
// apart). Every handle of the batch has its closing bit set: the barrier
// orders that before the calls' later checks, and their slots before the
// scan. Calls that hold a word of the batch are marked late, so that each
// asks for a flush when it returns (it no longer reads the word then), and
// the handles they hold are marked Waiting, so that a call refused on one
// asks too; after a second barrier, a word still held is theirs to have
// flushed, one no longer held is free now.
func (d *Domain) scan(batch []*Handle) bool {
	if !Barrier() {
		return false
	}
	d.held = Held(d.held[:0])
	n := 0
	for _, w := range d.held {
		if i := slices.IndexFunc(batch, func(h *Handle) bool { return h.Word() == w }); i >= 0 {
			d.held[n] = w
			n++
			batch[i].Set(Waiting) // before the barrier: a refused call then sees it
		}
	}
	if d.held = d.held[:n]; n == 0 {
		return true
	}
	MarkLate(d.held)
	if !Barrier() {
		return false
	}
	d.held = Held(d.held[:0])
	return true
}

// sort puts the held handles of batch in d.waiting, keeps the
// never-recorded events (kept in batch order, while there is room, unless
// an event before them waits for the driver's answer) and returns the
// others, ask set if a recorded event among them may be kept once the
// driver says it is complete. Under d.flushMu.
func (d *Domain) sort(batch []*Handle, ok bool) (ready []*Handle, ask bool) {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	ready = d.ready[:0]
	for _, h := range batch {
		if !ok || slices.Contains(d.held, h.Word()) {
			d.waiting = append(d.waiting, h)
			continue
		}
		if h.State.Load()&Waiting != 0 {
			h.State.And(^Waiting) // no call waits for it any more
		}
		h.reuse = reusable(h, d.Closing)
		recorded := h.State.Load()&Recorded != 0
		if h.reuse && !recorded && !ask && d.keepRetired(h) {
			continue
		}
		ask = ask || h.reuse && recorded
		ready = append(ready, h)
	}
	clear(batch)
	return ready, ask
}

// keepComplete keeps the recorded events of ready whose work the driver
// says is complete, asked outside Mu (no call holds them and none can
// start, so the answer stays true), and returns the others.
func (d *Domain) keepComplete(ready []*Handle) []*Handle {
	for _, h := range ready {
		h.reuse = h.reuse && (h.State.Load()&Recorded == 0 || d.owner.Complete(h))
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	n := 0
	for _, h := range ready {
		if !h.reuse || !d.keepRetired(h) {
			ready[n] = h
			n++
		}
	}
	clear(ready[n:])
	return ready[:n]
}

// destroyAll destroys ready, and keeps ready's array as scratch.
func (d *Domain) destroyAll(ready []*Handle) {
	for i, h := range ready {
		d.destroy(h)
		ready[i] = nil
	}
	d.ready = ready[:0]
}

// Settle is a hazard call's result r (Split) on objects a and b (b
// nil for one) after the flush it asks for, which the flusher runs: a
// call marked late asks for its objects' Domains to be flushed; a refused
// call asks only if a or b waits for a call (Waiting: a flush found a slot
// holding it, maybe this call's between its store and the refusal), so
// that calls on an object long closed ask for nothing.
func Settle(r int32, a, b *Handle) int32 {
	res, flush := Split(r)
	if !flush {
		return res
	}
	if res == Refused && !a.waits() && (b == nil || !b.waits()) {
		return res
	}
	a.D.Ask()
	if b != nil && b.D != a.D {
		b.D.Ask()
	}
	return res
}
