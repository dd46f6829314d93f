//go:build cgo

package gputest

// The driver's memory rules on the GPU, through the generated layer: a
// launch whose kernelParams do not match the kernel's parameter count is
// refused before the driver reads them; a linker with info and error log
// buffers (C memory the link keeps) writes its logs there through a forced
// collection, and its calls stay on one OS thread whichever threads make
// them; a texture reference's border colour is four floats both ways.
// Without a GPU each skips, saying so.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/nvjitlink"
)

// storeFunction loads storePTX and returns its kernel (two parameters).
func storeFunction(t *testing.T, ctx driver.Context) driver.Function {
	t.Helper()
	mod := must[driver.Module](t)(driver.ModuleLoadDataCtx(ctx, []byte(storePTX)))
	t.Cleanup(func() { driver.ModuleUnloadCtx(ctx, mod) })
	return must[driver.Function](t)(driver.ModuleGetFunctionCtx(ctx, mod, "cudagen_store"))
}

func TestMemRulesLaunchParamCount(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	fn := storeFunction(t, ctx)
	dptr := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, 4))
	defer driver.MemFreeCtx(ctx, dptr)
	p, v := uint64(dptr), uint32(0x600d)
	one := []unsafe.Pointer{unsafe.Pointer(&p)}
	err := driver.LaunchKernelCtx(ctx, fn, 1, 1, 1, 1, 1, 1, 0, 0, one, nil)
	if !errors.Is(err, driver.ErrorInvalidValue) || !strings.Contains(err.Error(), "takes 2 parameters") {
		t.Fatalf("one pointer for a kernel of two parameters: got %v, want a refusal naming the count", err)
	}
	if err := driver.LaunchArgsCtx(ctx, fn, driver.Dim3{X: 1, Y: 1, Z: 1}, driver.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, dptr); !errors.Is(err, driver.ErrorInvalidValue) {
		t.Fatalf("LaunchArgs with one value for a kernel of two parameters: got %v", err)
	}
	noEnd := []unsafe.Pointer{nil, nil}
	if err := driver.LaunchKernelCtx(ctx, fn, 1, 1, 1, 1, 1, 1, 0, 0, nil, noEnd); !errors.Is(err, driver.ErrorInvalidValue) {
		t.Fatalf("extra without its end marker: got %v", err)
	}
	two := []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&v)}
	ok(t, driver.LaunchKernelCtx(ctx, fn, 1, 1, 1, 1, 1, 1, 0, 0, two, nil))
	ok(t, driver.CtxSynchronizeCtx(ctx))
	got := make([]uint32, 1)
	ok(t, driver.MemcpyDtoHCtx(ctx, driver.AsBytes(got), dptr))
	if got[0] != v {
		t.Fatalf("the kernel stored %#x, want %#x", got[0], v)
	}
	t.Logf("a launch with 1 of 2 kernel parameters was refused: %v", err)
}

// The link keeps its option values (copied into C memory it owns) and
// writes its logs into the C buffers they name, after the call that
// passed them and after a forced collection.
func TestMemRulesLinkLogs(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	const logSize = 4096
	info := must[driver.HostPtr](t)(driver.MemAllocHostCtx(ctx, logSize))
	defer driver.MemFreeHostCtx(ctx, info)
	errLog := must[driver.HostPtr](t)(driver.MemAllocHostCtx(ctx, logSize))
	defer driver.MemFreeHostCtx(ctx, errLog)
	clear(info.Bytes(logSize))
	clear(errLog.Bytes(logSize))
	opts := []driver.JITOption{driver.JITInfoLogBuffer, driver.JITInfoLogBufferSizeBytes, driver.JITErrorLogBuffer, driver.JITErrorLogBufferSizeBytes, driver.JITLogVerbose}
	vals := []uintptr{uintptr(info), logSize, uintptr(errLog), logSize, 1}
	state := must[driver.LinkState](t)(driver.LinkCreateCtx(ctx, opts, vals))
	// The caller's slices may go: the link holds its own copy.
	opts, vals = nil, nil
	runtime.GC()
	runtime.GC()
	ok(t, driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, []byte(storePTX), "store.ptx", nil, nil))
	runtime.GC()
	cubin, size, err := driver.LinkCompleteCtx(ctx, state)
	ok(t, err)
	if cubin == nil || size == 0 {
		t.Fatalf("LinkComplete: image %p of %d bytes", cubin, size)
	}
	image := bytes.Clone(unsafe.Slice((*byte)(cubin), size))
	text := string(bytes.TrimRight(info.Bytes(logSize), "\x00"))
	if !strings.Contains(text, "cudagen_store") && !strings.Contains(strings.ToLower(text), "info") {
		t.Errorf("the info log the link kept does not mention the kernel: %q", text)
	}
	// A bad input writes the error log.
	err = driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, []byte("not ptx\x00"), "bad.ptx", nil, nil)
	if err == nil {
		t.Error("LinkAddData accepted text that is not PTX")
	}
	elog := string(bytes.TrimRight(errLog.Bytes(logSize), "\x00"))
	ok(t, driver.LinkDestroyCtx(ctx, state))
	mod := must[driver.Module](t)(driver.ModuleLoadDataCtx(ctx, image))
	ok(t, driver.ModuleUnloadCtx(ctx, mod))
	t.Logf("linked a %d-byte image; info log %q; error log %q", size, firstLine(text), firstLine(elog))
}

// linkThreadsEnv makes TestMemRulesLinkThreads the child that links.
const linkThreadsEnv = "CUDAGEN_TEST_LINK_THREADS"

// A JIT link's calls spread over four OS threads (0, 1, 2, 3, 1), as a
// goroutine's may be, each followed by cold loads on every thread: such
// links crashed the process (every one of 10 processes, the driver's link
// from C and from Go, nvJitLink's from C), and cuda/driver and
// cuda/nvjitlink run a link's calls on one thread the link owns. The links
// run in a child process with the driver's JIT cache off, so that every
// load compiles; a crash ends only the child.
func TestMemRulesLinkThreads(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	if os.Getenv(linkThreadsEnv) == "" {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, os.Args[0], "-test.run=^TestMemRulesLinkThreads$", "-test.v")
		cmd.Env = append(os.Environ(), linkThreadsEnv+"=1", "CUDA_CACHE_DISABLE=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "child: linked") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Logf("%s", bytes.TrimSpace(out))
		return
	}
	const rounds, loads, logSize = 20, 5, 4096
	calls := make([]chan func(), 4)
	done := make(chan struct{})
	for i := range calls {
		calls[i] = make(chan func())
		go func(c chan func()) {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			for f := range c {
				f()
				done <- struct{}{}
			}
		}(calls[i])
		defer close(calls[i])
	}
	on := func(i int, f func()) { calls[i] <- f; <-done }
	// spread runs a link's five steps on threads 0, 1, 2, 3 and 1; the
	// fourth must fail (text that is not PTX), the others succeed. Then
	// each thread loads the image and makes cold loads.
	spread := func(r int, steps [5]func() error, image *[]byte) {
		for k, step := range steps {
			var err error
			on([]int{0, 1, 2, 3, 1}[k], func() { err = step() })
			if (err == nil) != (k != 3) {
				t.Fatalf("round %d, step %d: %v", r, k, err)
			}
		}
		for i := range calls {
			on(i, func() {
				load(t, ctx, *image)
				for l := range loads {
					load(t, ctx, []byte(fmt.Sprintf("// %d %d %d\n%s", r, i, l, storePTX)))
				}
			})
		}
	}
	for r := range rounds {
		var info, errLog driver.HostPtr
		var state driver.LinkState
		var image []byte
		spread(r, [5]func() error{
			func() (err error) {
				if info, err = driver.MemAllocHostCtx(ctx, logSize); err != nil {
					return
				}
				if errLog, err = driver.MemAllocHostCtx(ctx, logSize); err != nil {
					return
				}
				opts := []driver.JITOption{driver.JITInfoLogBuffer, driver.JITInfoLogBufferSizeBytes, driver.JITErrorLogBuffer, driver.JITErrorLogBufferSizeBytes, driver.JITLogVerbose}
				state, err = driver.LinkCreateCtx(ctx, opts, []uintptr{uintptr(info), logSize, uintptr(errLog), logSize, 1})
				return
			},
			func() error {
				return driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, []byte(storePTX), "store.ptx", nil, nil)
			},
			func() error {
				cubin, size, err := driver.LinkCompleteCtx(ctx, state)
				image = bytes.Clone(unsafe.Slice((*byte)(cubin), size))
				return err
			},
			func() error {
				return driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, []byte("not ptx\x00"), "bad.ptx", nil, nil)
			},
			func() error {
				return errors.Join(driver.LinkDestroyCtx(ctx, state), driver.MemFreeHostCtx(ctx, info), driver.MemFreeHostCtx(ctx, errLog))
			},
		}, &image)
	}
	fmt.Printf("child: linked %d times through the driver, each link's calls made from 4 OS threads, and made %d cold loads\n", rounds, rounds*len(calls)*(loads+1))
	// nvJitLink's links likewise, where this build binds it.
	d := must[driver.Device](t)(driver.DeviceGet(0))
	major := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, d))
	minor := must[int32](t)(driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, d))
	opts := []string{fmt.Sprintf("-arch=sm_%d%d", major, minor)}
	h, err := nvjitlink.Create(opts)
	if errors.Is(err, nvjitlink.ErrNoLibrary) || errors.Is(err, nvjitlink.ErrNotSupported) {
		fmt.Printf("child: no nvJitLink links: %v\n", err)
		return
	}
	ok(t, err)
	ok(t, nvjitlink.Destroy(&h))
	for r := range rounds {
		var h nvjitlink.Handle
		var image []byte
		spread(r, [5]func() error{
			func() (err error) { h, err = nvjitlink.Create(opts); return },
			func() error { return nvjitlink.AddData(h, nvjitlink.InputPTX, []byte(storePTX), "store.ptx") },
			func() (err error) {
				if err = nvjitlink.Complete(h); err == nil {
					image, err = nvjitlink.GetLinkedCUBIN(h)
				}
				return
			},
			func() error { return nvjitlink.AddData(h, nvjitlink.InputPTX, []byte("not ptx\x00"), "bad.ptx") },
			func() error { return nvjitlink.Destroy(&h) },
		}, &image)
	}
	fmt.Printf("child: linked %d times through nvJitLink likewise\n", rounds)
}

// load loads image and unloads it.
func load(t *testing.T, ctx driver.Context, image []byte) {
	mod, err := driver.ModuleLoadDataCtx(ctx, image)
	if err == nil {
		err = driver.ModuleUnloadCtx(ctx, mod)
	}
	if err != nil {
		t.Error(err)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// A texture reference's border colour is four floats, written and read.
func TestMemRulesBorderColor(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	ref, err := driver.TexRefCreateCtx(ctx)
	if errors.Is(err, driver.ErrorNotSupported) || errors.Is(err, driver.ErrNotSupported) {
		t.Skipf("skipping: texture references are not supported by this driver: %v", err)
	}
	ok(t, err)
	defer driver.TexRefDestroyCtx(ctx, ref)
	want := [4]float32{0.25, 0.5, 0.75, 1}
	ok(t, driver.TexRefSetBorderColorCtx(ctx, ref, &want))
	runtime.GC()
	got := must[[4]float32](t)(driver.TexRefGetBorderColorCtx(ctx, ref))
	if got != want {
		t.Fatalf("border colour %v, want %v", got, want)
	}
	t.Logf("border colour round trip: %v", got)
}
