//go:build !cgo

package driver

// NewHostFn returns nothing callable without cgo: every call that would
// take it returns the cgo-disabled error.
func NewHostFn(f func()) (fn HostFn, userData uintptr, release func()) {
	return fn, userData, func() {}
}

// LaunchHostFuncGo returns the cgo-disabled error without cgo.
func LaunchHostFuncGo(Stream, func()) error { return errNoCgo }

// LaunchHostFuncGoCtx returns the cgo-disabled error without cgo.
func LaunchHostFuncGoCtx(Context, Stream, func()) error { return errNoCgo }

// StreamAddCallbackGo returns the cgo-disabled error without cgo.
func StreamAddCallbackGo(Stream, func(Stream, Result), uint32) error { return errNoCgo }

// StreamAddCallbackGoCtx returns the cgo-disabled error without cgo.
func StreamAddCallbackGoCtx(Context, Stream, func(Stream, Result), uint32) error { return errNoCgo }

// UserObjectCreateGo returns the cgo-disabled error without cgo.
func UserObjectCreateGo(func(), uint32, uint32) (UserObject, error) { return 0, errNoCgo }

// UserObjectCreateGoCtx returns the cgo-disabled error without cgo.
func UserObjectCreateGoCtx(Context, func(), uint32, uint32) (UserObject, error) { return 0, errNoCgo }

// GraphAddHostNodeGo returns the cgo-disabled error without cgo.
func GraphAddHostNodeGo(Graph, []GraphNode, func()) (GraphNode, error) { return 0, errNoCgo }

// GraphAddHostNodeGoCtx returns the cgo-disabled error without cgo.
func GraphAddHostNodeGoCtx(Context, Graph, []GraphNode, func()) (GraphNode, error) {
	return 0, errNoCgo
}

// GraphHostNodeSetParamsGo returns the cgo-disabled error without cgo.
func GraphHostNodeSetParamsGo(Graph, GraphNode, func()) error { return errNoCgo }

// GraphHostNodeSetParamsGoCtx returns the cgo-disabled error without cgo.
func GraphHostNodeSetParamsGoCtx(Context, Graph, GraphNode, func()) error { return errNoCgo }

// GraphExecHostNodeSetParamsGo returns the cgo-disabled error without cgo.
func GraphExecHostNodeSetParamsGo(GraphExec, GraphNode, func()) (func(), error) {
	return func() {}, errNoCgo
}

// GraphExecHostNodeSetParamsGoCtx returns the cgo-disabled error without cgo.
func GraphExecHostNodeSetParamsGoCtx(Context, GraphExec, GraphNode, func()) (func(), error) {
	return func() {}, errNoCgo
}

// OccupancyMaxPotentialBlockSizeGo returns the cgo-disabled error without cgo.
func OccupancyMaxPotentialBlockSizeGo(Function, func(int32) uint64, int32, OccupancyFlags) (int32, int32, error) {
	return 0, 0, errNoCgo
}

// OccupancyMaxPotentialBlockSizeGoCtx returns the cgo-disabled error without cgo.
func OccupancyMaxPotentialBlockSizeGoCtx(Context, Function, func(int32) uint64, int32, OccupancyFlags) (int32, int32, error) {
	return 0, 0, errNoCgo
}
