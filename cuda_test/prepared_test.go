//go:build cgo

package gputest

import (
	"errors"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/nvrtc"
)

// A prepared launch runs its kernel with the arguments bound at Prepare,
// and with those Set replaced from the next launch on; what Launch refuses,
// Prepare refuses, and Set refuses a replacement of another size, index or
// kind, leaving the arguments as they were; a closed module's prepared
// launch is refused.
func TestLayerPreparedLaunch(t *testing.T) {
	dev := gpu(t)
	m, k := computeSetup(t, dev)
	launches0, fake := fakeCounter("fakecuda_launches")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	const n = 1000
	a := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer a.Close()
	b := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer b.Close()
	l := must[*cuda.PreparedLaunch](t)(k.Prepare(cuda.Linear(n, 128), a.Arg(), driver.Arg(uint32(n))))
	if l.Kernel() != k {
		t.Errorf("Kernel: %v, want %v", l.Kernel(), k)
	}
	for range 3 {
		ok(t, s.LaunchPrepared(l))
	}
	ok(t, s.Sync())
	checkAll(t, "a after 3 prepared launches", a, 3)
	if fake {
		if v, _ := fakeCounter("fakecuda_launches"); v != launches0+3 {
			t.Errorf("the driver launched %d kernels, want 3", v-launches0)
		}
		gx, _ := fakeCounter("fakecuda_last_grid_x")
		bx, _ := fakeCounter("fakecuda_last_block_x")
		gy, _ := fakeCounter("fakecuda_last_grid_y")
		if gx != 8 || bx != 128 || gy != 1 {
			t.Errorf("the driver got grid %d×%d and block %d, want 8×1 and 128", gx, gy, bx)
		}
	}
	ok(t, l.Set(0, b.Arg()))
	ok(t, s.LaunchPrepared(l))
	ok(t, l.Set(1, driver.Arg(uint32(10))))
	ok(t, s.LaunchPrepared(l))
	ok(t, s.Sync())
	checkAll(t, "a after its argument was replaced", a, 3)
	got := make([]float32, n)
	checkB := func(what string, first10, rest float32) {
		t.Helper()
		ok(t, b.CopyTo(got))
		for i, v := range got {
			want := rest
			if i < 10 {
				want = first10
			}
			if v != want {
				t.Fatalf("%s: b[%d] is %v, want %v", what, i, v, want)
			}
		}
	}
	checkB("two launches on b, the second over 10 elements", 2, 1)

	// Set's refusals change nothing.
	isErr(t, "Set of argument 2 of 2", l.Set(2, driver.Arg(uint32(1))), cuda.ErrInvalidOptions, "argument 2")
	isErr(t, "Set of argument -1", l.Set(-1, driver.Arg(uint32(1))), cuda.ErrInvalidOptions)
	isErr(t, "Set of a uint64 for a uint32", l.Set(1, driver.Arg(uint64(5))), cuda.ErrMismatch, "8 bytes", "4 bytes")
	isErr(t, "Set of a zero KernelArg", l.Set(0, driver.KernelArg{}), cuda.ErrInvalid, "zero KernelArg")
	isErr(t, "Set of a Go pointer", l.Set(0, driver.ArgStruct(struct{ P *int }{})), cuda.ErrInvalidType, "Go pointers")
	ok(t, l.Set(1, driver.Arg(int32(n)))) // another type of the same size
	ok(t, s.LaunchPrepared(l))
	ok(t, s.Sync())
	checkB("after refused Sets and a launch over every element", 3, 2)

	// Prepare refuses what Launch does.
	_, err := k.Prepare(cuda.LaunchConfig{Block: cuda.Dim3{X: 512}}, a.Arg(), driver.Arg(uint32(n)))
	isErr(t, "Prepare of a block of 512", err, cuda.ErrInvalidOptions, "512 threads")
	_, err = k.Prepare(cuda.LaunchConfig{}, a.Arg(), driver.KernelArg{})
	isErr(t, "Prepare with a zero KernelArg", err, cuda.ErrInvalid, "zero KernelArg")
	if paramsKnown(t) {
		_, err = k.Prepare(cuda.LaunchConfig{}, a.Arg())
		isErr(t, "Prepare with one argument of two", err, cuda.ErrMismatch, "takes 2 parameters")
	}
	var nilk *cuda.Kernel
	_, err = nilk.Prepare(cuda.LaunchConfig{})
	isErr(t, "Prepare of a nil Kernel", err, cuda.ErrInvalid, "kernel")
	var nill *cuda.PreparedLaunch
	isErr(t, "LaunchPrepared(nil)", s.LaunchPrepared(nill), cuda.ErrInvalid, "prepared launch")
	isErr(t, "Set of a nil PreparedLaunch", nill.Set(0, a.Arg()), cuda.ErrInvalid, "prepared launch")

	// Across devices.
	if c, _ := cuda.DeviceCount(); c >= 2 {
		dev1 := must[*cuda.Device](t)(cuda.GetDevice(1))
		defer dev1.Close()
		_, k1 := computeSetup(t, dev1)
		l1 := must[*cuda.PreparedLaunch](t)(k1.Prepare(cuda.LaunchConfig{}, driver.Arg(driver.DevicePtr(0)), driver.Arg(uint32(0))))
		isErr(t, "LaunchPrepared of device 1's kernel on device 0", s.LaunchPrepared(l1), cuda.ErrWrongDevice, "device 1", "device 0")
	}

	// Its module closed.
	ok(t, m.Close())
	isErr(t, "LaunchPrepared after its module closed", s.LaunchPrepared(l), cuda.ErrClosed, "kernel's module is closed")
	_, err = k.Prepare(cuda.LaunchConfig{}, a.Arg(), driver.Arg(uint32(n)))
	isErr(t, "Prepare after the module closed", err, cuda.ErrClosed, "kernel's module is closed")
}

// A prepared launch, an argument replaced each time, allocates nothing.
func TestLayerPreparedLaunchNoAllocations(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	bufs := [2]*cuda.Buffer[float32]{
		must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, 4096))),
		must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, 4096))),
	}
	defer bufs[0].Close()
	defer bufs[1].Close()
	l := must[*cuda.PreparedLaunch](t)(k.Prepare(cuda.Linear(4096, 256), bufs[0].Arg(), driver.Arg(uint32(4096))))
	var failed error
	i := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		i++
		err := l.Set(0, bufs[i%2].Arg())
		if err == nil {
			err = l.Set(1, driver.Arg(uint32(1000+i%3000))) // numbers past the runtime's preallocated small ones
		}
		if err == nil {
			err = s.LaunchPrepared(l)
		}
		if err != nil && failed == nil {
			failed = err
		}
	}); allocs != 0 {
		t.Errorf("Set, Set and LaunchPrepared allocate %v times per round", allocs)
	}
	ok(t, failed)
	ok(t, s.Sync())
}

// A cooperative launch (LaunchConfig.Cooperative) goes through
// cuLaunchCooperativeKernel, from Launch and from a prepared launch, with
// the same arguments as any launch; a grid that does not fit on the device
// at once is the driver's error.
func TestLayerLaunchCooperative(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	coop0, fake := fakeCounter("fakecuda_coop_launches")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	const n = 512
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer buf.Close()
	cfg := cuda.Linear(n, 128)
	cfg.Cooperative = true
	err := s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(n)))
	if errors.Is(err, driver.ErrorNotSupported) {
		t.Skipf("skipping: the device does not support cooperative launches: %v", err)
	}
	ok(t, err)
	l := must[*cuda.PreparedLaunch](t)(k.Prepare(cfg, buf.Arg(), driver.Arg(uint32(n))))
	ok(t, s.LaunchPrepared(l))
	ok(t, s.Sync())
	checkAll(t, "after a cooperative launch and a prepared one", buf, 2)
	if fake {
		if v, _ := fakeCounter("fakecuda_coop_launches"); v != coop0+2 {
			t.Errorf("the driver made %d cooperative launches, want 2", v-coop0)
		}
		big := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1 << 20}, Cooperative: true}
		isErr(t, "a cooperative launch of 2^20 blocks", s.Launch(k, big, buf.Arg(), driver.Arg(uint32(0))), driver.ErrorCooperativeLaunchTooLarge, "fewer blocks")
	}
	if allocs := testing.AllocsPerRun(200, func() {
		if err := s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(n))); err != nil {
			t.Error(err)
		}
	}); allocs != 0 {
		t.Errorf("a cooperative Launch allocates %v times", allocs)
	}
	ok(t, s.Sync())
}

// A launch with a cluster shape (LaunchConfig.Cluster) goes through
// cuLaunchKernelEx with the cluster attribute (on a driver before 11.6,
// which lacks it, the error matches ErrNotSupported: TestDriverMatrix runs
// this test on the fake driver at 11.5), from Launch and from a
// prepared launch, its 0 dimensions counting as 1; a grid that is not a
// whole number of clusters is refused before the driver is called. On a
// GPU of compute capability 9.0 or later, a kernel compiled there reads
// its cluster's size (%cluster_nctarank): the shape reached the blocks.
func TestLayerLaunchCluster(t *testing.T) {
	dev := gpu(t)
	_, k := computeSetup(t, dev)
	clusters0, fake := fakeCounter("fakecuda_cluster_launches")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	const n = 512
	buf := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, make([]float32, n)))
	defer buf.Close()
	d := must[driver.Device](t)(driver.DeviceGet(int32(dev.Ordinal())))
	major := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, d))
	if !fake && major < 9 {
		t.Skipf("skipping: thread block clusters need compute capability 9.0, and device %d is %d.x", dev.Ordinal(), major)
	}
	cfg := cuda.Linear(n, 128) // 4 blocks
	cfg.Cluster = cuda.Dim3{X: 2}
	if v := must[int](t)(cuda.DriverVersion()); v < 11060 {
		// A driver before cuLaunchKernelEx (the fake's, at 11.5).
		err := s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(n)))
		if !errors.Is(err, cuda.ErrNotSupported) {
			t.Fatalf("a cluster launch on a driver of %d: %v, want an error matching ErrNotSupported", v, err)
		}
		ok(t, s.Launch(k, cuda.Linear(n, 128), buf.Arg(), driver.Arg(uint32(n)))) // without clusters it launches
		t.Logf("a driver of %d: %v", v, err)
		return
	}
	ok(t, s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(n))))
	l := must[*cuda.PreparedLaunch](t)(k.Prepare(cfg, buf.Arg(), driver.Arg(uint32(n))))
	ok(t, s.LaunchPrepared(l))
	ok(t, s.Sync())
	checkAll(t, "after a cluster launch and a prepared one", buf, 2)
	if fake {
		if v, _ := fakeCounter("fakecuda_cluster_launches"); v != clusters0+2 {
			t.Errorf("the driver made %d launches with a cluster shape, want 2", v-clusters0)
		}
		x, _ := fakeCounter("fakecuda_last_cluster_x")
		y, _ := fakeCounter("fakecuda_last_cluster_y")
		z, _ := fakeCounter("fakecuda_last_cluster_z")
		if x != 2 || y != 1 || z != 1 {
			t.Errorf("the driver got a cluster of %dx%dx%d, want 2x1x1", x, y, z)
		}
	}
	odd := cfg
	odd.Cluster = cuda.Dim3{X: 3}
	isErr(t, "a grid of 4 blocks in clusters of 3", s.Launch(k, odd, buf.Arg(), driver.Arg(uint32(n))), cuda.ErrInvalidOptions, "whole number of clusters")
	_, err := k.Prepare(odd, buf.Arg(), driver.Arg(uint32(n)))
	isErr(t, "preparing a grid of 4 blocks in clusters of 3", err, cuda.ErrInvalidOptions, "whole number of clusters")
	if fake {
		if v, _ := fakeCounter("fakecuda_cluster_launches"); v != clusters0+2 {
			t.Errorf("a refused cluster launch reached the driver")
		}
		huge := cuda.LaunchConfig{Grid: cuda.Dim3{X: 16}, Cluster: cuda.Dim3{X: 16}}
		isErr(t, "a cluster of 16 blocks", s.Launch(k, huge, buf.Arg(), driver.Arg(uint32(0))), driver.ErrorInvalidClusterSize)
	}
	if allocs := testing.AllocsPerRun(200, func() {
		if err := s.Launch(k, cfg, buf.Arg(), driver.Arg(uint32(n))); err != nil {
			t.Error(err)
		}
	}); allocs != 0 {
		t.Errorf("a cluster Launch allocates %v times", allocs)
	}
	ok(t, s.Sync())
	if fake {
		return
	}
	const src = `extern "C" __global__ void cluster_size(unsigned *out) {
	unsigned n;
	asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
	out[blockIdx.x] = n;
}`
	m, _, err := dev.CompileModule(src, cuda.CompileOptions{Name: "cluster_size.cu"})
	if errors.Is(err, nvrtc.ErrNoLibrary) {
		t.Skipf("skipping the cluster size check: no NVRTC: %v", err)
	}
	ok(t, err)
	defer m.Close()
	ck := must[*cuda.Kernel](t)(m.Kernel("cluster_size"))
	out := must[*cuda.Buffer[uint32]](t)(cuda.Alloc[uint32](dev, 8))
	defer out.Close()
	for _, c := range []uint32{1, 2, 4} {
		ok(t, s.Launch(ck, cuda.LaunchConfig{Grid: cuda.Dim3{X: 8}, Block: cuda.Dim3{X: 32}, Cluster: cuda.Dim3{X: c}}, out.Arg()))
		ok(t, s.Sync())
		got := make([]uint32, 8)
		ok(t, out.CopyTo(got))
		for i, v := range got {
			if v != c {
				t.Fatalf("clusters of %d: block %d saw a cluster of %d", c, i, v)
			}
		}
	}
	t.Log("clusters of 1, 2 and 4 blocks: each block saw its cluster's size")
}
