package cuda

import "github.com/cudagen/cudagen/cuda/driver"

// The special stream handles of cuda.h: CU_STREAM_LEGACY and
// CU_STREAM_PER_THREAD. They name the calling thread's view of the context's
// default streams whichever way the bindings were built.
const (
	streamLegacy    driver.Stream = 0x1
	streamPerThread driver.Stream = 0x2
)

// initStreams sets up a device's two default streams. The legacy one is the
// NULL stream, which means the legacy stream because the bindings are built
// without CUDA_API_PER_THREAD_DEFAULT_STREAM; should they ever be built with
// it (driver.PerThreadDefaultStream), NULL would mean the per-thread stream,
// so the legacy stream is then named by its explicit handle.
func (d *Device) initStreams() {
	legacy := driver.Stream(0)
	if driver.PerThreadDefaultStream {
		legacy = streamLegacy
	}
	d.def = Stream{dev: d, h: legacy, p: d.p, r: &d.h}
	d.pts = Stream{dev: d, h: streamPerThread, p: d.p, r: &d.h}
}

// PerThreadStream is the per-thread default stream of the device's context
// (CU_STREAM_PER_THREAD, handle 0x2). Unlike DefaultStream it does not
// synchronise with the context's other streams: work queued on it runs
// alongside work on blocking streams (StreamOptions.Blocking) and non-blocking
// streams alike, as on a stream from NewStream. It does synchronise with the
// legacy default stream, as every blocking stream does. It needs no Close
// (closing it does nothing); calls on it return ErrClosed once the device is
// closed, as on DefaultStream. For a nil Device it returns nil.
//
// The driver keeps one such stream per OS thread and context, and Go moves
// goroutines between OS threads: two calls from one goroutine may reach two
// different threads' streams, so work queued by separate calls is not ordered
// by the stream. Order it with events (Record on the stream, then Wait or
// Stream.Wait), or use a stream of your own (NewStream) for a sequence of
// work. Its use is interoperating with C or C++ code that queues work on
// the per-thread default stream (built with --default-stream per-thread, or
// passing CU_STREAM_PER_THREAD) from the same thread, and single calls
// (a Record, a Spin) that must not wait for the blocking streams.
func (d *Device) PerThreadStream() *Stream {
	if d == nil || d.p == nil {
		return nil
	}
	return &d.pts
}
