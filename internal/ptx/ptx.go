// Package ptx holds the module's own kernels, as PTX text ending in its
// NUL byte: what cuda's Stream.Spin launches, and the tests with it.
package ptx

// Spin is a kernel, SpinEntry, whose every thread busy-waits on the GPU's
// global timer until the nanoseconds given as its one 64-bit parameter
// have passed. Launched as one thread it is work of known duration
// (Stream.Spin); over a grid it keeps every SM busy for a known time.
const Spin = `.version 6.0
.target sm_50
.address_size 64

.visible .entry cudagen_spin(.param .u64 cudagen_spin_ns)
{
	.reg .pred %p;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [cudagen_spin_ns];
	mov.u64 %rd2, %globaltimer;
$L_loop:
	mov.u64 %rd3, %globaltimer;
	sub.u64 %rd4, %rd3, %rd2;
	setp.lt.u64 %p, %rd4, %rd1;
	@%p bra $L_loop;
	ret;
}
` + "\x00"

// SpinEntry is Spin's entry point.
const SpinEntry = "cudagen_spin"
