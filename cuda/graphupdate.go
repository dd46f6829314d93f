//cudagen:sig GraphExecUpdate(hGraphExec GraphExec, hGraph Graph) (GraphExecUpdateResultInfo, error)

//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

package cuda

import "github.com/cudagen/cudagen/cuda/driver"

// graphExecUpdate is cuGraphExecUpdate in the form of 12.0 and later
// (cuGraphExecUpdate_v2), with the driver's reason where it refuses.
func graphExecUpdate(ctx driver.Context, x driver.GraphExec, g driver.Graph) (driver.GraphExecUpdateResult, error) {
	info, err := driver.GraphExecUpdateCtx(ctx, x, g)
	return info.Result, err
}
