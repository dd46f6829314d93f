//go:build cuda11.8

package cuda

import "github.com/cudagen/cudagen/cuda/driver"

// kernelParams: the 11.8 header has no cuFuncGetParamInfo, so a build for
// it does not know a kernel's parameters.
func kernelParams(driver.Context, driver.Function) ([]KernelParam, bool) { return nil, false }
