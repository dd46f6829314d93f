//go:build cgo

package nccl

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char internal[128]; } cg_uid;

// cg_depth counts the groups open on this OS thread through GroupStart:
// NCCL's own group state is per thread, and so is this count, kept in the
// same C call as NCCL's.
static __thread int cg_depth;

static int cg_group_start(uintptr_t fn) {
	if (!fn) return -1;
	int r = ((int (*)(void))fn)();
	if (r == 0) cg_depth++;
	return r;
}
static int cg_group_end(uintptr_t fn) {
	if (!fn) return -1;
	int r = ((int (*)(void))fn)();
	if (cg_depth > 0) cg_depth--; // NCCL ends the group on error too
	return r;
}

// cg_comm_enter refuses a creation inside a group (-2: NCCL would write
// the communicator at the group's end, after the call) and makes ctx
// current through set (cuCtxSetCurrent) unless ctx is 0 (-3: it failed).
static int cg_comm_enter(uintptr_t fn, uintptr_t set, uintptr_t ctx) {
	if (!fn) return -1;
	if (cg_depth) return -2;
	if (ctx && (!set || ((int (*)(void *))set)((void *)ctx) != 0)) return -3;
	return 0;
}

static int cg_init_rank(uintptr_t fn, uintptr_t set, uintptr_t ctx, void *comm, int n, const void *id, int rank, void *config, int withConfig) {
	int r = cg_comm_enter(fn, set, ctx);
	if (r) return r;
	cg_uid u;
	memcpy(&u, id, sizeof u);
	if (withConfig) return ((int (*)(void *, int, cg_uid, int, void *))fn)(comm, n, u, rank, config);
	return ((int (*)(void *, int, cg_uid, int))fn)(comm, n, u, rank);
}

static int cg_init_all(uintptr_t fn, void *comms, int n, const int *devs) {
	int r = cg_comm_enter(fn, 0, 0);
	if (r) return r;
	return ((int (*)(void *, int, const int *))fn)(comms, n, devs);
}

static int cg_split(uintptr_t fn, uintptr_t comm, int color, int key, void *newcomm, void *config) {
	int r = cg_comm_enter(fn, 0, 0);
	if (r) return r;
	return ((int (*)(void *, int, int, void *, void *))fn)((void *)comm, color, key, newcomm, config);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/internal/dynlib"
)

var hand struct {
	groupStart, groupEnd, initRank, initRankConfig, initAll, split dynlib.Proc
	setCurrent                                                     uintptr
}

// GroupStart calls ncclGroupStart on this goroutine's OS thread. NCCL keeps
// the group per thread, and goroutines move between threads: use Group,
// which keeps the goroutine on one thread from GroupStart to GroupEnd.
func GroupStart() error {
	fn, err := library.Entry(&hand.groupStart, "ncclGroupStart", pinName)
	if err != nil {
		return err
	}
	return result("ncclGroupStart", C.cg_group_start(C.uintptr_t(fn)))
}

// GroupEnd calls ncclGroupEnd on this goroutine's OS thread (see
// GroupStart: use Group).
func GroupEnd() error {
	fn, err := library.Entry(&hand.groupEnd, "ncclGroupEnd", pinName)
	if err != nil {
		return err
	}
	return result("ncclGroupEnd", C.cg_group_end(C.uintptr_t(fn)))
}

// CommInitRank calls ncclCommInitRank: it creates the communicator of rank
// among nranks ranks that share id, on the device whose context ctx is (the
// cuda package's Device.Context()); ctx 0 leaves the OS thread's context as
// it is, which NCCL then uses. It is refused inside a group (ErrInGroup):
// there NCCL creates the communicator when the group ends, after the call.
func CommInitRank(ctx driver.Context, nranks int32, id UniqueID, rank int32) (Comm, error) {
	return initRank("ncclCommInitRank", &hand.initRank, ctx, nranks, id, rank, nil)
}

// CommInitRankConfig is CommInitRank with a config (DefaultConfig's, with
// fields changed). A non-blocking config (Blocking 0) is refused
// (ErrNonBlocking): NCCL would write the communicator after the call.
func CommInitRankConfig(ctx driver.Context, nranks int32, id UniqueID, rank int32, config *Config) (Comm, error) {
	if err := checkConfig("ncclCommInitRankConfig", config); err != nil {
		return 0, err
	}
	return initRank("ncclCommInitRankConfig", &hand.initRankConfig, ctx, nranks, id, rank, config)
}

func initRank(name string, p *dynlib.Proc, ctx driver.Context, nranks int32, id UniqueID, rank int32, config *Config) (Comm, error) {
	fn, err := library.Entry(p, name, pinName)
	if err != nil {
		return 0, err
	}
	set := uintptr(0)
	if ctx != 0 {
		if set, err = setCurrent(); err != nil {
			return 0, err
		}
	}
	cell := newCells(1)
	var pin runtime.Pinner
	defer pin.Unpin()
	cfg := pinConfig(&pin, config)
	r := C.cg_init_rank(C.uintptr_t(fn), C.uintptr_t(set), C.uintptr_t(ctx), cell.ptr(), C.int(nranks), unsafe.Pointer(&id.Internal[0]), C.int(rank), cfg, C.int(boolInt(config != nil)))
	return cell.take(name, r, ctx)
}

// pinConfig is config as C takes it (nil for none), pinned by pin for the
// call: C reads the pointers it holds.
func pinConfig(pin *runtime.Pinner, config *Config) unsafe.Pointer {
	if config == nil {
		return nil
	}
	pin.Pin(config)
	return unsafe.Pointer(config)
}

// CommInitAll calls ncclCommInitAll: one communicator per device of
// devlist (nil: devices 0 to len(comm)-1), written into comm. It is
// refused inside a group (ErrInGroup).
func CommInitAll(comm []Comm, devlist []int32) error {
	const name = "ncclCommInitAll"
	if len(comm) == 0 || devlist != nil && len(devlist) != len(comm) {
		return fmt.Errorf("cuda: %s: %d communicators for %d devices: pass one communicator slot per device (devlist nil: devices 0 to len(comm)-1): %w", name, len(comm), len(devlist), ErrInvalidSize)
	}
	fn, err := library.Entry(&hand.initAll, name, pinName)
	if err != nil {
		return err
	}
	cells := newCells(len(comm))
	var devs *C.int
	if devlist != nil {
		devs = (*C.int)(unsafe.Pointer(&devlist[0]))
	}
	r := C.cg_init_all(C.uintptr_t(fn), cells.ptr(), C.int(len(comm)), devs)
	if err := cells.check(name, r, 0); err != nil {
		return err
	}
	for i := range comm {
		comm[i] = Comm(cells.at(i))
	}
	cells.free()
	return nil
}

// CommSplit calls ncclCommSplit: the communicator of the ranks of comm
// that pass the same color, ordered by key (config nil: the parent's). It
// is refused inside a group (ErrInGroup) and with a non-blocking config
// (ErrNonBlocking).
func CommSplit(comm Comm, color, key int32, config *Config) (Comm, error) {
	const name = "ncclCommSplit"
	if err := checkConfig(name, config); err != nil {
		return 0, err
	}
	fn, err := library.Entry(&hand.split, name, pinName)
	if err != nil {
		return 0, err
	}
	cell := newCells(1)
	var pin runtime.Pinner
	defer pin.Unpin()
	cfg := pinConfig(&pin, config)
	r := C.cg_split(C.uintptr_t(fn), C.uintptr_t(comm), C.int(color), C.int(key), cell.ptr(), cfg)
	return cell.take(name, r, 0)
}

// cells are communicator slots in C memory, which NCCL may write after a
// call that went asynchronous (then they are never freed).
type cells struct {
	p unsafe.Pointer
	n int
}

func newCells(n int) cells {
	return cells{C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0)))), n}
}

func (c cells) ptr() unsafe.Pointer { return c.p }
func (c cells) at(i int) uintptr    { return unsafe.Slice((*uintptr)(c.p), c.n)[i] }
func (c cells) free()               { C.free(c.p) }

// check turns a creation's result into an error, freeing the cells unless
// NCCL may still write them.
func (c cells) check(name string, r C.int, ctx driver.Context) error {
	if c.p == nil {
		return fmt.Errorf("cuda: %s: no host memory for the communicator's slot (calloc failed); free host memory: %w", name, driver.ErrorOutOfMemory)
	}
	switch {
	case r == -2:
		c.free()
		return fmt.Errorf("cuda: %s: called inside a group, where NCCL creates the communicator when the group ends, after this call: create communicators outside Group: %w", name, ErrInGroup)
	case r == -3:
		c.free()
		return fmt.Errorf("cuda: %s: making the context %#x current failed: pass the context of an open device (Device.Context()): %w", name, uintptr(ctx), driver.ErrorInvalidContext)
	case r == C.int(InProgress) || r == 0 && c.at(0) == 0:
		// Non-blocking (NCCL_COMM_BLOCKING=0): NCCL writes the slot later;
		// it stays allocated.
		return fmt.Errorf("cuda: %s: NCCL created the communicator asynchronously (non-blocking mode, as NCCL_COMM_BLOCKING=0 makes it), which this package does not support: unset NCCL_COMM_BLOCKING: %w", name, ErrNonBlocking)
	case r != 0:
		c.free()
		return result(name, r)
	}
	return nil
}

// take is the one communicator a successful creation wrote.
func (c cells) take(name string, r C.int, ctx driver.Context) (Comm, error) {
	if err := c.check(name, r, ctx); err != nil {
		return 0, err
	}
	comm := Comm(c.at(0))
	c.free()
	return comm, nil
}

// result is the error of a hand-written call's result.
func result(name string, r C.int) error {
	switch r {
	case 0:
		return nil
	case -1:
		return library.Missing(&dynlib.Proc{}, pinName)
	}
	return &Error{Func: name, Result: Result(r)}
}

// setCurrent is the driver's cuCtxSetCurrent.
func setCurrent() (uintptr, error) {
	if hand.setCurrent == 0 {
		a, err := driver.Lookup("cuCtxSetCurrent", 4000)
		if err != nil {
			return 0, fmt.Errorf("cuda: nccl: finding cuCtxSetCurrent to make the device's context current: %w", err)
		}
		hand.setCurrent = a
	}
	return hand.setCurrent, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkConfig refuses a config NCCL would make non-blocking, or one not
// made by DefaultConfig.
func checkConfig(name string, c *Config) error {
	switch {
	case c == nil:
		return nil
	case c.Magic != 0xcafebeef || c.Size != uint64(unsafe.Sizeof(Config{})):
		return fmt.Errorf("cuda: %s: the config's size or magic is not NCCL_CONFIG_INITIALIZER's: start from DefaultConfig(): %w", name, ErrInvalidSize)
	case c.Blocking == 0:
		return fmt.Errorf("cuda: %s: the config is non-blocking (Blocking 0), and NCCL would write the communicator after the call returns: leave Blocking Undefined or 1: %w", name, ErrNonBlocking)
	}
	return nil
}

// RedOpCreatePreMulSumHost creates the operator that multiplies each
// rank's values by scalar before summing them (ncclRedOpCreatePreMulSum),
// the scalar given by value: it is copied to C memory for the call, which
// NCCL reads before returning (ncclScalarHostImmediate). T's size must be
// datatype's, else the error matches ErrInvalidSize. For a scalar in device
// memory, read by each collective, call RedOpCreatePreMulSum with its
// address and ScalarDevice. Destroy the operator with RedOpDestroy.
func RedOpCreatePreMulSumHost[T Scalar](scalar T, datatype DataType, comm Comm) (RedOp, error) {
	if err := checkScalar[T](datatype); err != nil {
		return 0, err
	}
	p := C.malloc(C.size_t(unsafe.Sizeof(scalar)))
	if p == nil {
		return 0, fmt.Errorf("cuda: ncclRedOpCreatePreMulSum: no host memory for the scalar: %w", SystemError)
	}
	defer C.free(p)
	*(*T)(p) = scalar
	return RedOpCreatePreMulSum(DevicePtr(uintptr(p)), datatype, ScalarHostImmediate, comm)
}
