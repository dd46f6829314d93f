//go:build cgo

package gputest

import (
	"runtime/metrics"
	"testing"
	"unsafe"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// tickPTX counts its threads in a global: a kernel of no parameters.
const tickPTX = `.version 6.0
.target sm_50
.address_size 64

.visible .global .align 4 .u32 cudagen_ticks;

.visible .entry cudagen_tick()
{
	.reg .b32 %r<2>;
	atom.global.add.u32 %r1, [cudagen_ticks], 1;
	ret;
}
`

// A kernel of no parameters launches as any other: where the driver told
// its parameters (none), the hot path passes it an empty parameter buffer,
// which the driver takes, so that each launch is one crossing into C (a
// refusal would show as two: the hot launch, then the counted one); every
// thread of every launch ran.
func TestLaunchNoParams(t *testing.T) {
	dev := gpu(t) // on a GPU alone: the fake driver runs only the kernels it knows
	m := must[*cuda.Module](t)(dev.LoadModule([]byte(tickPTX)))
	defer m.Close()
	k := must[*cuda.Kernel](t)(m.Kernel("cudagen_tick"))
	params, known := k.Params()
	if known != paramsKnown(t) || len(params) != 0 {
		t.Fatalf("Params of a kernel of no parameters: %v, known %v; want none, known %v", params, known, paramsKnown(t))
	}
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 32}}
	ok(t, s.Launch(k, cfg)) // the kernel's parameters, asked once
	sample := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(sample)
	c0 := sample[0].Value.Uint64()
	const n = 1000
	for range n {
		if err := s.Launch(k, cfg); err != nil {
			t.Fatal(err)
		}
	}
	metrics.Read(sample)
	per := float64(sample[0].Value.Uint64()-c0) / n
	ok(t, s.Sync())
	if per < 1 || per > 1.05 { // other goroutines' calls may add a few
		t.Errorf("%.3f crossings into C per launch of a kernel of no parameters, want 1", per)
	}
	ptr, size, err := driver.ModuleGetGlobalCtx(dev.Context(), m.Handle(), "cudagen_ticks")
	ok(t, err)
	var ticks uint32
	if size != uint64(unsafe.Sizeof(ticks)) {
		t.Fatalf("cudagen_ticks is %d bytes, want 4", size)
	}
	ok(t, driver.MemcpyDtoHCtx(dev.Context(), unsafe.Slice((*byte)(unsafe.Pointer(&ticks)), 4), ptr))
	if want := uint32((n + 1) * 2 * 32); ticks != want {
		t.Errorf("%d threads ran over %d launches of 2×32, want %d", ticks, n+1, want)
	}
	t.Logf("%.3f crossings into C per launch; %d threads ran", per, ticks)
}
