package nccl

import (
	"fmt"
	"unsafe"
)

// Scalar is a type a PreMulSum scalar may have: the Go type of one of
// DataType's values (uint16 holds a Float16's or a Bfloat16's bits).
type Scalar interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64 | ~uint16
}

// dataTypeSize is the bytes of one value of t, 0 for none.
func dataTypeSize(t DataType) uintptr {
	switch t {
	case Int8, Uint8:
		return 1
	case Float16, Bfloat16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	case Int64, Uint64, Float64:
		return 8
	}
	return 0
}

// checkScalar refuses a scalar whose size is not datatype's.
func checkScalar[T Scalar](datatype DataType) error {
	var z T
	if n := dataTypeSize(datatype); n != unsafe.Sizeof(z) {
		return fmt.Errorf("cuda: ncclRedOpCreatePreMulSum: a %T scalar is %d bytes, and a value of %v %d: pass a scalar of the collectives' type: %w",
			z, unsafe.Sizeof(z), datatype, n, ErrInvalidSize)
	}
	return nil
}
