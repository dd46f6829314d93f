//go:build 386 || arm || mips || mipsle

package dynlib

// CUDA runs on 64-bit hosts only, and the generated bindings mirror the
// 64-bit headers' layouts (pointers in 8-byte words, unions overlaying
// them): built for a 32-bit GOARCH, their structs would hide pointers from
// the garbage collector. This reference to an undeclared name stops such a
// build, the name saying why.
var _ = cudagen_needs_a_64_bit_GOARCH_as_CUDA_has_no_32_bit_hosts
