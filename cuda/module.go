package cuda

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// The kinds of handle this package adds to internal/lifetime's: a loaded
// module, an allocation of device memory (from cuMemAlloc, or from the
// device's pool: AllocAsync), a graph and an executable graph.
// Like a stream's, their handles
// are listed in their context's open objects (the last Device's Close
// closes them), flushed at once once retired, never kept for reuse, and
// destroyed by ctxState.Destroy (lifetime.go).
const (
	kindModule = lifetime.KindAdopted + 1 + iota
	kindMemory
	kindGraph
	kindGraphExec
	kindPoolMemory
	kindIPCMemory  // another process's memory opened here (OpenIPCBuffer): unmapped, not freed
	kindSharedPool // a memory pool other processes may import (mempool.go): destroyed without waiting
	kindHostMemory // a HostBuffer's page-locked host memory (hostbuffer.go): unregistered, its pages given back
)

// Module is a module loaded into a device's context: PTX, a cubin or a
// fatbin (cuModuleLoadData), whose kernels Kernel finds. It is safe for
// concurrent use, Close included. Close unloads it; so does the Close of the
// last open Device of its context, as for streams and events. Once it is
// closed, its methods and its kernels' return errors matching ErrClosed.
// The zero value and a nil *Module are not usable: their methods return
// errors matching ErrInvalid.
type Module struct {
	h driver.Module
	object
}

// LoadModule loads a module image into the device's context: PTX text (a
// NUL byte ending it is appended to a copy where the text lacks one), an
// ELF cubin or a fatbin, as nvcc, NVRTC or a hand-written file makes them.
// The image is copied by the driver during the call and may be reused at
// once. An empty image, or a cubin or fatbin cut short, is refused before
// the driver is called with an error matching driver.ErrorInvalidImage (as
// the driver would answer, were it not to read past the end); an image
// the driver cannot load (PTX for a newer driver, a cubin for another GPU)
// returns the driver's error (driver.ErrorInvalidPTX,
// driver.ErrorNoBinaryForGPU ...). The driver may compile PTX during the
// call; the calling thread's asynchronous signals (Go's preemption signal
// among them: that compiler crashed in Go processes with asynchronous
// preemption on) wait until the call returns. Close unloads the module.
func (d *Device) LoadModule(image []byte) (*Module, error) {
	const op = "load module"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	if len(image) != 0 && ptxText(image) && bytes.IndexByte(image, 0) < 0 {
		image = append(image[:len(image):len(image)], 0)
	}
	d.p.life.Throttle()
	h, err := driver.ModuleLoadDataCtx(d.p.ctx, image)
	if err != nil {
		var r driver.Result
		if !errors.As(err, &r) && !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNotSupported) {
			// The driver package's check of the image, before the call.
			return nil, &Error{Op: op, Detail: strings.TrimPrefix(err.Error(), "cuda: "),
				Fix: "pass a whole module: PTX text, an ELF cubin or a fatbin, as nvcc or NVRTC writes it", Err: driver.ErrorInvalidImage}
		}
		return nil, driverErr(op, err)
	}
	r, err := d.register(op, "device", uintptr(h), kindModule, func() { _ = driver.ModuleUnloadCtx(d.p.ctx, h) })
	if err != nil {
		return nil, err
	}
	return wrap(&Module{h: h}, d, r, false), nil
}

// LoadModuleFile reads a module file (PTX, cubin or fatbin) and loads it as
// LoadModule does. An error reading the file matches the os package's (such
// as fs.ErrNotExist).
func (d *Device) LoadModuleFile(path string) (*Module, error) {
	const op = "load module file"
	if d == nil || d.p == nil {
		return nil, invalidErr(op, "device")
	}
	image, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Op: op, Detail: "cannot read the file: " + err.Error(),
			Fix: "pass the path of a .ptx, .cubin or .fatbin file that this process can read", Err: err}
	}
	return d.LoadModule(image)
}

// AdoptModule wraps a module loaded elsewhere into d's context (a CUmodule
// from cuModuleLoad in C code, or a module of the driver package), so that
// its kernels launch through this package. The wrapper does not own the
// module: Close releases the wrapper and never unloads the module, which
// its creator unloads after closing the wrapper. Closing d closes the
// wrapper. A nil handle is an error matching ErrInvalid and
// ErrInvalidHandle.
func (d *Device) AdoptModule(h driver.Module) (*Module, error) {
	return adopt(d, "adopt module", "module", "a module from cuModuleLoad or cuModuleLoadData", uintptr(h), func(r *handle) *Module {
		return wrap(&Module{h: h}, d, r, true)
	})
}

// fatbinMagic begins a fatbin (fatbinary_section.h).
const fatbinMagic = 0xBA55ED50

// ptxText reports whether image is PTX text: neither a cubin nor a fatbin.
func ptxText(image []byte) bool {
	return !bytes.HasPrefix(image, []byte(elf.ELFMAG)) && !(len(image) >= 4 && binary.LittleEndian.Uint32(image) == fatbinMagic)
}

func (m *Module) base() *object { return &m.object }

// operand is m as an object of a call, named which in errors.
func (m *Module) operand(which string) operand { return operand{r: objectOf(m).r, name: which} }

// Handle is the driver handle (0 for a nil Module). It stays valid until
// the module is closed.
func (m *Module) Handle() driver.Module {
	return nilOr(m, func(m *Module) driver.Module { return m.h })
}

// Device is the Device the module was loaded or adopted through (nil for a
// nil Module).
func (m *Module) Device() *Device { return objectOf(m).dev }

// String describes the module.
func (m *Module) String() string { return objectOf(m).describe("module", uintptr(m.Handle())) }

// Close unloads the module (an adopted one's wrapper is released, and the
// module left loaded). It never blocks, never waits for another goroutine
// and calls the driver for nothing, and is idempotent: calls in flight on
// the module and its kernels (a Launch) finish normally, and the package's
// flusher goroutine unloads it once none holds it. Work already queued
// that runs its kernels must complete first: Close it after synchronising
// that work. It returns nil; a nil Module returns an error matching
// ErrInvalid.
func (m *Module) Close() error { return objectOf(m).close("unload module", "module") }

// Kernel is a kernel (a __global__ function) of a module, found by name,
// to launch with Stream.Launch. It holds no driver object of its own: it is
// usable while its module is open, and once the module is closed its
// methods and launches return errors matching ErrClosed.
type Kernel struct {
	m          *Module
	f          driver.Function
	maxThreads int // the most threads per block; 0 unknown
	// checked are the type words of the first arguments that passed
	// checkArgs: launches with arguments of the same types skip the
	// checks (set once, so that no launch allocates).
	checked atomic.Pointer[[]uintptr]
	// What a hazard launch reads (hotKernel): the module's context and
	// state word, and, where hot, each parameter's offset and the bytes
	// of the parameter buffer (the end of the last parameter); plan, once
	// the checked types are known, each argument's type word, offset and
	// size in one array (Stream.Launch's one pass over its arguments).
	p        *ctxState
	mw       uintptr
	offs     []uint16
	argBytes int
	hot      bool
	plan     atomic.Pointer[[]hotEntry]
	// The rest.
	params []KernelParam // nil unless known
	known  bool          // the driver told the parameters
	name   string
}

// KernelParam is one parameter of a kernel, as the driver reports it
// (cuFuncGetParamInfo): its offset in the parameter buffer and its size, in
// bytes.
type KernelParam struct{ Offset, Size int }

// Kernel finds the kernel called name in the module (cuModuleGetFunction):
// the name as the module spells it, which for a C++ kernel not declared
// extern "C" is the mangled name. A name the module lacks is an error
// matching driver.ErrorNotFound. Where the driver tells them (drivers from
// 12.4 in builds for 12.4 and later), the kernel's parameters are asked
// once here, and Stream.Launch checks its arguments against them.
func (m *Module) Kernel(name string) (*Kernel, error) {
	op := "get kernel"
	if err := m.operand("module").enter(op); err != nil {
		return nil, err
	}
	defer m.r.Exit()
	f, err := driver.ModuleGetFunctionCtx(m.p.ctx, m.h, name)
	if err != nil {
		if e, ok := driverErr(op, err).(*Error); ok && err == driver.ErrorNotFound {
			e.Detail = fmt.Sprintf("the module has no kernel named %q", name)
			e.Fix = "check the name: a C++ kernel's is mangled unless it is declared extern \"C\""
			return nil, e
		}
		return nil, driverErr(op, err)
	}
	k := &Kernel{m: m, f: f, name: name}
	k.params, k.known = kernelParams(m.p.ctx, f)
	if n, err := driver.FuncGetAttributeCtx(m.p.ctx, driver.FuncAttributeMaxThreadsPerBlock, f); err == nil && n > 0 {
		k.maxThreads = int(n)
	}
	k.hotKernel()
	return k, nil
}

// Name is the name the kernel was found by ("" for a nil Kernel).
func (k *Kernel) Name() string { return nilOr(k, func(k *Kernel) string { return k.name }) }

// Handle is the driver handle (0 for a nil Kernel). It stays valid until
// its module is closed.
func (k *Kernel) Handle() driver.Function {
	return nilOr(k, func(k *Kernel) driver.Function { return k.f })
}

// Module is the kernel's module (nil for a nil Kernel).
func (k *Kernel) Module() *Module { return nilOr(k, func(k *Kernel) *Module { return k.m }) }

// String describes the kernel.
func (k *Kernel) String() string {
	if k == nil || k.m == nil {
		return "cuda kernel <invalid>"
	}
	return fmt.Sprintf("kernel %s of %v", k.name, k.m)
}

// Params returns the kernel's parameters, in order, and true where the
// driver told them (cuFuncGetParamInfo: drivers from 12.4, in builds for
// 12.4 and later); nil and false where it could not. The slice is the
// caller's.
func (k *Kernel) Params() ([]KernelParam, bool) {
	if k == nil || !k.known {
		return nil, false
	}
	return append([]KernelParam{}, k.params...), true
}

// KernelAttributes are what the driver reports of a kernel
// (cuFuncGetAttribute).
type KernelAttributes struct {
	MaxThreadsPerBlock  int // the most threads a block of a launch may have (less than the device's where registers or .maxntid limit it)
	Registers           int // registers per thread
	SharedMem           int // static shared memory per block, in bytes
	ConstMem            int // constant memory, in bytes
	LocalMem            int // local memory per thread, in bytes
	MaxDynamicSharedMem int // the most dynamic shared memory a launch may ask for (LaunchConfig.SharedMem), in bytes
	PTXVersion          int // the virtual architecture its PTX targeted, major*10+minor (50 for .target sm_50)
	BinaryVersion       int // the architecture of its binary, major*10+minor (90 for sm_90)
}

// Attributes asks the driver for the kernel's attributes.
func (k *Kernel) Attributes() (KernelAttributes, error) {
	const op = "kernel attributes"
	var a KernelAttributes
	if k == nil || k.m == nil {
		return a, invalidErr(op, "kernel")
	}
	if err := k.m.operand("kernel's module").enter(op); err != nil {
		return a, err
	}
	defer k.m.r.Exit()
	for _, at := range [...]struct {
		attr driver.FunctionAttribute
		v    *int
	}{
		{driver.FuncAttributeMaxThreadsPerBlock, &a.MaxThreadsPerBlock},
		{driver.FuncAttributeNumRegs, &a.Registers},
		{driver.FuncAttributeSharedSizeBytes, &a.SharedMem},
		{driver.FuncAttributeConstSizeBytes, &a.ConstMem},
		{driver.FuncAttributeLocalSizeBytes, &a.LocalMem},
		{driver.FuncAttributeMaxDynamicSharedSizeBytes, &a.MaxDynamicSharedMem},
		{driver.FuncAttributePTXVersion, &a.PTXVersion},
		{driver.FuncAttributeBinaryVersion, &a.BinaryVersion},
	} {
		v, err := driver.FuncGetAttributeCtx(k.m.p.ctx, at.attr, k.f)
		if err != nil {
			return KernelAttributes{}, driverErr(fmt.Sprintf("%s: %v", op, at.attr), err)
		}
		*at.v = int(v)
	}
	return a, nil
}
