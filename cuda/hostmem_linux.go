package cuda

import (
	"os"
	"syscall"
)

// mapHost maps size bytes (rounded up to whole pages) of zeroed memory
// apart from Go's heap, readable and writable.
func mapHost(size int) ([]byte, error) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, (size+page-1)/page*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	return mem[:size], nil
}

// unmapHost takes mem's pages away and leaves its addresses reserved and
// unreadable: a slice kept past its HostBuffer's Close faults, and no later
// mapping reuses the addresses.
func unmapHost(mem []byte) {
	mem = mem[:cap(mem)]
	_ = syscall.Mprotect(mem, syscall.PROT_NONE)
	_ = syscall.Madvise(mem, syscall.MADV_DONTNEED)
}
