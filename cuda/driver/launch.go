package driver

import (
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/internal/ctype"
)

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z uint32 }

// maxArgBytes is the most argument bytes a kernel takes (4 KiB before
// CUDA 12.1; the driver refuses more than the kernel declares).
const maxArgBytes = 32764

// stackArgBytes are packed without allocating; more are packed into a
// buffer from a pool.
const stackArgBytes = 256

// stackArgs are the arguments whose offsets fit the stack; more take a
// buffer from the pool.
const stackArgs = 32

// smallArgs is the buffer of at most stackArgs arguments taking at most
// stackArgBytes, on the stack; bigArgs is the pool's, for more. Each buffer
// is 8-byte aligned, as packArgs needs.
type smallArgs struct {
	_    [0]uint64
	buf  [stackArgBytes]byte
	offs [stackArgs]uint16
}
type bigArgs struct {
	_    [0]uint64
	buf  [maxArgBytes]byte
	offs [maxArgBytes]uint16
}

var argBufs = sync.Pool{New: func() any { return new(bigArgs) }}

// LaunchArgs launches the kernel f on stream with the given arguments, in
// the kernel's parameter order, through cuLaunchKernel. It is LaunchArgsCtx
// with the thread's current context.
//
// Each argument is a value, not a pointer to one: int, int8 to int64, uint,
// uint8 to uint64, uintptr, float32, float64, bool, DevicePtr, or any other
// type without Go pointers (a named integer, an array or a struct of such
// fields, laid out as C lays out the kernel's parameter of that type). An
// int or uint is 8 bytes (a C long long): pass int32 for a C int. A
// struct's fields must lie where C puts them; where the value itself
// starts does not matter: kernelParams has one pointer per argument, and
// the driver places each at its parameter's offset (a [2]float32 passes a
// float2, though C aligns the latter to 8 bytes). The values are packed,
// each at its type's alignment, into a buffer the driver copies during the
// call (kernelParams pointing into it), so the arguments may be reused at
// once. Nothing is allocated for at most 32
// arguments taking at most 256 bytes. An argument of another type is refused before the call
// with an error naming it.
//
// LaunchArgsOf is the form whose arguments Go checks at compile time
// where it can: a Go pointer or a slice there does not compile. The raw
// form, LaunchKernel with kernelParams, stays for what neither covers.
func LaunchArgs(f Function, grid, block Dim3, sharedMem uint32, stream Stream, args ...any) error {
	return LaunchArgsCtx(0, f, grid, block, sharedMem, stream, args...)
}

// LaunchArgsCtx is LaunchArgs making ctx current on the calling thread
// inside the same cgo call, where it stays after the call (0 leaves the
// thread's context as it is).
func LaunchArgsCtx(ctx Context, f Function, grid, block Dim3, sharedMem uint32, stream Stream, args ...any) error {
	if len(args) <= stackArgs {
		var a smallArgs
		_, err := packArgs(a.buf[:], a.offs[:], args)
		if err == nil {
			return launchPacked(ctx, f, grid, block, sharedMem, stream, unsafe.Pointer(&a.buf[0]), &a.offs[0], len(args))
		}
		if err != errArgsLarge {
			return err
		}
	}
	return launchBig(ctx, f, grid, block, sharedMem, stream, args)
}

// KernelScalar is the type set of the kernel arguments Go checks at
// compile time: the numbers, bool, and the types defined on them
// (DevicePtr, a named integer). A pointer, a slice, a string, a map, a
// channel, a func or an interface is none of them, so passing one to Arg
// does not compile.
type KernelScalar interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~bool
}

// KernelArg is one kernel argument, by value, for LaunchArgsOf: Arg makes
// one from a number, ArgStruct from a struct or an array. The zero
// KernelArg is refused at the launch.
type KernelArg struct {
	v any // as LaunchArgs takes it: a KernelArg is laid out as an any
}

// Arg is the kernel argument v, of a type Go checks at compile time: a
// number, a bool, DevicePtr or another type defined on a number. Its size
// and alignment are its type's (an int is 8 bytes, a C long long: use
// int32 for a C int).
func Arg[T KernelScalar](v T) KernelArg { return KernelArg{v} }

// ArgStruct is the kernel argument v, a struct or an array whose fields
// lie where C puts those of the kernel's parameter (see LaunchArgs). Go's type sets cannot say "holds no Go pointers", so that is
// checked at the launch, as LaunchArgs checks its arguments: a type that
// holds Go pointers is refused before the call.
func ArgStruct[T any](v T) KernelArg { return KernelArg{v} }

// LaunchArgsOf is LaunchArgs with each argument's type checked at compile
// time where Go can: every argument is a KernelArg, which Arg makes from a
// KernelScalar only, so a Go pointer or a slice does not compile
// (driver.Arg(&dA): *DevicePtr does not satisfy KernelScalar; &dA itself is
// no KernelArg). Structs and arrays go through ArgStruct, checked at the
// launch. The packing is LaunchArgs's, and nothing is allocated for at most
// 32 numbers taking at most 256 bytes:
//
//	err := driver.LaunchArgsOf(fn, grid, block, 0, stream, driver.Arg(buf), driver.Arg(n))
//
// LaunchArgs stays for arguments of any type, checked at run time.
func LaunchArgsOf(f Function, grid, block Dim3, sharedMem uint32, stream Stream, args ...KernelArg) error {
	return LaunchArgsOfCtx(0, f, grid, block, sharedMem, stream, args...)
}

// LaunchArgsOfCtx is LaunchArgsOf making ctx current on the calling thread
// inside the same cgo call, where it stays after the call (0 leaves the
// thread's context as it is).
func LaunchArgsOfCtx(ctx Context, f Function, grid, block Dim3, sharedMem uint32, stream Stream, args ...KernelArg) error {
	return LaunchArgsCtx(ctx, f, grid, block, sharedMem, stream, asAnys(args)...)
}

// asAnys views args as LaunchArgs's arguments: a KernelArg is one any.
func asAnys(args []KernelArg) []any {
	return unsafe.Slice((*any)(unsafe.Pointer(unsafe.SliceData(args))), len(args))
}

// launchBig is LaunchArgsCtx with a buffer from the pool.
func launchBig(ctx Context, f Function, grid, block Dim3, sharedMem uint32, stream Stream, args []any) error {
	big := argBufs.Get().(*bigArgs)
	defer argBufs.Put(big)
	if _, err := packArgs(big.buf[:], big.offs[:], args); err != nil {
		if err == errArgsLarge {
			return fmt.Errorf("cuda: cuLaunchKernel: the arguments take more than %d bytes, the most a kernel takes: pass large data in device memory", maxArgBytes)
		}
		return err
	}
	return launchPacked(ctx, f, grid, block, sharedMem, stream, unsafe.Pointer(&big.buf[0]), &big.offs[0], len(args))
}

// errArgsLarge says that the arguments do not fit the buffer.
var errArgsLarge = fmt.Errorf("cuda: kernel arguments too large")

// eface is the layout of an interface value: its type word, and its data
// word, which for a type without pointers points at the value.
type eface struct{ typ, data unsafe.Pointer }

// typeWord is the type word of an interface holding a value of a's type.
func typeWord(a any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&a)).typ }

// The type words of the numbers packArgs stores without reflection, by
// size (a number's alignment is its size).
var (
	num8 = [...]unsafe.Pointer{typeWord(DevicePtr(0)), typeWord(uint64(0)), typeWord(int64(0)), typeWord(int(0)),
		typeWord(uint(0)), typeWord(uintptr(0)), typeWord(float64(0))}
	num4 = [...]unsafe.Pointer{typeWord(int32(0)), typeWord(uint32(0)), typeWord(float32(0))}
	num2 = [...]unsafe.Pointer{typeWord(int16(0)), typeWord(uint16(0))}
	num1 = [...]unsafe.Pointer{typeWord(int8(0)), typeWord(uint8(0)), typeWord(false)}
)

// numSize is the size of a number of one of the types in num8 .. num1, from
// its type word; 0 for any other type.
func numSize(t unsafe.Pointer) int {
	switch t {
	case num8[0], num8[1], num8[2], num8[3], num8[4], num8[5], num8[6]:
		return 8
	case num4[0], num4[1], num4[2]:
		return 4
	case num2[0], num2[1]:
		return 2
	case num1[0], num1[1], num1[2]:
		return 1
	}
	return 0
}

// packArgs packs args into buf, each at its alignment, noting each one's
// offset in offs; it returns the bytes used. buf is 8-byte aligned.
func packArgs(buf []byte, offs []uint16, args []any) (int, error) {
	off := 0
	if len(args) > len(offs) {
		return 0, errArgsLarge
	}
	for i := range args {
		// A number's bytes are copied from the value its data word
		// points at, in the host's byte order as C would store them; the
		// bytes of anything else are copied once its type is checked.
		e := (*eface)(unsafe.Pointer(&args[i]))
		size := numSize(e.typ)
		p := e.data
		if size != 0 {
			off = (off + size - 1) &^ (size - 1)
		} else {
			var align int
			var err error
			if size, align, p, err = plainValue(i, args[i]); err != nil {
				return 0, err
			}
			off = (off + align - 1) &^ (align - 1)
		}
		if off+size > len(buf) {
			return off + size, errArgsLarge
		}
		offs[i] = uint16(off)
		// Each number at its alignment in buf, which is 8-byte aligned.
		at := unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), off)
		switch size {
		case 8:
			*(*uint64)(at) = *(*uint64)(p)
		case 4:
			*(*uint32)(at) = *(*uint32)(p)
		case 2:
			*(*uint16)(at) = *(*uint16)(p)
		case 1:
			*(*uint8)(at) = *(*uint8)(p)
		default:
			copy(buf[off:off+size], unsafe.Slice((*byte)(p), size))
		}
		off += size
	}
	return off, nil
}

// plainTypes caches whether a type holds no Go pointers.
var plainTypes sync.Map // reflect.Type → bool

// plainValue returns the bytes of an argument of a type without Go
// pointers, or an error naming the argument.
func plainValue(i int, a any) (size, align int, p unsafe.Pointer, err error) {
	t := reflect.TypeOf(a)
	if t == nil {
		return 0, 0, nil, fmt.Errorf("cuda: cuLaunchKernel: kernel argument %d is nil (or the zero KernelArg): pass a value of the kernel parameter's type (made with Arg or ArgStruct for LaunchArgsOf)", i)
	}
	ok, seen := plainTypes.Load(t)
	if !seen {
		ok = ctype.Plain(t)
		plainTypes.Store(t, ok)
	}
	if !ok.(bool) || t.Size() > math.MaxInt32 {
		return 0, 0, nil, fmt.Errorf("cuda: cuLaunchKernel: kernel argument %d is a %s, which holds Go pointers or has no C layout: pass numbers, DevicePtr, or arrays and structs of them (device memory for anything else)", i, t)
	}
	// The interface's data word points at the value (a type without
	// pointers is never stored in the word itself).
	return int(t.Size()), t.Align(), (*eface)(unsafe.Pointer(&a)).data, nil
}
