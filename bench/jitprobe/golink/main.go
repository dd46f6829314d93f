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
// on. A crash ends the process by its signal (Go prints the faulting PC);
// a refused call exits 1. After the first link it prints the driver's
// executable mappings, to place such a PC in a library.
//
//	golink [-lock] [-rounds N] [-loads N] K.PTX
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
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
		_ = driver.LinkAddDataCtx(ctx, state, driver.JITInputPTX, []byte("not ptx\x00"), "bad.ptx", nil, nil) // refused: it fills the error log
		step("cuLinkDestroy", driver.LinkDestroyCtx(ctx, state))
		check("cuMemFreeHost", driver.MemFreeHostCtx(ctx, info))
		check("cuMemFreeHost", driver.MemFreeHostCtx(ctx, elog))
		load(ctx, image)
		if r == 0 {
			printMaps()
		}
		for i := range *loads {
			load(ctx, append([]byte(fmt.Sprintf("// %d %d\n", r, i)), ptx...))
		}
	}
	fmt.Printf("%d rounds of a link (its calls on %d OS threads, -lock %v) and %d cold loads a round: no crash\n", *rounds, len(threads), *lock, *loads)
}

// printMaps prints the executable mappings of the NVIDIA libraries loaded
// (libcuda and the JIT compiler it loads).
func printMaps() {
	maps, err := os.ReadFile("/proc/self/maps")
	check("read /proc/self/maps", err)
	for _, l := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(l); len(f) == 6 && strings.Contains(f[1], "x") && (strings.Contains(f[5], "nvidia") || strings.Contains(f[5], "libcuda")) {
			fmt.Printf("mapped: %s %s (file offset %s)\n", f[0], f[5], f[2])
		}
	}
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
