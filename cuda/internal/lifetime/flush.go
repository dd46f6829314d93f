package lifetime

import (
	"slices"
)

// Flush destroys (or keeps, Reuse) the retired handles that no hazard slot
// holds; the others stay in the limbo until a later flush (the call holding
// one flushes when it returns). It returns self's destroy error if it
// destroyed self (with self nil, the first error). Flushes run one at a
// time, the barrier, the scan, the driver's queries and destroys outside
// Mu, and allocate nothing in steady state. Should the barrier fail (it
// does not, once registered), nothing held can be told apart: the batch
// goes back to the limbo for the next flush.
func (d *Domain) Flush(self *Handle) error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	return d.flushLocked(self)
}

// flushLocked is Flush, under d.flushMu: reclaim, then keep or destroy.
func (d *Domain) flushLocked(self *Handle) error {
	batch := d.take()
	if len(batch) == 0 {
		return nil
	}
	ok := d.scan(batch)
	ready, ask := d.sort(batch, ok)
	if ask {
		ready = d.keepComplete(ready)
	}
	return d.destroyAll(ready, self)
}

// take empties the limbo into the batch of one flush.
func (d *Domain) take() []*Handle {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	batch := d.limbo
	if len(batch) != 0 {
		d.limbo = d.spare[:0]
	}
	return batch
}

// scan leaves in d.held the words of batch that hazard slots still hold
// after a barrier; false if a barrier failed (then nothing held can be told
// apart). Every handle of the batch has its closing bit set: the barrier
// orders that before the calls' later checks, and their slots before the
// scan. Calls that hold a word of the batch are marked late, so that each
// flushes when it returns (it no longer reads the word then); after a
// second barrier, a word still held is theirs to flush, one no longer held
// is free now.
func (d *Domain) scan(batch []*Handle) bool {
	if !Barrier() {
		return false
	}
	d.held = Held(d.held[:0])
	n := 0
	for _, w := range d.held {
		if slices.ContainsFunc(batch, func(h *Handle) bool { return h.Word() == w }) {
			d.held[n] = w
			n++
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

// sort puts the held handles of batch back in the limbo, keeps the
// never-recorded events (kept in batch order, while there is room, unless
// an event before them waits for the driver's answer) and returns the
// others, ask set if a recorded event among them may be kept once the
// driver says it is complete.
func (d *Domain) sort(batch []*Handle, ok bool) (ready []*Handle, ask bool) {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	ready = d.ready[:0]
	for _, h := range batch {
		if !ok || slices.Contains(d.held, h.Word()) {
			d.limbo = append(d.limbo, h)
			continue
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
	d.spare = batch[:0]
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

// destroyAll destroys ready, returning self's error (or, self nil, the
// first), and keeps ready's array as scratch.
func (d *Domain) destroyAll(ready []*Handle, self *Handle) error {
	var err error
	for i, h := range ready {
		if derr := d.destroy(h); h == self || self == nil && err == nil {
			err = derr
		}
		ready[i] = nil
	}
	d.ready = ready[:0]
	return err
}

// Settle is a hazard call's result r (Split) on objects a and b (b
// nil for one) after the flush it asks for: a call marked late flushes its
// objects' Domains; a refused call flushes them only if they hold a or b in
// their limbo (a flush may have seen its slot and kept the object for it),
// so that calls on an object long closed do not flush a batch that is not
// full.
func Settle(r int32, a, b *Handle) int32 {
	res, flush := Split(r)
	if !flush {
		return res
	}
	refused := res == Refused
	a.D.flushIf(refused, a, b)
	if b != nil && b.D != a.D {
		b.D.flushIf(refused, a, b)
	}
	return res
}

// flushIf flushes d's limbo; if only, only where it holds a or b.
func (d *Domain) flushIf(only bool, a, b *Handle) {
	if !only {
		d.Flush(nil)
		return
	}
	// Under flushMu: a flush in progress has put the handles its scan
	// found held back in the limbo by the time it releases it.
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.Mu.Lock()
	in := slices.ContainsFunc(d.limbo, func(h *Handle) bool { return h == a || h == b })
	d.Mu.Unlock()
	if in {
		d.flushLocked(nil)
	}
}
