//go:build linux && (amd64 || arm64)

package cuda

import (
	"os"
	"syscall"
	"unsafe"
)

// hostMemSupported: page-locked host memory is mapped here (AllocHost).
const hostMemSupported = true

// mmap is the mmap system call (six arguments on 64-bit Linux), without
// syscall.Mmap's table of mappings, which would keep an entry for each
// HostBuffer for ever: their addresses stay mapped (reserveHost).
func mmap(addr uintptr, size int, prot, flags int) (uintptr, error) {
	r, _, e := syscall.Syscall6(syscall.SYS_MMAP, addr, uintptr(size), uintptr(prot), uintptr(flags), ^uintptr(0), 0)
	if e != 0 {
		return 0, e
	}
	return r, nil
}

// mapHost maps size bytes (rounded up to whole pages: its capacity) of
// zeroed memory apart from Go's heap, readable and writable.
func mapHost(size int) ([]byte, error) {
	page := os.Getpagesize()
	n := (size + page - 1) / page * page
	a, err := mmap(0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&a))), n)[:size], nil
}

// reserveHost maps mem's addresses again, unreadable and without memory
// (MAP_FIXED over them, MAP_NORESERVE: the pages and their commit charge
// go back to the system): a slice kept past its HostBuffer's Close faults,
// and no later mapping takes the addresses. Each closed HostBuffer keeps its
// range of address space.
func reserveHost(mem []byte) {
	_, _ = mmap(uintptr(unsafe.Pointer(unsafe.SliceData(mem))), cap(mem), syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_FIXED|syscall.MAP_NORESERVE)
}

// unmapHost unmaps memory that was never handed out.
func unmapHost(mem []byte) {
	_, _, _ = syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(unsafe.SliceData(mem))), uintptr(cap(mem)), 0)
}
