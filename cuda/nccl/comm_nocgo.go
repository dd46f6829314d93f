//go:build !cgo

package nccl

import "github.com/cudagen/cudagen/cuda/driver"

// Without cgo every hand-written call returns errNoCgo, as the generated
// ones do.

func GroupStart() error { return errNoCgo }
func GroupEnd() error   { return errNoCgo }
func CommInitRank(driver.Context, int32, UniqueID, int32) (Comm, error) {
	return 0, errNoCgo
}
func CommInitRankConfig(driver.Context, int32, UniqueID, int32, *Config) (Comm, error) {
	return 0, errNoCgo
}
func CommInitAll([]Comm, []int32) error                   { return errNoCgo }
func CommSplit(Comm, int32, int32, *Config) (Comm, error) { return 0, errNoCgo }
func RedOpCreatePreMulSumHost[T Scalar](_ T, datatype DataType, _ Comm) (RedOp, error) {
	if err := checkScalar[T](datatype); err != nil {
		return 0, err
	}
	return 0, errNoCgo
}
