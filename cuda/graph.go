package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Graph is work captured from a stream (Stream.Capture, or BeginCapture and
// EndCapture): the kernels, copies and memsets queued on the stream during
// the capture, not run then but recorded with their arguments, to be
// instantiated (Instantiate) and launched as one. It is safe for concurrent
// use, Close included: the package serializes the driver calls on one graph
// (Instantiate, Nodes, an Update from it), as the driver requires, so they
// run one after another. Close destroys it; so does the Close of the last open
// Device of its context, as for streams and events. Once it is closed, its
// methods return errors matching ErrClosed. The zero value and a nil *Graph
// are not usable: their methods return errors matching ErrInvalid.
type Graph struct {
	h driver.Graph
	object
	// mu serializes the driver calls on the graph: the driver requires
	// it, instantiation included ("Graph object thread safety").
	mu sync.Mutex
}

// GraphExec is a Graph instantiated (Graph.Instantiate): what
// Stream.LaunchGraph launches, as often as wanted, each launch running the
// graph's work in order after the work queued before on the stream. Update
// replaces its kernels' arguments (and copies' and memsets' parameters)
// with those of another capture of the same work. It is safe for
// concurrent use, Close included: launches and updates of one GraphExec
// reach the driver one at a time, as it requires (each launch is queued
// in a few microseconds; a graph runs once at a time anyway). Close and
// the device's Close destroy it
// as for a Graph. The zero value and a nil *GraphExec are not usable:
// their methods return errors matching ErrInvalid.
type GraphExec struct {
	h driver.GraphExec
	object
	// mu serializes the driver calls on the executable graph (launches
	// and updates), as Graph's mu does; Update takes it before the
	// graph's.
	mu sync.Mutex
}

// BeginCapture starts capturing s: until EndCapture, the kernels, copies
// and memsets queued on s (from any goroutine) are recorded into a graph
// instead of run. The capture is the driver's stream capture in
// CU_STREAM_CAPTURE_MODE_RELAXED (see the package documentation, "Graphs"):
// no goroutine's calls are refused because a capture is under way, the
// capture is tied to the stream and not to an OS thread, and EndCapture
// may come from any goroutine. The stream must be a non-blocking stream
// of NewStream (the default) or one adopted: the default streams and a
// stream of StreamOptions.Blocking are refused with ErrInvalidOptions
// before the driver is called, since work queued by other goroutines on
// the legacy default stream (Buffer.CopyFrom, say) would synchronise with
// a blocking stream and break its capture. A stream already capturing is
// refused with an error matching driver.ErrorIllegalState, its capture
// left as it was.
//
// During the capture, a call that waits for s's work (Sync, Query, an
// Event.Sync on an event recorded there) is refused by the driver and
// invalidates the capture: EndCapture then returns an error matching
// driver.ErrorStreamCaptureInvalidated. Buffer.SetAsync is captured as a
// memset; Buffer's copies from and to Go slices on a capturing stream, and
// AllocAsync, are refused (the graph would replay the package's staging
// memory).
func (s *Stream) BeginCapture() error {
	const op = "begin stream capture"
	if err := s.enter(op); err != nil {
		return err
	}
	defer s.r.Exit()
	if s.isDefault() {
		return &Error{Op: op, Detail: fmt.Sprintf("the %v cannot be captured (the driver captures neither default stream)", s),
			Fix: "capture a stream of Device.NewStream", Err: ErrInvalidOptions}
	}
	// The capture status first: the driver refuses cuStreamGetFlags on a
	// capturing stream and invalidates the capture.
	if err := s.refuseCapture(op, "is capturing already (or its capture was invalidated and not ended)",
		"end the capture under way first", driver.ErrorIllegalState); err != nil {
		return err
	}
	flags, err := driver.StreamGetFlagsCtx(s.p.ctx, s.h)
	if err != nil {
		return driverErr(op+": get the stream's flags", err)
	}
	if driver.StreamFlags(flags)&driver.StreamNonBlocking == 0 {
		return &Error{Op: op, Detail: fmt.Sprintf("the %v is blocking: work other goroutines queue on the legacy default stream would synchronise with it and invalidate the capture", s),
			Fix: "capture a non-blocking stream (Device.NewStream without StreamOptions.Blocking)", Err: ErrInvalidOptions}
	}
	return driverErr(op, driver.StreamBeginCaptureCtx(s.p.ctx, s.h, driver.StreamCaptureModeRelaxed))
}

// EndCapture ends the capture BeginCapture began on s and returns its
// graph, of s's Device; s runs its work again from then on. Without a
// capture under way it returns the driver's error (driver.ErrorIllegalState);
// for a capture invalidated by a call the driver refused during it, an
// error matching driver.ErrorStreamCaptureInvalidated (the capture is
// ended either way).
func (s *Stream) EndCapture() (*Graph, error) {
	const op = "end stream capture"
	if err := s.enter(op); err != nil {
		return nil, err
	}
	defer s.r.Exit()
	s.p.life.Throttle()
	h, err := driver.StreamEndCaptureCtx(s.p.ctx, s.h)
	if err != nil {
		if h != 0 {
			_ = driver.GraphDestroyCtx(s.p.ctx, h)
		}
		if errors.Is(err, driver.ErrorStreamCaptureInvalidated) {
			return nil, &Error{Op: op, Detail: "the capture was invalidated: a call during it was refused by the driver (a Sync or Query of the capturing stream, or work that synchronises with it)",
				Fix: "capture again without synchronising the stream until EndCapture; the refused call's error says which it was", Err: driver.ErrorStreamCaptureInvalidated}
		}
		return nil, driverErr(op, err)
	}
	return newGraph(op, s.dev, h)
}

// Capture captures the work f queues on s into a graph: BeginCapture, f(s),
// EndCapture. The capture ends however f returns: where f returns an error
// the graph is destroyed and Capture returns f's error as it is; where f
// panics, the capture is ended and its graph destroyed before the panic
// goes on. A nil f is an error matching ErrInvalid.
func (s *Stream) Capture(f func(*Stream) error) (g *Graph, err error) {
	if f == nil {
		return nil, invalidErr("capture stream", "capture function")
	}
	if err := s.BeginCapture(); err != nil {
		return nil, err
	}
	ended := false
	defer func() {
		if !ended { // f panicked
			if g, err := s.EndCapture(); err == nil {
				g.Close()
			}
		}
	}()
	ferr := f(s)
	ended = true
	g, err = s.EndCapture()
	if ferr != nil {
		if err == nil {
			g.Close()
		}
		return nil, ferr
	}
	return g, err
}

// Capturing reports whether s is being captured (cuStreamIsCapturing):
// true from BeginCapture to EndCapture, also once the capture is
// invalidated.
func (s *Stream) Capturing() (bool, error) {
	const op = "query stream capture"
	if err := s.enter(op); err != nil {
		return false, err
	}
	defer s.r.Exit()
	st, err := driver.StreamIsCapturingCtx(s.p.ctx, s.h)
	if err != nil {
		return false, driverErr(op, err)
	}
	return st != driver.StreamCaptureStatusNone, nil
}

// refuseCapture returns op's error where s is capturing
// (cuStreamIsCapturing): the stream, then state (what it is, and why op is
// refused), fix and err. Not capturing, it returns nil.
func (s *Stream) refuseCapture(op, state, fix string, err error) error {
	st, qerr := driver.StreamIsCapturingCtx(s.p.ctx, s.h)
	if qerr != nil {
		return driverErr(op+": query the stream's capture", qerr)
	}
	if st != driver.StreamCaptureStatusNone {
		return &Error{Op: op, Detail: fmt.Sprintf("the %v %s", s, state), Fix: fix, Err: err}
	}
	return nil
}

// newGraph wraps h, a graph of d's context the package made, with a call in
// flight on d (or on a stream of it).
func newGraph(op string, d *Device, h driver.Graph) (*Graph, error) {
	r, err := d.register(op, "device", uintptr(h), kindGraph, func() { _ = driver.GraphDestroyCtx(d.p.ctx, h) })
	if err != nil {
		return nil, err
	}
	return wrap(&Graph{h: h}, d, r, false), nil
}

// AdoptGraph wraps a graph made elsewhere in d's context (a CUgraph from C
// code, or from the driver package), so that it instantiates through this
// package. The wrapper does not own the graph: Close releases the wrapper
// and never destroys the graph, which its creator destroys after closing
// the wrapper. Closing d closes the wrapper. A nil handle is an error
// matching ErrInvalid and ErrInvalidHandle.
func (d *Device) AdoptGraph(h driver.Graph) (*Graph, error) {
	return adopt(d, "adopt graph", "graph", "a graph from cuGraphCreate or cuStreamEndCapture", uintptr(h), func(r *handle) *Graph {
		return wrap(&Graph{h: h}, d, r, true)
	})
}

// AdoptGraphExec wraps an instantiated graph made elsewhere in d's context
// (a CUgraphExec), so that it launches and updates through this package.
// The wrapper does not own it: Close releases the wrapper only. Closing d
// closes the wrapper. A nil handle is an error matching ErrInvalid and
// ErrInvalidHandle.
func (d *Device) AdoptGraphExec(h driver.GraphExec) (*GraphExec, error) {
	return adopt(d, "adopt graph exec", "graph exec", "an executable graph from cuGraphInstantiate", uintptr(h), func(r *handle) *GraphExec {
		return wrap(&GraphExec{h: h}, d, r, true)
	})
}

func (g *Graph) base() *object     { return &g.object }
func (x *GraphExec) base() *object { return &x.object }

func (g *Graph) operand() operand {
	o := objectOf(g)
	return operand{r: o.r, p: o.p, name: "graph"}
}

func (x *GraphExec) operand() operand {
	o := objectOf(x)
	return operand{r: o.r, p: o.p, name: "graph exec"}
}

// Handle is the driver handle (0 for a nil Graph). It stays valid until
// the graph is closed.
func (g *Graph) Handle() driver.Graph { return nilOr(g, func(g *Graph) driver.Graph { return g.h }) }

// Device is the Device the graph was captured on or adopted through (nil
// for a nil Graph).
func (g *Graph) Device() *Device { return objectOf(g).dev }

// String describes the graph.
func (g *Graph) String() string { return objectOf(g).describe("graph", uintptr(g.Handle())) }

// Nodes is the number of nodes of the graph (cuGraphGetNodes): one per
// kernel, copy or memset captured, and the driver's own for events
// recorded or waited on during the capture.
func (g *Graph) Nodes() (int, error) {
	const op = "graph nodes"
	if err := g.operand().enter(op); err != nil {
		return 0, err
	}
	defer g.r.Exit()
	g.mu.Lock()
	nodes, err := driver.GraphGetNodesCtx(g.p.ctx, g.h)
	g.mu.Unlock()
	if err != nil {
		return 0, driverErr(op, err)
	}
	return len(nodes), nil
}

// Instantiate makes an executable graph of g (cuGraphInstantiateWithFlags,
// which needs a driver from 11.4: an older one returns an error matching
// ErrNotSupported). The GraphExec is independent of g: g may be closed,
// or captured again, without changing it.
func (g *Graph) Instantiate() (*GraphExec, error) {
	const op = "instantiate graph"
	if err := g.operand().enter(op); err != nil {
		return nil, err
	}
	defer g.r.Exit()
	g.p.life.Throttle()
	g.mu.Lock()
	h, err := driver.GraphInstantiateWithFlagsCtx(g.p.ctx, g.h, 0)
	g.mu.Unlock()
	if err != nil {
		return nil, driverErr(op, err)
	}
	r, err := g.dev.register(op, "graph's device", uintptr(h), kindGraphExec, func() { _ = driver.GraphExecDestroyCtx(g.p.ctx, h) })
	if err != nil {
		return nil, err
	}
	return wrap(&GraphExec{h: h}, g.dev, r, false), nil
}

// Close destroys the graph (an adopted one's wrapper is released, and the
// graph left alone). It never blocks, never waits for another goroutine and
// calls the driver for nothing, and is idempotent: calls in flight on it
// finish normally, and the package's flusher goroutine destroys it once
// none holds it. The executable graphs instantiated from it are not
// affected. It returns nil; a nil Graph returns an error matching
// ErrInvalid.
func (g *Graph) Close() error { return objectOf(g).close("destroy graph", "graph") }

// Handle is the driver handle (0 for a nil GraphExec). It stays valid
// until the GraphExec is closed.
func (x *GraphExec) Handle() driver.GraphExec {
	return nilOr(x, func(x *GraphExec) driver.GraphExec { return x.h })
}

// Device is the GraphExec's Device (nil for a nil GraphExec).
func (x *GraphExec) Device() *Device { return objectOf(x).dev }

// String describes the executable graph.
func (x *GraphExec) String() string { return objectOf(x).describe("graph exec", uintptr(x.Handle())) }

// LaunchGraph queues the executable graph x on s (cuGraphLaunch): its work
// runs in the graph's order after the work queued before on s, and work
// queued on s afterwards, events recorded included, waits for it, as for
// any work of s. x must be of s's context, else the error matches
// ErrWrongDevice. A launch allocates nothing.
func (s *Stream) LaunchGraph(x *GraphExec) error {
	const op = "launch graph"
	if err := enterPair(op, s.operand("stream"), x.operand(), "launch the graph on a stream of the device it was captured on"); err != nil {
		return err
	}
	defer s.r.Exit()
	defer x.r.Exit()
	x.mu.Lock()
	err := driver.GraphLaunchCtx(s.p.ctx, x.h, s.h)
	x.mu.Unlock()
	return driverErr(op, err)
}

// Update makes x run g's parameters from its next launch on: the kernels'
// arguments and configurations, and the copies' and memsets' addresses
// and values, of g, a graph of the same work (the same nodes, in the same
// order, of the same kinds and kernels) captured again with other
// arguments (cuGraphExecUpdate). Launches already queued keep the
// parameters they were queued with. A graph of other work is refused by
// the driver: the error matches driver.ErrorGraphExecUpdateFailure and
// says what differed, and x is left as it was. g must be of x's context
// (ErrWrongDevice). In builds for 12.0 and later this needs a driver from
// 12.0 (an older one returns an error matching ErrNotSupported).
func (x *GraphExec) Update(g *Graph) error {
	const op = "update graph exec"
	if err := enterPair(op, x.operand(), g.operand(), "update with a graph captured on the graph exec's device"); err != nil {
		return err
	}
	defer x.r.Exit()
	defer g.r.Exit()
	x.mu.Lock()
	g.mu.Lock()
	result, err := graphExecUpdate(x.p.ctx, x.h, g.h)
	g.mu.Unlock()
	x.mu.Unlock()
	if err == nil {
		return nil
	}
	e := driverErr(op, err)
	if ce, ok := e.(*Error); ok && errors.Is(err, driver.ErrorGraphExecUpdateFailure) {
		ce.Detail = fmt.Sprintf("the graph is not the same work as the graph exec's (%v)", result)
		ce.Fix = "update with a capture of the same kernels, copies and memsets in the same order, or instantiate the new graph"
	}
	return e
}

// Close destroys the executable graph (an adopted one's wrapper is
// released, and the graph left alone). Launches already queued still run:
// the driver frees it once they complete. Like Graph.Close it never
// blocks, calls the driver for nothing and is idempotent. It returns nil;
// a nil GraphExec returns an error matching ErrInvalid.
func (x *GraphExec) Close() error { return objectOf(x).close("destroy graph exec", "graph exec") }
