//go:build cuda11.8

//cudagen:unbound cuFuncGetParamInfo

package cuda

import "github.com/cudagen/cudagen/cuda/driver"

// kernelParams: where the pinned header has no cuFuncGetParamInfo (11.8),
// a build does not know a kernel's parameters.
func kernelParams(driver.Context, driver.Function) ([]KernelParam, bool) { return nil, false }
