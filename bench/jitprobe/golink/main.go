//go:build linux

// Command golink is the Go side of linkthreads.c: the JIT link of
// cuda_test's TestMemRulesLinkLogs, made ROUNDS times through cuda/driver
// (info and error logs in page-locked memory allocated for each link,
// verbose logging; create, add the PTX, complete, add text that is not
// PTX, destroy, free the logs, load and unload the linked image), each
// round followed by LOADS loads of distinct PTX text, so that each is
// compiled: run it with CUDA_CACHE_DISABLE=1. With -lock the goroutine
// keeps one OS thread for the whole run; without it, each call may run on
// another thread, as in any Go program, and a runtime.GC between the calls
// makes that likely. It prints how many OS threads the link's calls ran
// on. A crash ends the process by its signal; a refused call exits 1.
//
//	golink [-lock] [-rounds N] [-loads N] K.PTX
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

func main() {
	lock := flag.Bool("lock", false, "keep one OS thread for the whole run")
	rounds := flag.Int("rounds", 20, "links to make")
	loads := flag.Int("loads", 5, "cold loads after each link")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: golink [-lock] [-rounds N] [-loads N] K.PTX")
		os.Exit(2)
	}
	ptx, err := os.ReadFile(flag.Arg(0))
	check("read the PTX", err)
	ptx = append(bytes.TrimRight(ptx, "\x00"), 0)
	if *lock {
		runtime.LockOSThread()
	}
	check("cuInit", driver.Init(0))
	dev, err := driver.DeviceGet(0)
	check("cuDeviceGet", err)
	ctx, err := driver.DevicePrimaryCtxRetain(dev)
	check("cuDevicePrimaryCtxRetain", err)
	threads := map[int]bool{}
	step := func(what string, err error) {
		threads[syscall.Gettid()] = true
		check(what, err)
		runtime.GC() // as the test does between the link's calls
	}
	for r := range *rounds {
		const logSize = 4096
		info, err := driver.MemAllocHostCtx(ctx, logSize)
		check("cuMemAllocHost", err)
		elog, err := driver.MemAllocHostCtx(ctx, logSize)
		check("cuMemAllocHost", err)
		opts := []driver.JITOption{driver.JITInfoLogBuffer, driver.JITInfoLogBufferSizeBytes, driver.JITErrorLogBuffer, driver.JITErrorLogBufferSizeBytes, driver.JITLogVerbose}
		vals := []uintptr{uintptr(info), logSize, uintptr(elog), logSize, 1}
		state, err := driver.LinkCreateCtx(ctx, opts, vals)
		step("cuLinkCreate", err)
		step("cuLinkAddData", driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, ptx, "store.ptx", nil, nil))
		cubin, size, err := driver.LinkCompleteCtx(ctx, state)
		step("cuLinkComplete", err)
		image := bytes.Clone(unsafeBytes(cubin, size))
		if driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, []byte("not ptx\x00"), "bad.ptx", nil, nil) == nil {
			check("cuLinkAddData of text that is not PTX", fmt.Errorf("accepted"))
		}
		step("cuLinkDestroy", driver.LinkDestroyCtx(ctx, state))
		check("cuMemFreeHost", driver.MemFreeHostCtx(ctx, info))
		check("cuMemFreeHost", driver.MemFreeHostCtx(ctx, elog))
		load(ctx, image)
		for i := range *loads {
			load(ctx, append([]byte(fmt.Sprintf("// %d %d\n", r, i)), ptx...))
		}
	}
	fmt.Printf("%d rounds of a link (its calls on %d OS threads, -lock %v) and %d cold loads a round: no crash\n", *rounds, len(threads), *lock, *loads)
}

// unsafeBytes is the n bytes at p, C memory the driver owns.
func unsafeBytes(p unsafe.Pointer, n uint64) []byte { return unsafe.Slice((*byte)(p), n) }

// load loads and unloads image.
func load(ctx driver.Context, image []byte) {
	m, err := driver.ModuleLoadDataCtx(ctx, image)
	check("cuModuleLoadData", err)
	check("cuModuleUnload", driver.ModuleUnloadCtx(ctx, m))
}

func check(what string, err error) {
	if err != nil {
		fmt.Printf("golink: %s: %v\n", what, err)
		os.Exit(1)
	}
}
