//cudagen:bound cuGraphNodeSetParams

//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && cgo

package gputest

import (
	"encoding/binary"
	"runtime"
	"testing"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A kernel node's parameters set through GraphNodeParams' union, with
// grid sizes in the words where other members keep pointers, through
// forced collections: the union's storage holds no pointer word under
// those integers (the collector would abort on them), and kernelParams
// is C memory.
func TestMemRulesGraphNodeParamsKernel(t *testing.T) {
	_, ctx, _ := shapeDevice(t)
	fn := storeFunction(t, ctx)
	dptr := must[driver.DevicePtr](t)(driver.MemAllocCtx(ctx, 4))
	defer driver.MemFreeCtx(ctx, dptr)
	// The arguments and their pointer array, in C memory.
	args := must[driver.HostPtr](t)(driver.MemAllocHostCtx(ctx, 64))
	defer driver.MemFreeHostCtx(ctx, args)
	b := args.Bytes(64)
	const v = 0xfeed
	binary.LittleEndian.PutUint64(b[0:], uint64(dptr))
	binary.LittleEndian.PutUint32(b[8:], v)
	binary.LittleEndian.PutUint64(b[16:], uint64(args))
	binary.LittleEndian.PutUint64(b[24:], uint64(args)+8)

	g := must[driver.Graph](t)(driver.GraphCreateCtx(ctx, 0))
	defer driver.GraphDestroyCtx(ctx, g)
	// The node starts with a grid of 2 blocks; the union's parameters set 1.
	first := driver.KernelNodeParams{Func: fn, GridDimX: 2, GridDimY: 1, GridDimZ: 1, BlockDimX: 1, BlockDimY: 1, BlockDimZ: 1,
		KernelParams: (*unsafe.Pointer)(unsafe.Pointer(&b[16]))}
	node := must[driver.GraphNode](t)(driver.GraphAddKernelNodeCtx(ctx, g, nil, &first))

	params := new(driver.GraphNodeParams)
	params.Type = driver.GraphNodeTypeKernel
	k := params.Anon2.Kernel()
	k.Func = fn
	k.GridDimX, k.GridDimY, k.GridDimZ = 1, 1, 1
	k.BlockDimX, k.BlockDimY, k.BlockDimZ = 1, 1, 1
	k.KernelParams = uintptr(args) + 16
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	ok(t, driver.GraphNodeSetParamsCtx(ctx, node, params))
	runtime.GC()
	x := must[driver.GraphExec](t)(driver.GraphInstantiateWithFlagsCtx(ctx, g, 0))
	defer driver.GraphExecDestroyCtx(ctx, x)
	ok(t, driver.GraphLaunchCtx(ctx, x, 0))
	ok(t, driver.CtxSynchronizeCtx(ctx))
	got := make([]uint32, 1)
	ok(t, driver.MemcpyDtoHCtx(ctx, driver.AsBytes(got), dptr))
	if got[0] != v {
		t.Fatalf("the node's kernel stored %#x, want %#x", got[0], v)
	}
	runtime.KeepAlive(params)
}
