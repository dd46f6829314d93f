package nccl_test

import (
	"context"
	"time"

	"github.com/cudagen/cudagen/cuda/nccl"
)

// A communicator aborted when its context ends first: stop, called once
// the collectives are done, keeps it from being aborted, and reports
// whether it was (then the communicator is gone, not to be destroyed).
func ExampleCommAbort_context() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var comm nccl.Comm // from CommInitRank or CommInitAll
	stop := context.AfterFunc(ctx, func() { _ = nccl.CommAbort(comm) })
	// ... queue collectives on comm and wait for them with ctx ...
	if stop() {
		_ = nccl.CommDestroy(comm) // not aborted: destroyed as usual
	}
}
