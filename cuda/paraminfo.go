//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

//cudagen:bound cuFuncGetParamInfo

package cuda

import (
	"errors"

	"github.com/cudagen/cudagen/cuda/driver"
)

// kernelParams asks the driver for f's parameters (cuFuncGetParamInfo, in
// builds for 12.4 and later): it answers for each index below the count,
// and CUDA_ERROR_INVALID_VALUE past the last. False where the driver cannot
// tell (a driver before 12.4, or another error).
func kernelParams(ctx driver.Context, f driver.Function) ([]KernelParam, bool) {
	var ps []KernelParam
	for i := uint64(0); i < maxParams; i++ {
		off, size, err := driver.FuncGetParamInfoCtx(ctx, f, i)
		if errors.Is(err, driver.ErrorInvalidValue) {
			return ps, true
		}
		if err != nil {
			return nil, false
		}
		ps = append(ps, KernelParam{Offset: int(off), Size: int(size)})
	}
	return nil, false
}

// maxParams bounds the parameters asked: a kernel's take at most 32764
// bytes, so it has no more than that many.
const maxParams = 32764
