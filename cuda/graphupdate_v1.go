//cudagen:sig GraphExecUpdate(hGraphExec GraphExec, hGraph Graph) (GraphNode, GraphExecUpdateResult, error)

//go:build cuda11.8

package cuda

import "github.com/cudagen/cudagen/cuda/driver"

// graphExecUpdate is cuGraphExecUpdate in the form of 11.x (the pinned
// header of 11.8), with the driver's reason where it refuses.
func graphExecUpdate(ctx driver.Context, x driver.GraphExec, g driver.Graph) (driver.GraphExecUpdateResult, error) {
	_, result, err := driver.GraphExecUpdateCtx(ctx, x, g)
	return result, err
}
