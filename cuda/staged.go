package cuda

import (
	"runtime"
	"sync"

	"github.com/cudagen/cudagen/cuda/driver"
)

// The synchronous copies between Go slices and device memory (CopyFrom,
// CopyTo) go through the context's page-locked staging memory in chunks:
// while the copy engine transfers one chunk, goroutines copy the next into
// (or the last out of) another staging buffer. From pageable memory the
// driver stages through a buffer of its own with one thread, at a fraction
// of the bandwidth it reaches from page-locked memory (docs/performance.md).

const (
	stageSlots = 3       // staging buffers of one copy: transfers in flight
	copyPart   = 1 << 20 // the least one copying goroutine takes
)

// Variables only for the internal benchmarks that compare shapes.
var (
	stageChunk = 32 << 20 // bytes of one staged transfer
	maxCopiers = 16       // goroutines copying one chunk, the caller's included
)

// stagedSlots are the staging buffers of one synchronous copy, chunk i in
// slot i%stageSlots.
type stagedSlots [stageSlots]*staging

// slot returns the staging buffer for chunk i, of at least size bytes,
// once the transfer that used it last is done.
func (p *ctxState) slot(op string, s *stagedSlots, i, size int) (*staging, error) {
	st := s[i%stageSlots]
	if st == nil {
		var err error
		if st, err = p.stage(op, size); err != nil {
			return nil, err
		}
		s[i%stageSlots] = st
		return st, nil
	}
	if st.pending {
		if err := driver.EventSynchronizeCtx(p.ctx, st.ev); err != nil {
			return nil, driverErr(op+" (wait for a staged transfer)", err)
		}
		st.pending = false
	}
	return st, nil
}

// transferred records st's event on the legacy default stream after the
// transfer just queued there that uses st. Where it cannot be recorded, it
// waits for the stream, so that st is free either way.
func (p *ctxState) transferred(op string, st *staging) error {
	if err := driver.EventRecordCtx(p.ctx, st.ev, 0); err != nil {
		_ = driver.StreamSynchronizeCtx(p.ctx, 0)
		return driverErr(op+": record the staging memory's event", err)
	}
	st.pending = true
	return nil
}

// release makes the copy's staging buffers idle; one whose transfer may
// be under way is reused once its event completes (stage).
func (p *ctxState) release(s *stagedSlots) {
	for _, st := range s {
		if st != nil {
			p.unstage(st)
		}
	}
}

// direct makes the copy of data directly where data is a HostBuffer's
// memory, which the copy engine reads and writes, holding the buffer open
// meanwhile: done then, with the copy's error; the memory of a closed
// HostBuffer is refused. Elsewhere the copy is staged (not done).
func direct(op string, data []byte, copy func() error) (done bool, err error) {
	h, closed := pinned.enter(data)
	switch {
	case h != nil:
		defer h.Exit()
		return true, driverErr(op, copy())
	case closed:
		return true, closedErr(op, "host buffer holding the slice")
	}
	return false, nil
}

// copyHtoD copies data to device memory at ptr, on the legacy default
// stream, and returns once it is there: directly from a HostBuffer's
// memory, else through staging memory.
func (p *ctxState) copyHtoD(op string, ptr driver.DevicePtr, data []byte) error {
	if done, err := direct(op, data, func() error { return driver.MemcpyHtoDCtx(p.ctx, ptr, data) }); done {
		return err
	}
	var s stagedSlots
	defer p.release(&s)
	size := min(len(data), stageChunk)
	var last *staging
	for i, off := 0, 0; off < len(data); i, off = i+1, off+stageChunk {
		chunk := data[off:min(len(data), off+stageChunk)]
		st, err := p.slot(op, &s, i, size)
		if err != nil {
			return err
		}
		parallelCopy(st.p.Bytes(len(chunk)), chunk)
		if err := driver.MemcpyHtoDAsyncCtx(p.ctx, ptr+driver.DevicePtr(off), st.p, uint64(len(chunk)), 0); err != nil {
			return driverErr(op, err)
		}
		if err := p.transferred(op, st); err != nil {
			return err
		}
		last = st
	}
	// The transfers run in order on one stream: the last one's end is
	// theirs.
	if err := driver.EventSynchronizeCtx(p.ctx, last.ev); err != nil {
		return driverErr(op+" (wait for the copy)", err)
	}
	for _, st := range s {
		if st != nil {
			st.pending = false
		}
	}
	return nil
}

// copyDtoH copies device memory at ptr into data, on the legacy default
// stream: directly into a HostBuffer's memory, else through staging
// memory, stageSlots transfers queued ahead of the chunk being copied out.
func (p *ctxState) copyDtoH(op string, data []byte, ptr driver.DevicePtr) error {
	if done, err := direct(op, data, func() error { return driver.MemcpyDtoHCtx(p.ctx, data, ptr) }); done {
		return err
	}
	var s stagedSlots
	defer p.release(&s)
	size := min(len(data), stageChunk)
	fetch := func(i int) error {
		off := i * stageChunk
		n := min(len(data)-off, stageChunk)
		st, err := p.slot(op, &s, i, size)
		if err != nil {
			return err
		}
		if err := driver.MemcpyDtoHAsyncCtx(p.ctx, st.p, ptr+driver.DevicePtr(off), uint64(n), 0); err != nil {
			return driverErr(op, err)
		}
		return p.transferred(op, st)
	}
	chunks := (len(data) + stageChunk - 1) / stageChunk
	for i := range min(chunks, stageSlots) {
		if err := fetch(i); err != nil {
			return err
		}
	}
	for i := range chunks {
		st := s[i%stageSlots]
		if err := driver.EventSynchronizeCtx(p.ctx, st.ev); err != nil {
			return driverErr(op+" (wait for a staged transfer)", err)
		}
		st.pending = false
		off := i * stageChunk
		chunk := data[off:min(len(data), off+stageChunk)]
		parallelCopy(chunk, st.p.Bytes(len(chunk)))
		if i+stageSlots < chunks {
			if err := fetch(i + stageSlots); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyJob is one part of a parallelCopy, for a copyHelper.
type copyJob struct {
	dst, src []byte
	wg       *sync.WaitGroup
}

// copyJobs hands the parts to the helpers, each started for one part.
var copyJobs = make(chan copyJob, 4*maxCopiers)

// copyGroups are the WaitGroups of parallelCopy's calls, reused so that a
// call allocates nothing.
var copyGroups = sync.Pool{New: func() any { return new(sync.WaitGroup) }}

// copyHelper copies one part and ends. It takes no arguments, so that
// starting it allocates nothing.
func copyHelper() {
	j := <-copyJobs
	copy(j.dst, j.src)
	j.wg.Done()
}

// copiers is how many goroutines copy n bytes with GOMAXPROCS procs.
func copiers(n, procs int) int {
	return max(1, min(n/copyPart, maxCopiers, procs))
}

// parallelCopy copies src into dst (of src's length) with up to maxCopiers
// goroutines (GOMAXPROCS at most), each taking at least copyPart bytes:
// the caller and helpers that have done their parts when it returns, and
// end.
func parallelCopy(dst, src []byte) {
	n := len(src)
	w := copiers(n, runtime.GOMAXPROCS(0))
	if w <= 1 {
		copy(dst, src)
		return
	}
	part := (n/w + 4095) &^ 4095 // whole pages
	wg := copyGroups.Get().(*sync.WaitGroup)
	off := part
	for ; off < n; off += part {
		end := min(n, off+part)
		wg.Add(1)
		copyJobs <- copyJob{dst: dst[off:end], src: src[off:end], wg: wg}
		go copyHelper()
	}
	copy(dst[:part], src[:part])
	wg.Wait()
	copyGroups.Put(wg)
}
