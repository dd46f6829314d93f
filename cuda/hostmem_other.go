//go:build !(linux && (amd64 || arm64))

package cuda

// hostMemSupported: page-locked host memory (AllocHost) is mapped on
// 64-bit Linux only, where the CUDA driver runs.
const hostMemSupported = false

func mapHost(size int) ([]byte, error) { return nil, ErrNotSupported }

func reserveHost(mem []byte) {}

func unmapHost(mem []byte) {}
