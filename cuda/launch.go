package cuda

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/ctype"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// Dim3 is a grid's size in blocks or a block's in threads, as LaunchConfig
// takes it: a dimension left 0 counts as 1 there.
type Dim3 = driver.Dim3

// LaunchConfig is the shape of a kernel launch (cuda.core's LaunchConfig).
// The zero value launches one block of one thread. A dimension of Grid or
// Block left 0 counts as 1, so Dim3{X: n} is n along X (the driver itself
// refuses a 0 dimension).
type LaunchConfig struct {
	Grid  Dim3 // blocks in the grid
	Block Dim3 // threads per block
	// SharedMem is the dynamic shared memory per block, in bytes (the
	// kernel's extern __shared__ array): from 0 to the kernel's
	// KernelAttributes.MaxDynamicSharedMem.
	SharedMem int
	// Cooperative launches through cuLaunchCooperativeKernel: every block
	// of the grid runs at once, so that they may synchronise with each
	// other (cooperative groups' grid.sync()). The device must support it
	// (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH), else the driver's error
	// matches driver.ErrorNotSupported, and the grid must fit on the device
	// at once, else driver.ErrorCooperativeLaunchTooLarge.
	Cooperative bool
	// Cluster groups the grid's blocks into clusters of this many blocks
	// (thread block clusters: devices of compute capability 9.0 and later),
	// whose blocks run at once on one GPU processing cluster and share
	// their shared memory; the zero value launches without clusters, and a
	// dimension left 0 otherwise counts as 1. The grid must be a multiple of
	// it in each dimension (else ErrInvalidOptions, before the driver is
	// called). The launch goes through cuLaunchKernelEx with the
	// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION attribute, which needs a driver
	// from 11.6 (an older one returns an error matching ErrNotSupported;
	// clusters need a newer one still); a device or kernel
	// without clusters, or a cluster larger than it takes (8 blocks are
	// portable), gets the driver's error.
	Cluster Dim3
}

// Linear is the configuration of a one-dimensional launch over n elements:
// blocks of block threads (256 where block is 0 or less), and as many
// blocks as cover n (one where n is 0 or less; at most math.MaxUint32). The
// kernel checks its index against n: the last block may reach past it.
func Linear(n, block int) LaunchConfig {
	if block <= 0 {
		block = 256
	}
	b := uint32(min(block, math.MaxUint32))
	g := uint64(1)
	if n > 0 {
		g = (uint64(n) + uint64(b) - 1) / uint64(b)
	}
	return LaunchConfig{Grid: Dim3{X: uint32(min(g, math.MaxUint32))}, Block: Dim3{X: b}}
}

// cluster is c's cluster shape with each 0 dimension made 1, or the zero
// Dim3 for a launch without clusters.
func (c LaunchConfig) cluster() Dim3 {
	if c.Cluster == (Dim3{}) {
		return Dim3{}
	}
	return Dim3{X: max(c.Cluster.X, 1), Y: max(c.Cluster.Y, 1), Z: max(c.Cluster.Z, 1)}
}

// dims are c's grid and block with each 0 dimension made 1.
func (c LaunchConfig) dims() (grid, block Dim3) {
	return Dim3{X: max(c.Grid.X, 1), Y: max(c.Grid.Y, 1), Z: max(c.Grid.Z, 1)},
		Dim3{X: max(c.Block.X, 1), Y: max(c.Block.Y, 1), Z: max(c.Block.Z, 1)}
}

// Launch queues the kernel k on s with the configuration cfg and args, one
// per kernel parameter in order (driver.Arg for a number or a DevicePtr,
// driver.ArgStruct for a struct or an array, Buffer.Arg for a buffer),
// through cuLaunchKernel (cuLaunchCooperativeKernel for a
// cfg.Cooperative, cuLaunchKernelEx for a cfg.Cluster). The values are
// copied during the call; Go memory is never kept. k must be of s's
// context (a module loaded on s's device), else the error matches
// ErrWrongDevice.
//
// Before the driver is called, Launch refuses, with an error saying which:
// a block of more threads than the kernel takes
// (KernelAttributes.MaxThreadsPerBlock), a negative SharedMem or one over
// the 32-bit range, a grid that is not a whole number of clusters
// (ErrInvalidOptions); a zero KernelArg (ErrInvalid) or
// one holding Go pointers (ErrInvalidType); and, where the driver told the
// kernel's parameters (Kernel.Params), a number of arguments other than
// the kernel's parameters, or an argument whose size is not its
// parameter's (ErrMismatch), which the driver would read wrongly rather
// than refuse. Each argument lands at its parameter's offset, whatever
// Go's alignment of the value. A launch in steady state allocates
// nothing, and where the driver told the kernel's parameters, on a stream
// of its own, with arguments of the types an earlier launch of k passed,
// it is one crossing into C that holds the stream and the module open
// while the driver launches, as the events' hot calls do.
func (s *Stream) Launch(k *Kernel, cfg LaunchConfig, args ...driver.KernelArg) error {
	r := noHot
	if s != nil && s.w != nil && k != nil && k.p == s.p && cfg.Cluster == (Dim3{}) && !cfg.Cooperative {
		// The hazard launch (lifetime.go): arguments of the types that
		// passed the checks before, packed at their parameters' offsets on
		// the stack and passed to the driver as one parameter buffer,
		// launched in one crossing that holds the stream and the module open
		// without counting in.
		grid, block := cfg.dims()
		var buf hotArgs
		if plan := k.plan.Load(); plan != nil && k.fits(block, cfg.SharedMem) && packSeen(&buf, *plan, args) {
			if r = lifetime.LaunchPacked(lifetime.Addr(s.w), k.mw, uintptr(k.f), dims3(grid), dims3(block), uint32(cfg.SharedMem), uintptr(s.h), &buf.b[0], k.argBytes); r == 0 {
				return nil
			}
		}
	}
	return s.launch(k, cfg, args, r)
}

// launch is Launch past its hazard launch's result r (noHot where none was
// made): the launch counted in on s and on k's module, its configuration
// and arguments checked.
func (s *Stream) launch(k *Kernel, cfg LaunchConfig, args []driver.KernelArg, r int32) error {
	const op = "launch kernel"
	if k == nil || k.m == nil {
		return invalidErr(op, "kernel")
	}
	withCtx, done, err := s.enterLaunch(op, k, r)
	if done || err != nil {
		return err
	}
	defer s.exitLaunch(k)
	grid, block := cfg.dims()
	if err := k.checkConfig(op, grid, block, cfg.cluster(), cfg.SharedMem); err != nil {
		return err
	}
	if err := k.checkArgs(op, args); err != nil {
		return err
	}
	return s.launchChecked(op, k, grid, block, uint32(cfg.SharedMem), &cfg, args, withCtx)
}

// hotArgBytes are the most argument bytes a hazard launch packs on its
// stack; a kernel taking more launches through driver.LaunchArgsOf.
const hotArgBytes = 256

// hotArgs is a hazard launch's arguments, 8-byte aligned.
type hotArgs struct {
	_ [0]uint64
	b [hotArgBytes]byte
}

// dims3 is d as the hazard launches take it.
func dims3(d Dim3) [3]uint32 { return [3]uint32{d.X, d.Y, d.Z} }

// fits reports whether a block and SharedMem pass checkConfig: no more
// threads than k takes, SharedMem within 32 bits.
func (k *Kernel) fits(block Dim3, shared int) bool {
	n := uint64(block.X) * uint64(block.Y) * uint64(block.Z)
	return (k.maxThreads <= 0 || n <= uint64(k.maxThreads)) && shared >= 0 && uint64(shared) <= math.MaxUint32
}

// seen reports whether args are of the types of the first arguments that
// passed checkArgs, one by one.
func (k *Kernel) seen(args []driver.KernelArg) bool {
	c := k.checked.Load()
	if c == nil || len(*c) != len(args) {
		return false
	}
	for i := range args {
		if typeWord(&args[i]) != (*c)[i] {
			return false
		}
	}
	return true
}

// hotEntry is one argument of a hot kernel's launches: the type word of
// the argument that passed checkArgs first, and its parameter's offset and
// size (within hotArgBytes).
type hotEntry struct {
	typ       uintptr
	off, size uint16
}

// packSeen copies each argument's value into buf at its parameter's
// offset, in one pass that also checks each is of the type in plan (so
// that it passed checkArgs, and is of its parameter's size): false at the
// first that is not, or where args are not one per entry (buf then holds
// nothing the caller uses).
func packSeen(buf *hotArgs, plan []hotEntry, args []driver.KernelArg) bool {
	if len(args) != len(plan) {
		return false
	}
	for i := range args {
		e := &plan[i]
		w := (*[2]unsafe.Pointer)(unsafe.Pointer(&args[i]))
		if uintptr(w[0]) != e.typ {
			return false
		}
		src, off, size := w[1], uintptr(e.off), uintptr(e.size) // a plain value's data word points at it
		dst := unsafe.Pointer(&buf.b[off])
		switch {
		case size == 8 && (off|uintptr(src))%8 == 0:
			*(*uint64)(dst) = *(*uint64)(src)
		case size == 4 && (off|uintptr(src))%4 == 0:
			*(*uint32)(dst) = *(*uint32)(src)
		default:
			copy(buf.b[off:off+size], unsafe.Slice((*byte)(src), size))
		}
	}
	return true
}

// hotKernel sets what k's hazard launches read: its context, its module's
// state word and, where the driver told the parameters (so that the
// package checks their count and sizes) and they fit hotArgs, their
// offsets.
func (k *Kernel) hotKernel() {
	k.p, k.mw = k.m.p, lifetime.Addr(k.m.r.State)
	if k.known {
		k.offs = hotOffsets(k.params)
		k.hot = k.offs != nil
		for _, p := range k.params {
			k.argBytes = max(k.argBytes, p.Offset+p.Size)
		}
	}
}

// hotOffsets are the offsets of params, where each one lies within
// hotArgBytes; else nil.
func hotOffsets(params []KernelParam) []uint16 {
	offs := make([]uint16, len(params))
	for i, p := range params {
		if p.Offset < 0 || p.Size <= 0 || p.Offset+p.Size > hotArgBytes {
			return nil
		}
		offs[i] = uint16(p.Offset)
	}
	return offs
}

// enterLaunch takes a hazard launch's result r (noHot where none was
// made): done where that launch ran. Otherwise it counts the launch of k in
// on s and on k's module and checks that k is of s's context (exitLaunch
// counts it out; on an error nothing stays counted in), with withCtx where
// the driver refused the hazard launch, so that the counted one makes the
// context current. A hazard launch refused for a closing stream or module,
// or not made (noHot, no slot), is made the counted way, which says why or
// launches.
func (s *Stream) enterLaunch(op string, k *Kernel, r int32) (withCtx, done bool, err error) {
	if r != noHot {
		switch res := lifetime.Settle(r, s.r, k.m.r); {
		case res == 0:
			return false, true, nil
		case res > 0: // a CUresult
			withCtx = true
		}
	}
	if err := s.enter(op); err != nil {
		return false, false, err
	}
	if err := k.m.operand("kernel's module").enter(op); err != nil {
		s.r.Exit()
		return false, false, err
	}
	if k.m.p != s.p && k.m.p.ctx != s.p.ctx {
		s.exitLaunch(k)
		return false, false, &Error{Op: op, Detail: whose("the kernel", k.m.p, "the stream", s.p),
			Fix: "load the module on the stream's device (Device.LoadModule) and launch its kernel there", Err: ErrWrongDevice}
	}
	return withCtx, false, nil
}

// exitLaunch counts out a launch that enterLaunch counted in.
func (s *Stream) exitLaunch(k *Kernel) {
	k.m.r.Exit()
	s.r.Exit()
}

// launchChecked is Launch's driver call, its arguments checked.
func (s *Stream) launchChecked(op string, k *Kernel, grid, block Dim3, shared uint32, cfg *LaunchConfig, args []driver.KernelArg, withCtx bool) error {
	if cfg.Cooperative || cfg.Cluster != (Dim3{}) {
		ws, params := packArgs(args)
		if ws == nil {
			return hostMemErr(op)
		}
		err := launchPacked(s.p.ctx, k.f, grid, block, cfg.cluster(), shared, cfg.Cooperative, s.h, params)
		lifetime.FreeWords(ws)
		return driverErr(op, err)
	}
	if s.w != nil && !withCtx {
		// A stream of its own: the driver takes the launch's context from
		// the stream, so the context is made current only where the driver
		// refuses (hotcalls.go; bench/ctxprobe launches this way in every
		// state of the thread's current context).
		if err := driver.LaunchArgsOfCtx(0, k.f, grid, block, shared, s.h, args...); !retry(err) {
			return driverErr(op, err)
		}
	}
	return driverErr(op, driver.LaunchArgsOfCtx(s.p.ctx, k.f, grid, block, shared, s.h, args...))
}

// launchPacked launches f with its arguments' pointers in params (C
// memory: packArgs): through cuLaunchKernelEx for a cluster shape (the
// configuration and its attributes in C memory of their own for the call),
// else cuLaunchCooperativeKernel for a cooperative launch, else
// cuLaunchKernel.
func launchPacked(ctx driver.Context, f driver.Function, grid, block, cluster Dim3, shared uint32, cooperative bool, h driver.Stream, params []unsafe.Pointer) error {
	if cluster == (Dim3{}) {
		if cooperative {
			return driver.LaunchCooperativeKernelCtx(ctx, f, grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, shared, h, params)
		}
		return driver.LaunchKernelCtx(ctx, f, grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, shared, h, params, nil)
	}
	const cfgSize, attrSize = unsafe.Sizeof(driver.LaunchConfig{}), unsafe.Sizeof(driver.LaunchAttribute{})
	ws := lifetime.Words(int(cfgSize+2*attrSize+7) / 8)
	if ws == nil {
		return driver.ErrorOutOfMemory
	}
	defer lifetime.FreeWords(ws)
	base := unsafe.Pointer(&ws[0])
	attrs := unsafe.Slice((*driver.LaunchAttribute)(unsafe.Add(base, cfgSize)), 2)
	attrs[0] = driver.LaunchAttribute{Id: driver.LaunchAttributeClusterDimension}
	*attrs[0].Value.ClusterDim() = driver.LaunchAttributeValueClusterDim(cluster)
	n := uint32(1)
	if cooperative {
		attrs[1] = driver.LaunchAttribute{Id: driver.LaunchAttributeCooperative}
		*attrs[1].Value.Cooperative() = 1
		n++
	}
	cfg := (*driver.LaunchConfig)(base)
	*cfg = driver.LaunchConfig{GridDimX: grid.X, GridDimY: grid.Y, GridDimZ: grid.Z, BlockDimX: block.X, BlockDimY: block.Y, BlockDimZ: block.Z,
		SharedMemBytes: shared, HStream: h, Attrs: &attrs[0], NumAttrs: n}
	return driver.LaunchKernelExCtx(ctx, cfg, f, params, nil)
}

// checkConfig refuses a block too large for k, a SharedMem out of range
// and a grid that is not a multiple of the cluster shape.
func (k *Kernel) checkConfig(op string, grid, block, cluster Dim3, shared int) error {
	if cluster == (Dim3{}) && k.fits(block, shared) {
		return nil
	}
	if cluster != (Dim3{}) && (grid.X%cluster.X != 0 || grid.Y%cluster.Y != 0 || grid.Z%cluster.Z != 0) {
		return &Error{Op: op, Detail: fmt.Sprintf("a grid of %dx%dx%d blocks is not a whole number of clusters of %dx%dx%d", grid.X, grid.Y, grid.Z, cluster.X, cluster.Y, cluster.Z),
			Fix: "make each grid dimension a multiple of the cluster's", Err: ErrInvalidOptions}
	}
	if n := uint64(block.X) * uint64(block.Y) * uint64(block.Z); k.maxThreads > 0 && n > uint64(k.maxThreads) {
		return &Error{Op: op, Detail: fmt.Sprintf("a block of %dx%dx%d = %d threads, and kernel %s takes at most %d per block", block.X, block.Y, block.Z, n, k.name, k.maxThreads),
			Fix: "use smaller blocks and more of them (see Kernel.Attributes' MaxThreadsPerBlock)", Err: ErrInvalidOptions}
	}
	if shared < 0 || uint64(shared) > math.MaxUint32 {
		return &Error{Op: op, Detail: fmt.Sprintf("SharedMem %d is outside 0 to %d bytes", shared, uint32(math.MaxUint32)),
			Fix: "ask for at most Kernel.Attributes' MaxDynamicSharedMem bytes", Err: ErrInvalidOptions}
	}
	return nil
}

// A KernelArg is laid out as an any (driver.LaunchArgsOf relies on it too):
// this does not compile where it is not.
var _ = [1]struct{}{}[unsafe.Sizeof(driver.KernelArg{})-unsafe.Sizeof(any(nil))]

// argType is the type of the value a KernelArg holds (nil for the zero
// KernelArg).
func argType(a *driver.KernelArg) reflect.Type {
	return reflect.TypeOf(*(*any)(unsafe.Pointer(a)))
}

// typeWord is the type word of a KernelArg's value (0 for the zero
// KernelArg): two arguments of one type word have one type. A uintptr: a
// type descriptor never moves or goes, and as a pointer it would make the
// arguments' values escape (the escape analysis cannot tell a type word
// from a data word), costing every launch an allocation.
func typeWord(a *driver.KernelArg) uintptr {
	return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(a))[0])
}

// checkArgs refuses a zero argument and one holding Go pointers, and,
// where the driver told k's parameters, args of another number or sizes.
// Arguments of the types of the first ones that passed pass at once.
func (k *Kernel) checkArgs(op string, args []driver.KernelArg) error {
	if k.seen(args) {
		return nil
	}
	if err := k.checkArgTypes(op, args); err != nil {
		return err
	}
	if k.checked.Load() == nil {
		ts := make([]uintptr, len(args))
		for i := range args {
			ts[i] = typeWord(&args[i])
		}
		if k.checked.CompareAndSwap(nil, &ts) && k.hot && len(ts) == len(k.offs) {
			plan := make([]hotEntry, len(ts))
			for i, t := range ts {
				plan[i] = hotEntry{typ: t, off: k.offs[i], size: uint16(k.params[i].Size)}
			}
			k.plan.Store(&plan)
		}
	}
	return nil
}

// checkArgTypes is checkArgs's checks.
func (k *Kernel) checkArgTypes(op string, args []driver.KernelArg) error {
	if k.known && len(args) != len(k.params) {
		return &Error{Op: op, Detail: fmt.Sprintf("kernel %s takes %d parameters, and %d arguments were given", k.name, len(k.params), len(args)),
			Fix: "pass one argument per kernel parameter, in order", Err: ErrMismatch}
	}
	for i := range args {
		t := argType(&args[i])
		switch {
		case t == nil:
			return &Error{Op: op, Detail: fmt.Sprintf("argument %d of kernel %s is the zero KernelArg", i, k.name),
				Fix: "make each argument with driver.Arg, driver.ArgStruct or Buffer.Arg", Err: ErrInvalid}
		case !ctype.Plain(t):
			return &Error{Op: op, Detail: fmt.Sprintf("argument %d of kernel %s is a %s, which holds Go pointers or has no C layout", i, k.name, t),
				Fix: "pass numbers, DevicePtr (Buffer.Arg) or structs of them; Go memory cannot be a kernel argument", Err: ErrInvalidType}
		case k.known && int(t.Size()) != k.params[i].Size:
			return &Error{Op: op, Detail: fmt.Sprintf("argument %d of kernel %s is a %s of %d bytes, and its parameter takes %d bytes", i, k.name, t, t.Size(), k.params[i].Size),
				Fix: "pass each argument as its parameter's C type (int32 for a C int, float32 for a float, DevicePtr or Buffer.Arg for a pointer)", Err: ErrMismatch}
		}
	}
	return nil
}
