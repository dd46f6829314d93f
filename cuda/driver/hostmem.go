package driver

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"unsafe"
)

// HostPtr is the address of page-locked host memory: memory the driver
// allocated (MemAllocHost, MemHostAlloc) or registered (MemHostRegister).
// It is C memory, which the garbage collector neither moves nor frees, so
// the driver may use it after a call returns: the asynchronous copies
// (MemcpyHtoDAsync, ...) take a HostPtr, not a []byte. Go memory must not
// be made a HostPtr: the collector may free it while a stream still reads
// or writes it. Memory mapped with syscall.Mmap, or from C.malloc, may be
// registered: driver.HostPtr(unsafe.Pointer(&m[0])).
type HostPtr uintptr

// Bytes is the n bytes at p, as a slice over the C memory (no copy). It
// is valid until the memory is freed or unregistered.
func (p HostPtr) Bytes(n int) []byte {
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// Add is the address off bytes after p.
func (p HostPtr) Add(off int) HostPtr { return p + HostPtr(off) }

// Plain is the element types whose slices AsBytes views as bytes: numbers,
// which hold no pointer.
type Plain interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// AsBytes views the memory of s as bytes, without a copy, for the calls
// that take a host buffer as a []byte: MemcpyHtoD(dst, AsBytes(xs)).
func AsBytes[T Plain](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// fatbinMagic begins a fatbin: the magic (4 bytes), a version (2), the
// header's size (2) and the size of what follows it (8), little-endian.
const fatbinMagic = 0xBA55ED50

// imageError says why the driver would read past image, a module image of
// sym's parameter name, or nil. The driver takes its size from the image
// itself: an ELF cubin runs to the end of its sections and section table,
// a fatbin to the end its header states, PTX text to its NUL byte.
func imageError(sym, name string, image []byte) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("cuda: %s: %s (%d bytes) %s", sym, name, len(image), fmt.Sprintf(format, a...))
	}
	switch {
	case len(image) == 0:
		return bad("is empty; pass a module image: PTX text ending in a NUL byte, an ELF cubin or a fatbin")
	case bytes.HasPrefix(image, []byte(elf.ELFMAG)):
		f, err := elf.NewFile(bytes.NewReader(image))
		if err != nil {
			return bad("begins as an ELF cubin but does not hold one (%v); pass the whole file", err)
		}
		end := uint64(len(image))
		for _, s := range f.Sections {
			if s.Type != elf.SHT_NOBITS && s.Offset+s.FileSize > end {
				return bad("is an ELF cubin cut short: section %q runs to byte %d; pass the whole file", s.Name, s.Offset+s.FileSize)
			}
		}
		for _, p := range f.Progs {
			if p.Off+p.Filesz > end {
				return bad("is an ELF cubin cut short: a segment runs to byte %d; pass the whole file", p.Off+p.Filesz)
			}
		}
	case len(image) >= 4 && binary.LittleEndian.Uint32(image) == fatbinMagic:
		if len(image) < 16 {
			return bad("begins as a fatbin but is shorter than its 16-byte header; pass the whole file")
		}
		size := uint64(binary.LittleEndian.Uint16(image[6:])) + binary.LittleEndian.Uint64(image[8:])
		if size > uint64(len(image)) {
			return bad("is a fatbin cut short: its header says %d bytes; pass the whole file", size)
		}
	default:
		if bytes.IndexByte(image, 0) < 0 {
			return bad("is PTX text without the NUL byte that ends it; append one: append(ptx, 0)")
		}
	}
	return nil
}
