//go:build !linux

package cuda

import "fmt"

func mapHost(size int) ([]byte, error) {
	return nil, fmt.Errorf("page-locked host memory is mapped with mmap, here on Linux only: %w", ErrNotSupported)
}

func unmapHost(mem []byte) {}
