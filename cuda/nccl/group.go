package nccl

import (
	"errors"
	"runtime"
)

// Group runs f between GroupStart and GroupEnd on one OS thread. NCCL keeps
// a group's state per thread, and a goroutine may move to another thread
// between two calls: calling GroupStart and GroupEnd directly from Go can
// end another thread's group, or none (ncclInvalidUsage). Group locks the
// goroutine to its thread for f, so f must make its NCCL calls itself, not
// from other goroutines. The group ends even when f fails; the error is
// f's, then GroupEnd's.
func Group(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := GroupStart(); err != nil {
		return err
	}
	ferr := f()
	return errors.Join(ferr, GroupEnd())
}
