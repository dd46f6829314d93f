package nccl

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// ErrInGroup is matched by the refusal of a communicator's creation inside
// a group (Group, or GroupStart on the same thread): NCCL would create it
// when the group ends, writing it after the call has returned.
var ErrInGroup = errors.New("cuda: nccl: communicator created inside a group")

// ErrNonBlocking is matched by the refusal of a non-blocking communicator
// (Config.Blocking 0, or NCCL_COMM_BLOCKING=0), which NCCL writes after
// the call has returned.
var ErrNonBlocking = errors.New("cuda: nccl: non-blocking communicator")

// Undefined is the value of a Config field left to NCCL
// (NCCL_CONFIG_UNDEF_INT).
const Undefined = math.MinInt32

// DefaultConfig is NCCL_CONFIG_INITIALIZER: a Config whose size, magic and
// version NCCL checks, with every other field left to NCCL (Undefined,
// and no network name). Change fields of it before passing it.
func DefaultConfig() Config {
	return Config{
		Size:           uint64(unsafe.Sizeof(Config{})),
		Magic:          0xcafebeef,
		Version:        uint32(versionCode()),
		Blocking:       Undefined,
		CgaClusterSize: Undefined,
		MinCTAs:        Undefined,
		MaxCTAs:        Undefined,
		SplitShare:     Undefined,
	}
}

// versionCode is the pinned header's NCCL_VERSION of its major and minor
// version (22200 for 2.22; NCCL_VERSION(X, Y, Z) is X*10000 + Y*100 + Z
// from 2.9): NCCL reads the fields that version has.
func versionCode() int {
	var major, minor int
	fmt.Sscanf(HeaderVersion, "%d.%d", &major, &minor)
	return major*10000 + minor*100
}
