//go:build cgo

package gputest

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// vaddPTX computes c[i] = s*a[i] + b[i] for i < n: three pointers, a
// 32-bit int and a float, so the typed launch's packing (the float at
// offset 28) is checked by the result.
const vaddPTX = `.version 6.0
.target sm_50
.address_size 64

.visible .entry cudagen_vadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 pn, .param .f32 ps)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<5>;
	.reg .b64 %rd<11>;
	ld.param.u64 %rd1, [pa];
	ld.param.u64 %rd2, [pb];
	ld.param.u64 %rd3, [pc];
	ld.param.u32 %r1, [pn];
	ld.param.f32 %f1, [ps];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd4, %rd1;
	cvta.to.global.u64 %rd5, %rd2;
	cvta.to.global.u64 %rd6, %rd3;
	mul.wide.s32 %rd7, %r5, 4;
	add.s64 %rd8, %rd4, %rd7;
	add.s64 %rd9, %rd5, %rd7;
	add.s64 %rd10, %rd6, %rd7;
	ld.global.f32 %f2, [%rd8];
	ld.global.f32 %f3, [%rd9];
	fma.rn.f32 %f4, %f1, %f2, %f3;
	st.global.f32 [%rd10], %f4;
DONE:
	ret;
}
` + "\x00"

// emptyPTX has two empty kernels, of 4 and of 16 64-bit parameters: the
// launch comparison's.
func emptyPTX() string {
	var b strings.Builder
	b.WriteString(".version 6.0\n.target sm_50\n.address_size 64\n\n")
	for _, n := range []int{4, 16} {
		var ps []string
		for i := 0; i < n; i++ {
			ps = append(ps, fmt.Sprintf(".param .u64 e%d_%d", n, i))
		}
		fmt.Fprintf(&b, ".visible .entry cudagen_empty%d(%s)\n{\n\tret;\n}\n\n", n, strings.Join(ps, ", "))
	}
	return b.String() + "\x00"
}

func loadPTX(t testing.TB, ctx driver.Context, ptx string, names ...string) (driver.Module, []driver.Function) {
	t.Helper()
	img := []byte(ptx)
	mod := must[driver.Module](t)(driver.ModuleLoadDataCtx(ctx, img))
	var fns []driver.Function
	for _, n := range names {
		fns = append(fns, must[driver.Function](t)(driver.ModuleGetFunctionCtx(ctx, mod, n)))
	}
	return mod, fns
}

// A vector-add launched with the typed form, its arguments Go values,
// and with the raw form, its kernelParams pointing at Go variables: both
// compute the right result, and neither makes cgo panic.
func TestLaunchArgsVectorAdd(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	mod, fns := loadPTX(t, ctx, vaddPTX, "cudagen_vadd")
	defer driver.ModuleUnloadCtx(ctx, mod)
	const n = 1000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i+1)
	}
	size := uint64(4 * n)
	da := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, size))
	defer driver.MemFreeCtx(ctx, da)
	db := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, size))
	defer driver.MemFreeCtx(ctx, db)
	dc := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, size))
	defer driver.MemFreeCtx(ctx, dc)
	ok(t, driver.MemcpyHtoDCtx(ctx, da, driver.AsBytes(a)))
	ok(t, driver.MemcpyHtoDCtx(ctx, db, driver.AsBytes(b)))
	s := must[driver.Stream](t)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)

	check := func(name string, scale float32) {
		t.Helper()
		ok(t, driver.StreamSynchronizeCtx(ctx, s))
		c := make([]float32, n)
		ok(t, driver.MemcpyDtoHCtx(ctx, driver.AsBytes(c), dc))
		for i := range c {
			if want := scale*a[i] + b[i]; c[i] != want {
				t.Fatalf("%s: c[%d] = %v, want %v", name, i, c[i], want)
			}
		}
	}
	count, scale := int32(n), float32(3)
	ok(t, driver.LaunchArgsCtx(ctx, fns[0], driver.Dim3{X: (n + 255) / 256, Y: 1, Z: 1}, driver.Dim3{X: 256, Y: 1, Z: 1}, 0, s, da, db, dc, count, scale))
	check("LaunchArgs", 3)

	scale = -0.5
	params := []unsafe.Pointer{unsafe.Pointer(&da), unsafe.Pointer(&db), unsafe.Pointer(&dc), unsafe.Pointer(&count), unsafe.Pointer(&scale)}
	ok(t, driver.LaunchKernelCtx(ctx, fns[0], (n+255)/256, 1, 1, 256, 1, 1, 0, s, params, nil))
	check("LaunchKernel with Go kernelParams", -0.5)

	// The typed form allocates nothing per launch.
	allocs := testing.AllocsPerRun(200, func() {
		_ = driver.LaunchArgsCtx(ctx, fns[0], driver.Dim3{X: (n + 255) / 256, Y: 1, Z: 1}, driver.Dim3{X: 256, Y: 1, Z: 1}, 0, s, da, db, dc, count, scale)
	})
	ok(t, driver.StreamSynchronizeCtx(ctx, s))
	if allocs != 0 {
		t.Errorf("LaunchArgs allocates %v times per launch", allocs)
	}
}

// BenchmarkLaunchSideBySide compares, in one process over interleaved
// blocks, a launch of an empty kernel of 4 and of 16 64-bit arguments:
// from C through the same entry point with kernelParams (the floor), the
// typed LaunchArgs, and the raw LaunchKernel. It reports the medians per
// launch and the typed form's excess over C. Launches are timed without
// the stream synchronization that follows each block.
func BenchmarkLaunchSideBySide(b *testing.B) {
	ctx := gpu(b).Context()
	mod, fns := loadPTX(b, ctx, emptyPTX(), "cudagen_empty4", "cudagen_empty16")
	defer driver.ModuleUnloadCtx(ctx, mod)
	s := must[driver.Stream](b)(driver.StreamCreateCtx(ctx, driver.StreamNonBlocking))
	defer driver.StreamDestroyCtx(ctx, s)
	entry := must[uintptr](b)(driver.Lookup("cuLaunchKernel", 4000))
	runtime.LockOSThread() // the C loop and the Go loop on one thread, the context current
	defer runtime.UnlockOSThread()
	ok(b, driver.CtxSetCurrent(ctx))
	const block, rounds = 400, 25
	one := driver.Dim3{X: 1, Y: 1, Z: 1}
	var v [16]uint64
	var vp [16]unsafe.Pointer
	for i := range v {
		vp[i] = unsafe.Pointer(&v[i])
	}
	for k, nargs := range []int{4, 16} {
		f := fns[k]
		goTyped := func() {
			if nargs == 4 {
				for i := 0; i < block; i++ {
					_ = driver.LaunchArgs(f, one, one, 0, s, v[0], v[1], v[2], v[3])
				}
				return
			}
			for i := 0; i < block; i++ {
				_ = driver.LaunchArgs(f, one, one, 0, s, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15])
			}
		}
		goRaw := func() {
			for i := 0; i < block; i++ {
				_ = driver.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, vp[:nargs], nil)
			}
		}
		b.Run(fmt.Sprintf("args=%d", nargs), func(b *testing.B) {
			var cNs, typedNs, rawNs []float64
			var allocs float64
			for b.Loop() {
				cNs, typedNs, rawNs = cNs[:0], typedNs[:0], rawNs[:0]
				for r := 0; r < rounds; r++ {
					ns := launchLoopC(entry, uintptr(f), uintptr(s), nargs, block)
					if ns < 0 {
						b.Fatalf("C launch: CUresult %d", -ns)
					}
					cNs = append(cNs, float64(ns)/block)
					ok(b, driver.StreamSynchronize(s))
					t0 := time.Now()
					goTyped()
					typedNs = append(typedNs, float64(time.Since(t0).Nanoseconds())/block)
					ok(b, driver.StreamSynchronize(s))
					t0 = time.Now()
					goRaw()
					rawNs = append(rawNs, float64(time.Since(t0).Nanoseconds())/block)
					ok(b, driver.StreamSynchronize(s))
				}
				allocs = testing.AllocsPerRun(1, goTyped) / block
			}
			c, typed, raw := median(cNs), median(typedNs), median(rawNs)
			diffs := make([]float64, len(cNs))
			for i := range cNs {
				diffs[i] = typedNs[i] - cNs[i]
			}
			b.ReportMetric(c, "C-ns/launch")
			b.ReportMetric(typed, "LaunchArgs-ns/launch")
			b.ReportMetric(raw, "LaunchKernel-ns/launch")
			b.ReportMetric(median(diffs), "LaunchArgs-over-C-ns")
			b.ReportMetric(allocs, "LaunchArgs-allocs/launch")
			b.Logf("%d args, %d rounds of %d launches: C %.0f ns, LaunchArgs %.0f ns (+%.0f, per-round median), LaunchKernel %.0f ns; %v allocs per typed launch",
				nargs, rounds, block, c, typed, median(diffs), raw, allocs)
		})
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	y := slices.Clone(x)
	slices.Sort(y)
	return y[len(y)/2]
}

// A launch in steady state is one crossing into C (the runtime's count of
// cgo calls), whatever the driver: where the driver cannot tell a kernel's
// parameters (before 12.4: TestDriverMatrix runs this on the fake driver
// of 11.8), finding that out costs no crossing.
func TestLayerLaunchOneCrossing(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 64))
	defer buf.Close()
	ok(t, buf.CopyFrom(make([]float32, 64)))
	cfg := cuda.Linear(64, 64)
	launch := func() {
		if err := s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(64))); err != nil {
			t.Fatal(err)
		}
	}
	launch() // the kernel's parameters, asked once
	byBuffer0, fake := fakeCounter("fakecuda_buffer_launches")
	// The process's count: other goroutines' calls add to it (the
	// package's background goroutines make a few at times, more on a busy
	// machine), so the launches' own is the fewest of five batches.
	sample := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	const batches, batch = 5, 400
	const n = batches * batch
	per := float64(n)
	for range batches {
		metrics.Read(sample)
		c0 := sample[0].Value.Uint64()
		for range batch {
			launch()
		}
		metrics.Read(sample)
		per = min(per, float64(sample[0].Value.Uint64()-c0)/batch)
	}
	ok(t, s.Sync())
	if per < 1 || per > 1.05 {
		t.Errorf("%.3f crossings into C per launch, want 1", per)
	}
	t.Logf("%.3f crossings into C per launch", per)
	// Each launch added 1 to every element: the arguments reached the
	// kernel, passed as one parameter buffer on the fake driver.
	got := make([]float32, 64)
	ok(t, buf.CopyTo(got))
	for i, v := range got {
		if v != n+1 {
			t.Fatalf("element %d is %v after %d launches of add_one, want %d", i, v, n+1, n+1)
		}
	}
	// Where the driver told the kernel's parameters the launches take the
	// hot path, which passes one buffer; elsewhere (before 12.4) the
	// counted path, which passes a pointer per parameter.
	_, known := k.Params()
	want, what := 0, "none"
	if known {
		want, what = n, "all"
	}
	if byBuffer, _ := fakeCounter("fakecuda_buffer_launches"); fake && byBuffer-byBuffer0 != int64(want) {
		t.Errorf("%d of the %d launches passed their arguments as one buffer, want %s (the driver told the parameters: %v)", byBuffer-byBuffer0, n, what, known)
	}
}
