package cuda

import (
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/ctype"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// PreparedLaunch is a kernel launch whose configuration and arguments are
// checked and packed once (Kernel.Prepare), for a hot loop: Set replaces an
// argument, and Stream.LaunchPrepared launches with the arguments as they
// are, at the cost of the driver's cuLaunchKernel call (the arguments are
// not checked or packed again). Its arguments live in C memory of its own,
// which the driver reads during each launch and which goes with the
// PreparedLaunch once it is unreachable; it holds no driver object and
// needs no Close. It is usable while its kernel's module is open.
//
// Set and LaunchPrepared of one PreparedLaunch must not overlap (one
// goroutine sets and launches, as a loop does): one made while another is
// under way in another goroutine is refused with an error matching
// ErrInvalid, rather than launching torn arguments. Prepare one per
// goroutine to launch one kernel from several. The zero value and a nil
// *PreparedLaunch are not usable: their methods return errors matching
// ErrInvalid.
type PreparedLaunch struct {
	k           *Kernel
	grid, block Dim3
	cluster     Dim3 // the zero Dim3: no clusters
	shared      uint32
	cooperative bool
	params      []unsafe.Pointer // in words: one pointer per argument, to its value
	types       []reflect.Type   // each argument's type
	busy        atomic.Bool      // a Set or a launch is under way
}

// Prepare checks cfg and args as Stream.Launch does (the same errors,
// before anything is kept) and packs them for LaunchPrepared.
func (k *Kernel) Prepare(cfg LaunchConfig, args ...driver.KernelArg) (*PreparedLaunch, error) {
	const op = "prepare launch"
	if k == nil || k.m == nil {
		return nil, invalidErr(op, "kernel")
	}
	if err := k.m.operand("kernel's module").enter(op); err != nil {
		return nil, err
	}
	defer k.m.r.Exit()
	grid, block := cfg.dims()
	if err := k.checkConfig(op, grid, block, cfg.cluster(), cfg.SharedMem); err != nil {
		return nil, err
	}
	if err := k.checkArgs(op, args); err != nil {
		return nil, err
	}
	ws, params := packArgs(args)
	if ws == nil {
		return nil, hostMemErr(op)
	}
	l := &PreparedLaunch{k: k, grid: grid, block: block, cluster: cfg.cluster(), shared: uint32(cfg.SharedMem), cooperative: cfg.Cooperative,
		params: params, types: make([]reflect.Type, len(args))}
	runtime.AddCleanup(l, lifetime.FreeWords, ws) // C memory, freed once l is unreachable
	for i := range args {
		l.types[i] = argType(&args[i])
	}
	return l, nil
}

// packArgs lays args out in C memory (lifetime.Words, which keeps freed
// sets for reuse): the array of pointers cuLaunchKernel takes, then each
// value from an 8-byte boundary, params[i] pointing at it. nil if out of
// memory. The arguments are checked (Kernel.checkArgs).
func packArgs(args []driver.KernelArg) (ws []lifetime.Word, params []unsafe.Pointer) {
	n := len(args)
	words := n
	for i := range args {
		words += (int(argType(&args[i]).Size()) + 7) / 8
	}
	if ws = lifetime.Words(max(words, 1)); ws == nil {
		return nil, nil
	}
	base := unsafe.Pointer(&ws[0])
	params = unsafe.Slice((*unsafe.Pointer)(base), max(n, 1))[:n]
	off := n * 8
	for i := range args {
		size := argType(&args[i]).Size()
		params[i] = unsafe.Add(base, off)
		storeArg(params[i], &args[i], size)
		off += (int(size) + 7) / 8 * 8
	}
	return ws, params
}

// storeArg copies the size bytes of a's value to p.
func storeArg(p unsafe.Pointer, a *driver.KernelArg, size uintptr) {
	data := (*[2]unsafe.Pointer)(unsafe.Pointer(a))[1] // a plain value's interface data word points at it
	copy(unsafe.Slice((*byte)(p), size), unsafe.Slice((*byte)(data), size))
}

// store copies a's value into argument i's place.
func (l *PreparedLaunch) store(i int, a *driver.KernelArg) {
	storeArg(l.params[i], a, l.types[i].Size())
}

// Set replaces argument i (from 0, in the kernel's parameter order) with a
// for the launches from now on; the others stay as they are. a must be of
// the size of the argument it replaces (a DevicePtr or Buffer.Arg for a
// pointer, the same number type): another size is refused with
// ErrMismatch, an i out of range with ErrInvalidOptions, a zero KernelArg
// with ErrInvalid and one holding Go pointers with ErrInvalidType, before
// anything changes. It allocates nothing.
func (l *PreparedLaunch) Set(i int, a driver.KernelArg) error {
	const op = "set launch argument"
	if l == nil || l.k == nil {
		return invalidErr(op, "prepared launch")
	}
	if i < 0 || i >= len(l.params) {
		return &Error{Op: op, Detail: fmt.Sprintf("argument %d of a launch of %d arguments", i, len(l.params)),
			Fix: "pass the index of a kernel parameter, from 0", Err: ErrInvalidOptions}
	}
	t := argType(&a)
	if t != l.types[i] {
		switch {
		case t == nil:
			return &Error{Op: op, Detail: fmt.Sprintf("argument %d of kernel %s is the zero KernelArg", i, l.k.name),
				Fix: "make each argument with driver.Arg, driver.ArgStruct or Buffer.Arg", Err: ErrInvalid}
		case !ctype.Plain(t):
			return &Error{Op: op, Detail: fmt.Sprintf("argument %d of kernel %s is a %s, which holds Go pointers or has no C layout", i, l.k.name, t),
				Fix: "pass numbers, DevicePtr (Buffer.Arg) or structs of them; Go memory cannot be a kernel argument", Err: ErrInvalidType}
		case t.Size() != l.types[i].Size():
			return &Error{Op: op, Detail: fmt.Sprintf("argument %d of kernel %s is a %s of %d bytes, and the argument it replaces a %s of %d bytes", i, l.k.name, t, t.Size(), l.types[i], l.types[i].Size()),
				Fix: "pass a value of the replaced argument's type", Err: ErrMismatch}
		}
	}
	if !l.busy.CompareAndSwap(false, true) {
		return l.overlapErr(op)
	}
	l.store(i, &a)
	l.busy.Store(false)
	return nil
}

func (l *PreparedLaunch) overlapErr(op string) error {
	return &Error{Op: op, Detail: "another goroutine is setting or launching this prepared launch",
		Fix: "use a prepared launch from one goroutine at a time, or prepare one per goroutine", Err: ErrInvalid}
}

// Kernel is the launch's kernel (nil for a nil PreparedLaunch).
func (l *PreparedLaunch) Kernel() *Kernel {
	if l == nil {
		return nil
	}
	return l.k
}

// LaunchPrepared queues l's kernel on s with its configuration and current
// arguments (cuLaunchKernel, cuLaunchCooperativeKernel for a
// LaunchConfig.Cooperative, cuLaunchKernelEx for a LaunchConfig.Cluster);
// the driver copies them during the call, so a
// Set afterwards changes only later launches. Like Launch, the kernel must
// be of s's context (ErrWrongDevice) and its module open (ErrClosed). It
// allocates nothing.
func (s *Stream) LaunchPrepared(l *PreparedLaunch) error {
	const op = "launch prepared kernel"
	if l == nil || l.k == nil {
		return invalidErr(op, "prepared launch")
	}
	if !l.busy.CompareAndSwap(false, true) {
		return l.overlapErr(op)
	}
	r, k := noHot, l.k
	if s != nil && s.w != nil && k.hot && k.p == s.p && l.cluster == (Dim3{}) && !l.cooperative {
		// The hazard launch, as Launch's.
		r = lifetime.Launch(lifetime.Addr(s.w), k.mw, uintptr(k.f), dims3(l.grid), dims3(l.block), l.shared, uintptr(s.h), unsafe.Pointer(unsafe.SliceData(l.params)))
	}
	var err error
	if r != 0 {
		err = s.launchPrepared(op, l, r)
	}
	l.busy.Store(false)
	return err
}

// launchPrepared is LaunchPrepared with l held, past its hazard launch's
// result r (noHot where none was made).
func (s *Stream) launchPrepared(op string, l *PreparedLaunch, r int32) error {
	k := l.k
	withCtx, done, err := s.enterLaunch(op, k, r)
	if done || err != nil {
		return err
	}
	defer s.exitLaunch(k)
	if s.w != nil && l.cluster == (Dim3{}) && !l.cooperative && !withCtx {
		// As Launch: the driver takes the context from the stream.
		if err := driver.LaunchKernel(k.f, l.grid.X, l.grid.Y, l.grid.Z, l.block.X, l.block.Y, l.block.Z, l.shared, s.h, l.params, nil); !retry(err) {
			return driverErr(op, err)
		}
	}
	return driverErr(op, launchPacked(s.p.ctx, k.f, l.grid, l.block, l.cluster, l.shared, l.cooperative, s.h, l.params))
}
