package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/internal/ptx"
)

type spinKernel struct {
	once sync.Once
	mod  driver.Module
	fn   driver.Function
	err  error
}

var spinKernels sync.Map // *ctxState → *spinKernel

// MaxSpin is the longest work Spin queues: longer asks are refused.
const MaxSpin = time.Hour

// Spin queues GPU work on s that takes d: a single-thread kernel that
// busy-waits on the GPU's clock. It gives events measurable work of known
// duration, like torch.cuda._sleep, for tests, examples and benchmarks. d
// must be from 0 to MaxSpin; a negative d or one over MaxSpin is refused with
// ErrInvalidOptions before anything is queued.
func (s *Stream) Spin(d time.Duration) error {
	const op = "queue spin kernel"
	if d < 0 || d > MaxSpin {
		return &Error{Op: op, Detail: fmt.Sprintf("duration %v is outside [0, %v]", d, MaxSpin),
			Fix: "pass a duration from 0 to cuda.MaxSpin", Err: ErrInvalidOptions}
	}
	if err := s.enter(op); err != nil {
		return err
	}
	defer s.r.Exit()
	v, ok := spinKernels.Load(s.dev.p)
	if !ok { // the first Spin of the context
		v, _ = spinKernels.LoadOrStore(s.dev.p, &spinKernel{})
	}
	k := v.(*spinKernel)
	k.once.Do(func() {
		img := []byte(ptx.Spin)
		k.mod, k.err = driver.ModuleLoadDataCtx(s.dev.p.ctx, img)
		if k.err != nil {
			k.err = driverErr("load the spin kernel (PTX JIT)", k.err)
			return
		}
		k.fn, k.err = driver.ModuleGetFunctionCtx(s.dev.p.ctx, k.mod, ptx.SpinEntry)
		k.err = driverErr("find the spin kernel", k.err)
	})
	if k.err != nil {
		return k.err
	}
	ns := uint64(d)
	var pin runtime.Pinner
	pin.Pin(&ns)
	defer pin.Unpin()
	params := [1]unsafe.Pointer{unsafe.Pointer(&ns)}
	err := driver.LaunchKernelCtx(s.dev.p.ctx, k.fn, 1, 1, 1, 1, 1, 1, 0, s.h, params[:], nil)
	return driverErr(op, err)
}
