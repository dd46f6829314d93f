//go:build cgo

package gputest

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// A view shares its buffer's memory: copies through it reach exactly its
// range, a kernel given it sees only its range, views of views add up, a
// range outside the buffer is refused; the view's Close releases the view
// only, and the buffer's Close ends its views.
func TestLayerBufferSlice(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	frees0, fake := fakeCounter("fakecuda_mem_frees")
	host := make([]float32, 100)
	for i := range host {
		host[i] = float32(i)
	}
	b := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
	v := must[*cuda.Buffer[float32]](t)(b.Slice(10, 30))
	if v.Len() != 20 || v.Ptr() != b.Ptr()+40 || v.Device() != dev {
		t.Errorf("view: Len %d, Ptr %#x (buffer %#x), %v", v.Len(), v.Ptr(), b.Ptr(), v.Device())
	}
	got := make([]float32, 20)
	ok(t, v.CopyTo(got))
	if got[0] != 10 || got[19] != 29 {
		t.Errorf("the view's values: %v .. %v, want 10 .. 29", got[0], got[19])
	}
	vv := must[*cuda.Buffer[float32]](t)(v.Slice(5, 7)) // values 15 and 16
	ok(t, vv.CopyFrom([]float32{-1, -2}))
	ok(t, dev.DefaultStream().Launch(k, cuda.Linear(20, 32), v.Arg(), driver.Arg(uint32(v.Len()))))
	all := make([]float32, 100)
	ok(t, b.CopyTo(all))
	for i, x := range all {
		want := float32(i)
		switch {
		case i == 15:
			want = 0 // -1 + 1
		case i == 16:
			want = -1
		case i >= 10 && i < 30:
			want++
		}
		if x != want {
			t.Fatalf("element %d is %v, want %v (a copy through a view of a view, then a kernel on the view)", i, x, want)
		}
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, 21}} {
		_, err := v.Slice(r[0], r[1])
		isErr(t, "Slice outside the view", err, cuda.ErrInvalidOptions, "outside")
	}
	isErr(t, "CopyFrom of the buffer's length into a view", v.CopyFrom(host), cuda.ErrMismatch, "holds 100 values")

	// The view's Close: the view only.
	ok(t, vv.Close())
	ok(t, vv.Close())
	if vv.Ptr() != 0 {
		t.Errorf("Ptr of a closed view: %#x, want 0", vv.Ptr())
	}
	isErr(t, "CopyTo of a closed view", vv.CopyTo(make([]float32, 2)), cuda.ErrClosed, "buffer view is closed")
	ok(t, v.CopyTo(got))
	ok(t, b.CopyTo(all))
	// The buffer's Close: every view ends, the memory is freed once.
	ok(t, b.Close())
	isErr(t, "CopyTo of a view of a closed buffer", v.CopyTo(got), cuda.ErrClosed, "viewed buffer is closed")
	_, err := v.Slice(0, 1)
	isErr(t, "Slice of a view of a closed buffer", err, cuda.ErrClosed)
	if v.Ptr() != 0 {
		t.Errorf("Ptr of a view of a closed buffer: %#x, want 0", v.Ptr())
	}
	ok(t, v.Close())
	if fake {
		// A second free of the memory would fail in the fake, uncounted;
		// other tests' frees may land meanwhile.
		waitAtLeast(t, "fakecuda_mem_frees", frees0+1)
	}
	// A view keeps its buffer from the garbage collector.
	leaked := cuda.Leaked()
	w := func() *cuda.Buffer[float32] {
		b := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, host))
		return must[*cuda.Buffer[float32]](t)(b.Slice(1, 2))
	}()
	for range 5 {
		runtime.GC()
	}
	ok(t, w.CopyTo(got[:1]))
	if got[0] != 1 || cuda.Leaked() != leaked {
		t.Errorf("a view whose buffer is unreachable: %v, Leaked grew by %d; want 1 and 0", got[0], cuda.Leaked()-leaked)
	}
	runtime.KeepAlive(w)
}

// Set writes every value with the driver's memset of the value's pattern,
// refuses a value whose bytes do not repeat, and SetAsync queues it on a
// stream (captured in a graph during a capture).
func TestLayerBufferSet(t *testing.T) {
	dev := gpu(t)
	memsets0, fake := fakeCounter("fakecuda_memsets")
	f := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 50))
	defer f.Close()
	ok(t, f.Set(1.5))
	checkAll(t, "Set(1.5)", f, 1.5)
	ok(t, f.Set(0))
	checkAll(t, "Set(0)", f, 0)
	i16 := must[*cuda.Buffer[int16]](t)(cuda.Alloc[int16](dev, 7))
	defer i16.Close()
	ok(t, i16.Set(-3))
	i64 := must[*cuda.Buffer[int64]](t)(cuda.Alloc[int64](dev, 5))
	defer i64.Close()
	ok(t, i64.Set(-1)) // all bytes 0xff
	type pair struct{ A, B float32 }
	pp := must[*cuda.Buffer[pair]](t)(cuda.Alloc[pair](dev, 3))
	defer pp.Close()
	ok(t, pp.Set(pair{2, 2}))
	gi16, gi64, gpp := make([]int16, 7), make([]int64, 5), make([]pair, 3)
	ok(t, i16.CopyTo(gi16))
	ok(t, i64.CopyTo(gi64))
	ok(t, pp.CopyTo(gpp))
	if gi16[6] != -3 || gi64[4] != -1 || gpp[2] != (pair{2, 2}) {
		t.Errorf("Set: int16 %v, int64 %v, pair %v", gi16, gi64, gpp)
	}
	if fake {
		if n, _ := fakeCounter("fakecuda_memsets"); n != memsets0+5 {
			t.Errorf("the driver made %d memsets, want 5", n-memsets0)
		}
	}
	isErr(t, "Set of an int64 whose bytes differ", i64.Set(1), cuda.ErrInvalidOptions, "do not repeat", "CopyFrom")
	isErr(t, "Set of a pair of two values", pp.Set(pair{1, 2}), cuda.ErrInvalidOptions)

	// A view: its range only.
	v := must[*cuda.Buffer[float32]](t)(f.Slice(10, 20))
	ok(t, v.Set(7))
	got := make([]float32, 50)
	ok(t, f.CopyTo(got))
	if got[9] != 0 || got[10] != 7 || got[19] != 7 || got[20] != 0 {
		t.Errorf("Set of a view [10, 20): %v", got[8:22])
	}

	// On a stream, and in a graph.
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	ok(t, f.SetAsync(s, 4))
	ok(t, s.Sync())
	checkAll(t, "SetAsync(4)", f, 4)
	g := must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error { return f.SetAsync(s, 9) }))
	defer g.Close()
	checkAll(t, "after a capture of SetAsync(9)", f, 4)
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	defer x.Close()
	ok(t, s.LaunchGraph(x))
	ok(t, s.Sync())
	checkAll(t, "after the graph's launch", f, 9)
	isErr(t, "SetAsync on a nil stream", f.SetAsync(nil, 1), cuda.ErrInvalid, "stream")
	ok(t, v.Close())
	isErr(t, "Set of a closed view", v.Set(1), cuda.ErrClosed)
}

// CopyFrom and CopyTo of more than their staging memory holds (chunks of
// 32 MiB, three transfers queued at a time) carry every value both ways,
// the last, partial chunk included: checked against the asynchronous
// copies, which stage the whole slice at once. CopyTo waits for each chunk's transfer before it
// copies the chunk out.
func TestLayerBufferStagedCopy(t *testing.T) {
	dev := gpu(t)
	const chunk = 32 << 20 / 8      // uint64s in a chunk
	const n = 4*chunk + chunk/3 + 5 // 5 chunks, the last partial
	host := make([]uint64, n)
	for i := range host {
		host[i] = uint64(i)*0x9E3779B97F4A7C15 + 1
	}
	b := must[*cuda.Buffer[uint64]](t)(cuda.Alloc[uint64](dev, n))
	defer b.Close()
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	check := func(what string, got []uint64) {
		t.Helper()
		for i := range got {
			if got[i] != host[i] {
				t.Fatalf("%s: value %d of %d (chunk %d) is %#x, want %#x", what, i, n, i/chunk, got[i], host[i])
			}
		}
	}
	syncs0, fake := fakeCounter("fakecuda_event_syncs")
	ok(t, b.CopyFrom(host))
	got := make([]uint64, n)
	ok(t, b.CopyToAsync(s, got))
	ok(t, s.Sync())
	check("CopyFrom, then CopyToAsync", got)

	clear(got)
	ok(t, b.Set(0))
	ok(t, b.CopyFromAsync(s, host))
	ok(t, s.Sync())
	syncs1, _ := fakeCounter("fakecuda_event_syncs")
	ok(t, b.CopyTo(got))
	check("CopyFromAsync, then CopyTo", got)
	if syncs2, _ := fakeCounter("fakecuda_event_syncs"); fake && (syncs2-syncs1 < 5 || syncs1-syncs0 < 1) {
		t.Errorf("CopyTo of 5 chunks waited for %d events, want one per chunk; CopyFrom for %d, want at least one", syncs2-syncs1, syncs1-syncs0)
	}

	// A view at an odd offset: its chunks start there.
	v := must[*cuda.Buffer[uint64]](t)(b.Slice(3, n-2))
	clear(got)
	ok(t, v.CopyTo(got[3:n-2]))
	for i := 3; i < n-2; i++ {
		if got[i] != host[i] {
			t.Fatalf("a view's CopyTo: value %d is %#x, want %#x", i, got[i], host[i])
		}
	}
}

// The asynchronous copies go through the package's page-locked staging
// memory: the caller's source slice may change as soon as CopyFromAsync
// returns, the destination holds the values once the stream's work is
// done; a copy in a capture, a stream of another device, and another
// length are refused before anything is queued; the staging memory is
// reused, and freed with the context.
func TestLayerBufferCopyAsync(t *testing.T) {
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	released(t)
	hosts0, fake := fakeCounter("fakecuda_live_host_allocs")
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	s := must[*cuda.Stream](t)(dev.NewStream())
	const n = 1 << 16
	b := must[*cuda.Buffer[int64]](t)(cuda.Alloc[int64](dev, n))
	src, dst := make([]int64, n), make([]int64, n)
	for round := int64(0); round < 20; round++ {
		for i := range src {
			src[i] = round*n + int64(i)
		}
		ok(t, b.CopyFromAsync(s, src))
		clear(src) // the values are the package's copy already
		ok(t, b.CopyToAsync(s, dst))
		ok(t, s.Sync())
		if dst[0] != round*n || dst[n-1] != round*n+n-1 {
			t.Fatalf("round %d: the copies back and forth: %d .. %d", round, dst[0], dst[n-1])
		}
	}
	if fake {
		if h, _ := fakeCounter("fakecuda_live_host_allocs"); h-hosts0 < 1 || h-hosts0 > 4 {
			t.Errorf("%d page-locked staging buffers for 40 copies one after another, want 1 to 4 (reused)", h-hosts0)
		}
	}
	// Refusals.
	isErr(t, "CopyFromAsync of another length", b.CopyFromAsync(s, src[:3]), cuda.ErrMismatch, "src holds 3 values")
	isErr(t, "CopyToAsync of another length", b.CopyToAsync(s, make([]int64, n+1)), cuda.ErrMismatch)
	isErr(t, "CopyFromAsync on a nil stream", b.CopyFromAsync(nil, src), cuda.ErrInvalid, "stream")
	ok(t, s.BeginCapture())
	err := b.CopyFromAsync(s, src)
	isErr(t, "CopyFromAsync during a capture", err, driver.ErrorStreamCaptureUnsupported, "captured")
	isErr(t, "CopyToAsync during a capture", b.CopyToAsync(s, dst), driver.ErrorStreamCaptureUnsupported)
	g := must[*cuda.Graph](t)(s.EndCapture())
	if nodes := must[int](t)(g.Nodes()); nodes != 0 {
		t.Errorf("the refused copies reached the capture: %d nodes", nodes)
	}
	ok(t, g.Close())
	if c, _ := cuda.DeviceCount(); c >= 2 {
		dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
		s1 := must[*cuda.Stream](t)(dev1.NewStream())
		isErr(t, "CopyFromAsync on another device's stream", b.CopyFromAsync(s1, src), cuda.ErrWrongDevice, "device 0", "device 1")
		ok(t, dev1.Close())
	}
	ok(t, s.Close())
	ok(t, b.Close())
	isErr(t, "CopyFromAsync of a closed buffer", b.CopyFromAsync(s, src), cuda.ErrClosed)
	ok(t, dev.Close())
	<-dev.Done()
	if fake {
		waitCounter(t, "fakecuda_live_host_allocs", hosts0)
	}
}

// Stream-ordered buffers come from the device's pool on a stream and go
// back to it on Close, without the synchronous free; they copy, set and
// launch like any buffer; a capturing stream is refused.
func TestLayerAllocAsync(t *testing.T) {
	released(t)
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	asyncAllocs0, fake := fakeCounter("fakecuda_async_allocs")
	asyncFrees0, _ := fakeCounter("fakecuda_async_frees")
	frees0, _ := fakeCounter("fakecuda_mem_frees")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	b := must[*cuda.Buffer[float32]](t)(cuda.AllocAsync[float32](s, 300))
	if b.Len() != 300 || b.Ptr() == 0 {
		t.Errorf("AllocAsync: Len %d, Ptr %#x", b.Len(), b.Ptr())
	}
	ok(t, b.SetAsync(s, 1))
	ok(t, s.Launch(k, cuda.Linear(300, 256), b.Arg(), driver.Arg(uint32(300))))
	got := make([]float32, 300)
	ok(t, b.CopyToAsync(s, got))
	ok(t, s.Sync())
	if got[0] != 2 || got[299] != 2 {
		t.Errorf("a pool buffer set to 1 and added 1: %v .. %v", got[0], got[299])
	}
	e := must[*cuda.Buffer[float32]](t)(cuda.AllocAsync[float32](s, 0))
	if e.Ptr() != 0 {
		t.Errorf("an empty pool buffer has address %#x", e.Ptr())
	}
	ok(t, e.Close())
	ok(t, b.Close())
	if fake {
		if n, _ := fakeCounter("fakecuda_async_allocs"); n != asyncAllocs0+1 {
			t.Errorf("the driver made %d pool allocations, want 1", n-asyncAllocs0)
		}
		waitCounter(t, "fakecuda_async_frees", asyncFrees0+1)
		if n, _ := fakeCounter("fakecuda_mem_frees"); n != frees0 {
			t.Errorf("a pool buffer's Close called cuMemFree %d times", n-frees0)
		}
	}
	_, err := cuda.AllocAsync[float32](s, -1)
	isErr(t, "AllocAsync of -1 values", err, cuda.ErrInvalidOptions)
	_, err = cuda.AllocAsync[*int](s, 1)
	isErr(t, "AllocAsync[*int]", err, cuda.ErrInvalidType)
	_, err = cuda.AllocAsync[float32](nil, 1)
	isErr(t, "AllocAsync on a nil stream", err, cuda.ErrInvalid, "stream")
	ok(t, s.BeginCapture())
	_, err = cuda.AllocAsync[float32](s, 1)
	isErr(t, "AllocAsync during a capture", err, driver.ErrorStreamCaptureUnsupported)
	g, err := s.EndCapture()
	ok(t, err)
	if nodes := must[int](t)(g.Nodes()); nodes != 0 {
		t.Errorf("the refused allocation reached the capture: %d nodes", nodes)
	}
	ok(t, g.Close())
}

// Set, SetAsync, CopyFromBuffer and, with its staging memory warm,
// CopyFromAsync allocate nothing.
func TestLayerBufferNoAllocations(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	host := make([]float32, 1024)
	b := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, len(host)))
	defer b.Close()
	ok(t, b.CopyFromAsync(s, host)) // the staging memory
	ok(t, s.Sync())
	lo := must[*cuda.Buffer[float32]](t)(b.Slice(0, 512))
	hi := must[*cuda.Buffer[float32]](t)(b.Slice(512, 1024))
	var failed error
	for name, f := range map[string]func() error{
		"Set":      func() error { return b.Set(2) },
		"SetAsync": func() error { return b.SetAsync(s, 3) },
		"CopyFromBuffer": func() error {
			return lo.CopyFromBuffer(s, hi)
		},
		"CopyFromAsync and a Sync": func() error {
			if err := b.CopyFromAsync(s, host); err != nil {
				return err
			}
			return s.Sync()
		},
	} {
		failed = nil
		n := testing.AllocsPerRun(500, func() {
			if err := f(); err != nil && failed == nil {
				failed = err
			}
		})
		if failed != nil {
			t.Errorf("%s failed: %v", name, failed)
		}
		if n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
	ok(t, s.Sync())
}

// Copies between buffers run on a stream, within a device and between
// devices (peer), and in a graph; another length, overlapping views, a
// stream of neither buffer's device and a closed source are refused.
func TestLayerBufferCopyFromBuffer(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	host := make([]int32, 256)
	for i := range host {
		host[i] = int32(i)
	}
	a := must[*cuda.Buffer[int32]](t)(cuda.AllocFrom(dev, host))
	defer a.Close()
	b := must[*cuda.Buffer[int32]](t)(cuda.Alloc[int32](dev, 256))
	defer b.Close()
	ok(t, b.CopyFromBuffer(s, a))
	got := make([]int32, 256)
	ok(t, s.Sync())
	ok(t, b.CopyTo(got))
	if got[0] != 0 || got[255] != 255 {
		t.Errorf("a copy between buffers: %d .. %d", got[0], got[255])
	}
	// Views: disjoint ranges copy, overlapping ones are refused.
	lo := must[*cuda.Buffer[int32]](t)(b.Slice(0, 128))
	hi := must[*cuda.Buffer[int32]](t)(b.Slice(128, 256))
	mid := must[*cuda.Buffer[int32]](t)(b.Slice(64, 192))
	ok(t, lo.CopyFromBuffer(s, hi))
	ok(t, s.Sync())
	ok(t, b.CopyTo(got))
	if got[0] != 128 || got[127] != 255 || got[128] != 128 {
		t.Errorf("a copy between views: %d %d %d, want 128 255 128", got[0], got[127], got[128])
	}
	isErr(t, "a copy between overlapping views", mid.CopyFromBuffer(s, lo), cuda.ErrInvalidOptions, "overlap")
	isErr(t, "a copy of another length", lo.CopyFromBuffer(s, a), cuda.ErrMismatch, "src holds 256 values")
	isErr(t, "a copy from a nil buffer", a.CopyFromBuffer(s, nil), cuda.ErrInvalid, "source buffer")
	// In a graph, replayed.
	g := must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error { return b.CopyFromBuffer(s, a) }))
	defer g.Close()
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	defer x.Close()
	ok(t, b.Set(0))
	ok(t, s.LaunchGraph(x))
	ok(t, s.Sync())
	ok(t, b.CopyTo(got))
	if got[3] != 3 || got[255] != 255 {
		t.Errorf("a captured copy between buffers, replayed: %d %d", got[3], got[255])
	}
	ok(t, hi.Close())
	isErr(t, "a copy from a closed view", a.CopyFromBuffer(s, hi), cuda.ErrClosed, "source buffer (a view) is closed")

	if c, _ := cuda.DeviceCount(); c < 2 {
		t.Log("one device: the copies between devices are not tried")
		return
	}
	dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
	defer dev1.Close()
	s1 := must[*cuda.Stream](t)(dev1.NewStream())
	defer s1.Close()
	p := must[*cuda.Buffer[int32]](t)(cuda.Alloc[int32](dev1, 256))
	defer p.Close()
	ok(t, p.CopyFromBuffer(s1, a)) // on the destination's stream
	ok(t, s1.Sync())
	clear(got)
	ok(t, p.CopyTo(got))
	if got[7] != 7 || got[255] != 255 {
		t.Errorf("a copy from device 0 to device 1: %d %d", got[7], got[255])
	}
	ok(t, b.Set(0))
	ok(t, b.CopyFromBuffer(s1, p)) // on the source's stream
	ok(t, s1.Sync())
	ok(t, b.CopyTo(got))
	if got[7] != 7 {
		t.Errorf("a copy from device 1 to device 0 on device 1's stream: %d", got[7])
	}
	isErr(t, "a copy within device 0 on device 1's stream", b.CopyFromBuffer(s1, a), cuda.ErrWrongDevice, "device 0", "device 1")
}

// Close of a buffer and its views racing with their sets, slices and copies
// on streams in other goroutines: each call either runs whole or is
// refused with ErrClosed, and none reaches the driver with freed memory
// (the fake refuses those with INVALID_VALUE, which would surface here).
func TestLayerBufferCloseRacesWithUse(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	other := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 64))
	defer other.Close()
	for round := 0; round < 100; round++ {
		b := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 128))
		v := must[*cuda.Buffer[float32]](t)(b.Slice(64, 128))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		start := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := make([]float32, 64)
				<-start
				for i := 0; i < 100; i++ {
					var err error
					switch (w + i) % 6 {
					case 0:
						err = v.CopyFromAsync(s, h)
					case 1:
						// A slice of its own: it is written when s
						// reaches the copy, while h is read meanwhile.
						err = v.CopyToAsync(s, make([]float32, 64))
					case 2:
						err = v.Set(1)
					case 3:
						err = b.SetAsync(s, 2)
					case 4:
						err = other.CopyFromBuffer(s, v)
					case 5:
						var w *cuda.Buffer[float32]
						if w, err = b.Slice(0, 64); err == nil {
							err = w.CopyFrom(h)
						}
					}
					if err != nil && !errors.Is(err, cuda.ErrClosed) {
						errs <- err
						return
					}
				}
				errs <- s.Sync()
			}()
		}
		close(start)
		runtime.Gosched()
		if round%2 == 0 {
			ok(t, v.Close())
		}
		ok(t, b.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: a call racing with Close: %v", round, err)
			}
		}
	}
}
