//go:build cgo

package driver

// Go funcs as graph host nodes. The driver calls a host node's function at
// every launch of an exec made from its graph, so its handle cannot be
// released after a call: a graph keeps it through a user object whose
// destructor releases it (cuUserObjectCreate, cuGraphRetainUserObject with
// CU_GRAPH_USER_OBJECT_MOVE). An exec holds the user objects of the graph
// it was instantiated from (the CUDA C++ Programming Guide, "User
// Objects"; cuda.h refers to it), and a clone or a child graph node
// clones them, so the func lives until the last of them is destroyed and
// its launches have finished; the driver runs the destructor on a thread
// of its own then. An exec cannot hold a user object, so a func set into
// an exec is released by the caller.

// GraphAddHostNodeGo adds a host node that calls f to hGraph, after the
// nodes in dependencies, as cuGraphAddHostNode: f runs at every launch of
// an exec made from hGraph, on a thread of the driver's, where it must not
// call CUDA. hGraph keeps f until hGraph and every exec made from it are
// destroyed and their launches have finished; then the driver releases it
// on a thread of its own. A nil f is refused with an error matching
// ErrorInvalidValue. What a panic of f does: CallbackPanic.
func GraphAddHostNodeGo(hGraph Graph, dependencies []GraphNode, f func()) (GraphNode, error) {
	return GraphAddHostNodeGoCtx(0, hGraph, dependencies, f)
}

// GraphAddHostNodeGoCtx is GraphAddHostNodeGo making ctx current first.
func GraphAddHostNodeGoCtx(ctx Context, hGraph Graph, dependencies []GraphNode, f func()) (GraphNode, error) {
	if f == nil {
		return 0, &nilFuncError{"GraphAddHostNodeGo", "f"}
	}
	c := &goCallback{form: "GraphAddHostNodeGo", host: f}
	h := newCallback(c, false)
	obj, err := tieToGraph(ctx, hGraph, c, h)
	if err != nil {
		return 0, err
	}
	node, err := cGraphAddHostNode(ctx, hGraph, dependencies, h)
	if err != nil {
		untie(ctx, hGraph, obj, c, h)
		return 0, err
	}
	return node, nil
}

// GraphHostNodeSetParamsGo makes hNode, a host node of hGraph, call f, as
// cuGraphHostNodeSetParams: execs made from hGraph afterwards call f, and
// those made before keep calling what they called. hGraph keeps f as
// GraphAddHostNodeGo does; the func it replaces stays kept until then too
// (the execs made before may still call it). hGraph must be the graph that
// holds hNode: were it another, f would be released with that one. A nil
// f is refused with an error matching ErrorInvalidValue.
func GraphHostNodeSetParamsGo(hGraph Graph, hNode GraphNode, f func()) error {
	return GraphHostNodeSetParamsGoCtx(0, hGraph, hNode, f)
}

// GraphHostNodeSetParamsGoCtx is GraphHostNodeSetParamsGo making ctx
// current first.
func GraphHostNodeSetParamsGoCtx(ctx Context, hGraph Graph, hNode GraphNode, f func()) error {
	if f == nil {
		return &nilFuncError{"GraphHostNodeSetParamsGo", "f"}
	}
	c := &goCallback{form: "GraphHostNodeSetParamsGo", host: f}
	h := newCallback(c, false)
	obj, err := tieToGraph(ctx, hGraph, c, h)
	if err != nil {
		return err
	}
	if err := cGraphHostNodeSetParams(ctx, hNode, h); err != nil {
		untie(ctx, hGraph, obj, c, h)
		return err
	}
	return nil
}

// GraphExecHostNodeSetParamsGo makes hNode, a host node of the graph that
// hGraphExec was instantiated from, call f in hGraphExec, as
// cuGraphExecHostNodeSetParams: the launches after it call f. An exec
// cannot keep a user object, so f is kept until release is called, which
// the caller must do once hGraphExec can no longer call f: after
// hGraphExec is destroyed, or its node is set again, and the launches
// before have finished (synchronize their streams: cuGraphExecDestroy
// does not wait for them). Until then f and what it captures stay alive;
// should the driver call f after release, the process crashes with a
// message saying so (see CallbackPanic). release may be called more than
// once; on error it does nothing. A nil f is refused with an error
// matching ErrorInvalidValue.
func GraphExecHostNodeSetParamsGo(hGraphExec GraphExec, hNode GraphNode, f func()) (release func(), err error) {
	return GraphExecHostNodeSetParamsGoCtx(0, hGraphExec, hNode, f)
}

// GraphExecHostNodeSetParamsGoCtx is GraphExecHostNodeSetParamsGo making
// ctx current first.
func GraphExecHostNodeSetParamsGoCtx(ctx Context, hGraphExec GraphExec, hNode GraphNode, f func()) (release func(), err error) {
	if f == nil {
		return func() {}, &nilFuncError{"GraphExecHostNodeSetParamsGo", "f"}
	}
	c := &goCallback{form: "GraphExecHostNodeSetParamsGo", host: f}
	h := newCallback(c, false)
	if err := cGraphExecHostNodeSetParams(ctx, hGraphExec, hNode, h); err != nil {
		c.release(h)
		return func() {}, err
	}
	return func() { c.release(h) }, nil
}
