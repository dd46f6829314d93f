package driver

// The lifetimes of what the driver keeps, on the memory-rules fake
// (testdata/fakemem.c), which keeps pointers as cuda.h documents and reads
// or writes them after the call that passed them: after a forced collection
// and a churn of the heap that would reuse any Go memory it had been given,
// nothing it kept may have changed (fakemem_corruption), and what it writes
// lands in memory the caller still owns.

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/internal/osthread"
)

// churn runs the collector and allocates over what it freed.
func churn() {
	for i := 0; i < 3; i++ {
		runtime.GC()
		var keep [][]byte
		for j := 0; j < 256; j++ {
			b := make([]byte, 512)
			for k := range b {
				b[k] = 0xa5
			}
			keep = append(keep, b)
		}
		runtime.KeepAlive(keep)
	}
}

// fakeImage is a module image the fake reads: its kernels and their
// parameters' sizes.
var fakeImage = []byte("fakemem-image\nadd_one 8 4\n\x00")

// cuLinkCreate keeps optionValues for the link's life: the wrapper copies
// them into C memory the link owns, freed by LinkDestroy.
func TestLifetimeLinkOptionValues(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	const n = 1024
	info, err := MemAllocHostCtx(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFreeHostCtx(ctx, info)
	clear(info.Bytes(n))
	before := keptCount()
	state, err := LinkCreateCtx(ctx, []JITOption{JITInfoLogBuffer, JITInfoLogBufferSizeBytes}, []uintptr{uintptr(info), n})
	if err != nil {
		t.Fatal(err)
	}
	if keptCount() != before+1 {
		t.Fatalf("LinkCreate kept %d C copies, want 1", keptCount()-before)
	}
	churn()
	if err := LinkAddDataCtx(ctx, state, JITInputPTX, fakeImage, "a", nil, nil); err != nil {
		t.Fatal(err)
	}
	churn()
	if _, _, err := LinkCompleteCtx(ctx, state); err != nil {
		t.Fatal(err)
	}
	noCorruption(t)
	if fakeMemCounter(t, "fakemem_logs_written") == 0 || bytes.IndexByte(info.Bytes(n), 0) == 0 {
		t.Fatal("the fake wrote no log into the buffer the link kept")
	}
	if err := LinkDestroyCtx(ctx, state); err != nil {
		t.Fatal(err)
	}
	if keptCount() != before {
		t.Fatalf("LinkDestroy left %d C copies", keptCount()-before)
	}
	// A failed create keeps nothing.
	if _, err := LinkCreateCtx(ctx, []JITOption{JITInfoLogBuffer}, []uintptr{0, 1}); err == nil {
		t.Fatal("options and values of different lengths were accepted")
	}
	if keptCount() != before {
		t.Fatalf("a refused LinkCreate kept %d C copies", keptCount()-before)
	}
}

// A link's copies are taken before the call that destroys it: once the
// driver has ended the link, it may hand the same value to a link made on
// another goroutine, whose copies stay. The fake reuses a destroyed link's
// memory, and holds LinkDestroy, the link ended, while the test makes a new
// link.
func TestLifetimeLinkValueReused(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	before, owned := keptCount(), osthread.Owned()
	old, err := LinkCreateCtx(ctx, []JITOption{JITLogVerbose}, []uintptr{1})
	if err != nil {
		t.Fatal(err)
	}
	fakeMemSet(t, "fakemem_link_destroy_hold", 1)
	destroyed := make(chan error, 1)
	go func() { destroyed <- LinkDestroyCtx(ctx, old) }()
	waitFor(t, "LinkDestroy to end the link and wait", func() bool { return fakeMemCounter(t, "fakemem_link_destroy_waiting") == 1 })
	reused, err := LinkCreateCtx(ctx, []JITOption{JITLogVerbose}, []uintptr{1})
	// LinkCreate returned while the old link's destroy still runs: the
	// new link's thread does not wait for the old one's call.
	held := fakeMemCounter(t, "fakemem_link_destroy_waiting")
	fakeMemSet(t, "fakemem_link_destroy_hold", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-destroyed; err != nil {
		t.Fatal(err)
	}
	if reused != old {
		t.Fatalf("the fake made link %#x, not the destroyed link's value %#x", reused, old)
	}
	if held != 1 {
		t.Fatal("LinkCreate waited for the destroy of the link whose value it was given")
	}
	if keptCount() != before+1 || osthread.Owned() != owned+1 {
		t.Fatalf("after the old link's destroy the new link with its value keeps %d C copies and %d threads, want 1 and 1", keptCount()-before, osthread.Owned()-owned)
	}
	moves := fakeMemCounter(t, "fakemem_link_thread_moves")
	if err := LinkAddDataCtx(ctx, reused, JITInputPTX, fakeImage, "a", nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := fakeMemCounter(t, "fakemem_link_thread_moves") - moves; n != 0 {
		t.Fatalf("a call on the new link ran on %d threads other than its LinkCreate's", n)
	}
	noCorruption(t)
	if err := LinkDestroyCtx(ctx, reused); err != nil || keptCount() != before || osthread.Owned() != owned {
		t.Fatalf("LinkDestroy: %v, %d C copies and %d threads left", err, keptCount()-before, osthread.Owned()-owned)
	}
}

// A memcpy node keeps its copy's host sides (HostPtr: C memory) and copies
// through them at every launch of the graph.
func TestLifetimeMemcpyNodeHostSides(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	copiesThroughHost(t, ctx, 64, "the node did not copy through its kept host pointers", func(src, dst HostPtr, n uint64) {
		g, err := GraphCreateCtx(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer GraphDestroyCtx(ctx, g)
		p := Memcpy3DParams{SrcMemoryType: MemorytypeHost, SrcHost: src, SrcPitch: n, SrcHeight: 1,
			DstMemoryType: MemorytypeHost, DstHost: dst, DstPitch: n, DstHeight: 1, WidthInBytes: n, Height: 1, Depth: 1}
		if _, err := GraphAddMemcpyNodeCtx(ctx, g, nil, &p, ctx); err != nil {
			t.Fatal(err)
		}
		churn()
		x, err := GraphInstantiateWithFlagsCtx(ctx, g, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer GraphExecDestroyCtx(ctx, x)
		for i := 0; i < 3; i++ {
			if err := GraphLaunchCtx(ctx, x, 0); err != nil {
				t.Fatal(err)
			}
			if err := StreamSynchronizeCtx(ctx, 0); err != nil {
				t.Fatal(err)
			}
			churn()
		}
		if got := fakeMemCounter(t, "fakemem_memcpy_nodes_run"); got != 3 {
			t.Fatalf("memcpy nodes run: %d, want 3", got)
		}
	})
}

// Launches: kernelParams must hold one pointer per kernel parameter (the
// fake reports 2 for add_one), extra must end in CU_LAUNCH_PARAM_END; the
// refusals come before the driver reads either.
func TestLifetimeLaunchParams(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	mod, err := ModuleLoadDataCtx(ctx, fakeImage)
	if err != nil {
		t.Fatal(err)
	}
	defer ModuleUnloadCtx(ctx, mod)
	f, err := ModuleGetFunctionCtx(ctx, mod, "add_one")
	if err != nil {
		t.Fatal(err)
	}
	p, v := uint64(0x1000), uint32(7)
	launches := fakeMemCounter(t, "fakemem_kernel_launches")
	for _, kp := range [][]unsafe.Pointer{{unsafe.Pointer(&p)}, {unsafe.Pointer(&p), unsafe.Pointer(&v), unsafe.Pointer(&v)}} {
		if err := LaunchKernelCtx(ctx, f, 1, 1, 1, 1, 1, 1, 0, 0, kp, nil); !errors.Is(err, ErrorInvalidValue) || !strings.Contains(err.Error(), "takes 2 parameters") {
			t.Fatalf("%d pointers for 2 parameters: %v", len(kp), err)
		}
	}
	if err := LaunchArgsCtx(ctx, f, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, p); !errors.Is(err, ErrorInvalidValue) {
		t.Fatalf("LaunchArgs with 1 value for 2 parameters: %v", err)
	}
	if err := LaunchKernelCtx(ctx, f, 1, 1, 1, 1, 1, 1, 0, 0, nil, []unsafe.Pointer{nil, nil}); !errors.Is(err, ErrorInvalidValue) {
		t.Fatalf("extra without its end: %v", err)
	}
	if got := fakeMemCounter(t, "fakemem_kernel_launches"); got != launches {
		t.Fatalf("a refused launch reached the fake (%d launches)", got-launches)
	}
	if err := LaunchKernelCtx(ctx, f, 1, 1, 1, 1, 1, 1, 0, 0, []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&v)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := LaunchArgsCtx(ctx, f, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, p, v); err != nil {
		t.Fatal(err)
	}
	launchedOnFake(t, launches, 2, 12)
}

// The asynchronous copies use their host memory when the copy runs on
// the stream, after the call returns: it is a HostPtr (C memory), which
// the fake copies from and to on the stream's thread.
func TestLifetimeAsyncCopyHostMemory(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	copiesThroughHost(t, ctx, 256, "the copies on the stream did not go through their host memory", func(src, dst HostPtr, n uint64) {
		d, err := MemAllocCtx(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		defer MemFreeCtx(ctx, d)
		s, err := StreamCreateCtx(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer StreamDestroyCtx(ctx, s)
		if err := MemcpyHtoDAsyncCtx(ctx, d, src, n, s); err != nil {
			t.Fatal(err)
		}
		if err := MemcpyDtoHAsyncCtx(ctx, dst, d, n, s); err != nil {
			t.Fatal(err)
		}
		churn()
		if err := StreamSynchronizeCtx(ctx, s); err != nil {
			t.Fatal(err)
		}
	})
}

// copiesThroughHost allocates two page-locked host buffers of n bytes in
// ctx (freed when the test ends), fills the source, and has copyAll copy
// it to the destination through calls that keep their host sides; then
// the destination must hold the source's bytes (else the test fails
// saying notCopied), and nothing the fake kept may have changed.
func copiesThroughHost(t *testing.T, ctx Context, n uint64, notCopied string, copyAll func(src, dst HostPtr, n uint64)) {
	t.Helper()
	var src, dst HostPtr
	for _, p := range []*HostPtr{&src, &dst} {
		h, err := MemAllocHostCtx(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { MemFreeHostCtx(ctx, h) })
		*p = h
	}
	for i, b := 0, src.Bytes(int(n)); i < len(b); i++ {
		b[i] = byte(i)
	}
	copyAll(src, dst, n)
	if !bytes.Equal(dst.Bytes(int(n)), src.Bytes(int(n))) {
		t.Fatal(notCopied)
	}
	noCorruption(t)
}
