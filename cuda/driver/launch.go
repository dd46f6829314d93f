package driver

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"
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

// bigArgs is the buffer of arguments that need more than stackArgBytes
// or stackArgs.
type bigArgs struct {
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
// int or uint is 8 bytes (a C long long): pass int32 for a C int. A Go
// struct is aligned as Go aligns it: a CUDA vector type aligned beyond its
// fields (float2 and float4 are aligned to 8 and 16 bytes) needs explicit
// padding before it, or its fields passed one by one. The
// values are packed, each at its type's alignment, into a buffer the
// driver copies during the call (kernelParams pointing into it), so the
// arguments may be reused at once. Nothing is allocated for at most 32
// arguments taking at most 256 bytes. An argument of another type is refused before the call
// with an error naming it.
//
// The raw form, LaunchKernel with kernelParams, stays for what this one
// does not cover.
func LaunchArgs(f Function, grid, block Dim3, sharedMem uint32, stream Stream, args ...any) error {
	return LaunchArgsCtx(0, f, grid, block, sharedMem, stream, args...)
}

// LaunchArgsCtx is LaunchArgs making ctx current on the calling thread
// inside the same cgo call (0 leaves the thread's context as it is).
func LaunchArgsCtx(ctx Context, f Function, grid, block Dim3, sharedMem uint32, stream Stream, args ...any) error {
	var small [stackArgBytes]byte
	var offs [stackArgs]uint16
	if len(args) <= stackArgs {
		_, err := packArgs(small[:], offs[:], args)
		if err == nil {
			return launchPacked(ctx, f, grid, block, sharedMem, stream, unsafe.Pointer(&small[0]), &offs[0], len(args))
		}
		if err != errArgsLarge {
			return err
		}
	}
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

// packArgs packs args into buf, each at its alignment, noting each one's
// offset in offs; it returns the bytes used.
func packArgs(buf []byte, offs []uint16, args []any) (int, error) {
	off := 0
	if len(args) > len(offs) {
		return 0, errArgsLarge
	}
	for i, a := range args {
		// A number is stored as its bits; anything else is copied.
		var bits uint64
		var size int
		var p unsafe.Pointer
		switch v := a.(type) {
		case DevicePtr:
			bits, size = uint64(v), 8
		case uint64:
			bits, size = v, 8
		case int32:
			bits, size = uint64(uint32(v)), 4
		case uint32:
			bits, size = uint64(v), 4
		case float32:
			bits, size = uint64(math.Float32bits(v)), 4
		case int64:
			bits, size = uint64(v), 8
		case float64:
			bits, size = math.Float64bits(v), 8
		case int:
			bits, size = uint64(v), 8
		case uint:
			bits, size = uint64(v), 8
		case uintptr:
			bits, size = uint64(v), 8
		case int16:
			bits, size = uint64(uint16(v)), 2
		case uint16:
			bits, size = uint64(v), 2
		case int8:
			bits, size = uint64(uint8(v)), 1
		case uint8:
			bits, size = uint64(v), 1
		case bool:
			if v {
				bits = 1
			}
			size = 1
		default:
			var align int
			var err error
			if size, align, p, err = plainValue(i, a); err != nil {
				return 0, err
			}
			off = (off + align - 1) &^ (align - 1)
		}
		if p == nil {
			off = (off + size - 1) &^ (size - 1) // a number's alignment is its size
		}
		if off+size > len(buf) {
			return off + size, errArgsLarge
		}
		offs[i] = uint16(off)
		if p != nil {
			copy(buf[off:off+size], unsafe.Slice((*byte)(p), size))
		} else { // little-endian, as the GPU and its host (x86-64) are
			switch size {
			case 8:
				binary.LittleEndian.PutUint64(buf[off:], bits)
			case 4:
				binary.LittleEndian.PutUint32(buf[off:], uint32(bits))
			case 2:
				binary.LittleEndian.PutUint16(buf[off:], uint16(bits))
			default:
				buf[off] = byte(bits)
			}
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
		return 0, 0, nil, fmt.Errorf("cuda: cuLaunchKernel: kernel argument %d is nil: pass a value of the kernel parameter's type", i)
	}
	ok, seen := plainTypes.Load(t)
	if !seen {
		ok = plain(t)
		plainTypes.Store(t, ok)
	}
	if !ok.(bool) || t.Size() > math.MaxInt32 {
		return 0, 0, nil, fmt.Errorf("cuda: cuLaunchKernel: kernel argument %d is a %s, which holds Go pointers or has no C layout: pass numbers, DevicePtr, or arrays and structs of them (device memory for anything else)", i, t)
	}
	// The interface's data word points at the value (a type without
	// pointers is never stored in the word itself).
	type eface struct{ typ, data unsafe.Pointer }
	return int(t.Size()), t.Align(), (*eface)(unsafe.Pointer(&a)).data, nil
}

// plain reports whether values of t hold no Go pointers and have a C
// layout.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
		return t.Size() > 0
	}
	return false
}
