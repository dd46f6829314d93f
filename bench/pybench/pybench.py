"""pybench: the Python CUDA bindings in cudagen's side-by-side run.

The operations and flags of bench/cbench (events without timing on a
non-blocking stream; timing events for elapsed time), through one binding,
printed in cbench's format: the median ns per call over RUNS loops of N calls,
the stream drained after each loop, and with CUDAGEN_CLOCK_LIB the median
cycles per call. Run with the GPU machine's own python3:

    python3 bench/pybench/pybench.py LIB [N [RUNS]]

LIB is cuda.core, cupy, cuda.bindings or torch. torch creates its events
lazily, at the first record, so it has no create + destroy figure.

    python3 bench/pybench/pybench.py compile [N]

times cuda.core's Program compiling a small kernel to PTX N times (default
50), beside cuda_test's BenchmarkCompile (the same source through
Device.Compile).

    python3 bench/pybench/pybench.py launch [ROUNDS [B]]

compares, in this process, cuda.bindings' cuLaunchKernel of an empty kernel
of 4 and of 16 64-bit arguments (bench/peers/launch/empty.ptx) with the same
launch from C (cudagen_launch_loop in bench/cbench/libclock.c, which
CUDAGEN_CLOCK_LIB names): ROUNDS rounds of a block of B launches of each,
the order rotated every round, the stream drained after each block; the
median ns per launch and the median of the per-round differences to C.
cuda.bindings takes the arguments as values with their ctypes types (its
typed form) or as the address of a kernelParams array built once (raw);
cuda.core's launch takes numpy.uint64 values (its kernel from the same PTX,
its own stream), beside cuda_test's BenchmarkComputeSideBySide
(Stream.Launch).

    python3 bench/pybench/pybench.py copy [ROUNDS]

copies 256 MiB between page-locked host memory and device memory ROUNDS
times each way (default 9): cuda.core's Buffer.copy_from (a
LegacyPinnedMemoryResource buffer and a device buffer) and
cuda.bindings' cuMemcpyHtoDAsync/cuMemcpyDtoHAsync on the same memory, each
followed by a stream synchronization, interleaved; the medians in GB/s (1e9
bytes), beside cuda_test's BenchmarkCopySideBySide.

    python3 bench/pybench/pybench.py copy-pageable [ROUNDS]

copies 256 MiB between ordinary (pageable) host memory, a numpy array, and
device memory ROUNDS times each way (default 9), the routes the Python
libraries offer from such memory: CuPy's ndarray.set and get, torch's
Tensor.copy_ (a CPU tensor over the same array), cuda.bindings'
cuMemcpyHtoDAsync/cuMemcpyDtoHAsync from the array's address; beside them,
the same copies from page-locked memory (cuMemHostAlloc) through
cuda.bindings: the reference the Go slice's copy is measured against.
Interleaved, each copy followed by a synchronization; medians in GB/s.
"""
import ctypes
import os
import sys
import time


def _clock():
    """The CPU's effective clock in GHz, from bench/cbench/libclock.c (the
    library CUDAGEN_CLOCK_LIB names; tools/gpu-suite.sh builds it), or None.
    Each loop is timed between two measures: its ns per call times their mean
    is its cycles per call, as bench/cbench and bench/peers print them."""
    path = os.environ.get("CUDAGEN_CLOCK_LIB")
    if not path:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        print(f"pybench: no clock: {e}", file=sys.stderr)
        return None
    lib.cudagen_clock_ghz.restype = ctypes.c_double
    return lib.cudagen_clock_ghz


GHZ = _clock()


def bench(name, n, runs, loop, drain):
    v, c, g = [], [], []
    for _ in range(runs):
        g0 = GHZ() if GHZ else 0
        t0 = time.perf_counter_ns()
        loop(n)
        v.append((time.perf_counter_ns() - t0) / n)
        g.append((g0 + GHZ()) / 2 if GHZ else 0)
        c.append(v[-1] * g[-1])
        drain()
    v.sort()
    c.sort()
    g.sort()
    line = f"{name:<14} {v[runs // 2]:8.1f} ns/op (median of {runs} loops of {n})"
    if g[0] > 0:
        line += f" {c[runs // 2]:8.1f} cyc/op at {g[runs // 2]:.2f} GHz"
    print(line, flush=True)


def run_cuda_bindings(n, runs):
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        from cuda import cuda as cu

    def ck(ret):
        err = ret[0]
        if err != cu.CUresult.CUDA_SUCCESS and err != cu.CUresult.CUDA_ERROR_NOT_READY:
            raise RuntimeError(f"cuda.bindings: {err}")
        return ret[1] if len(ret) > 1 else None

    ck(cu.cuInit(0))
    dev = ck(cu.cuDeviceGet(0))
    ctx = ck(cu.cuDevicePrimaryCtxRetain(dev))
    ck(cu.cuCtxSetCurrent(ctx))
    s = ck(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING))
    notiming = cu.CUevent_flags.CU_EVENT_DISABLE_TIMING
    a = ck(cu.cuEventCreate(notiming))
    ta = ck(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DEFAULT))
    tb = ck(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DEFAULT))
    for e in (a, ta, tb):
        ck(cu.cuEventRecord(e, s))
    ck(cu.cuEventSynchronize(tb))
    rec, query, sync, elapsed = cu.cuEventRecord, cu.cuEventQuery, cu.cuEventSynchronize, cu.cuEventElapsedTime
    create, destroy = cu.cuEventCreate, cu.cuEventDestroy
    ok, notready = cu.CUresult.CUDA_SUCCESS, cu.CUresult.CUDA_ERROR_NOT_READY

    def must(err):
        if err != ok and err != notready:
            raise RuntimeError(f"cuda.bindings: {err}")

    def l_record(n):
        for _ in range(n):
            must(rec(a, s)[0])

    def l_query(n):
        for _ in range(n):
            must(query(a)[0])

    def l_record_query(n):
        for _ in range(n):
            must(rec(a, s)[0])
            must(query(a)[0])

    def l_elapsed(n):
        for _ in range(n):
            must(elapsed(ta, tb)[0])

    def l_sync(n):
        for _ in range(n):
            must(sync(a)[0])

    def l_create_destroy(n):
        for _ in range(n):
            err, e = create(notiming)
            must(err)
            must(destroy(e)[0])

    def l_record_sync(n):
        for _ in range(n):
            must(rec(a, s)[0])
            must(sync(a)[0])

    drain = lambda: ck(cu.cuStreamSynchronize(s))
    return [("Record", l_record), ("Query", l_query), ("RecordQuery", l_record_query), ("Elapsed", l_elapsed),
            ("SyncDone", l_sync), ("CreateDestroy", l_create_destroy), ("RecordSync", l_record_sync)], drain


def core_options(EventOptions, timing):
    """cuda.core's EventOptions with timing on or off, whatever this version calls the field."""
    try:
        return EventOptions(enable_timing=timing)
    except TypeError:
        pass
    import dataclasses
    import inspect
    if dataclasses.is_dataclass(EventOptions):
        names = [f.name for f in dataclasses.fields(EventOptions)]
    else:
        names = list(inspect.signature(EventOptions).parameters)
    for name in names:
        if "timing" in name:
            return EventOptions(**{name: (not timing) if "disable" in name else timing})
    raise TypeError(f"cuda.core EventOptions has no timing field among {names}")


def run_cuda_core(n, runs):
    try:
        from cuda.core import Device, EventOptions
    except ImportError:
        from cuda.core.experimental import Device, EventOptions
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    nt = core_options(EventOptions, False)
    a = s.record(options=nt)
    ta = s.record(options=core_options(EventOptions, True))
    tb = s.record(options=core_options(EventOptions, True))
    tb.sync()

    def l_record(n):
        for _ in range(n):
            s.record(a)

    def l_query(n):
        for _ in range(n):
            a.is_done

    def l_record_query(n):
        for _ in range(n):
            s.record(a)
            a.is_done

    def l_elapsed(n):
        for _ in range(n):
            tb - ta

    def l_sync(n):
        for _ in range(n):
            a.sync()

    create = getattr(dev, "create_event", None)

    def l_create_destroy(n):
        for _ in range(n):
            create(nt).close()

    def l_record_sync(n):
        for _ in range(n):
            s.record(a)
            a.sync()

    ops = [("Record", l_record), ("Query", l_query), ("RecordQuery", l_record_query), ("Elapsed", l_elapsed),
           ("SyncDone", l_sync)]
    if create is not None:
        ops.append(("CreateDestroy", l_create_destroy))
    ops.append(("RecordSync", l_record_sync))
    return ops, s.sync


def run_cupy(n, runs):
    import cupy
    cupy.cuda.Device(0).use()
    s = cupy.cuda.Stream(non_blocking=True)
    Event = cupy.cuda.Event
    a = Event(disable_timing=True)
    ta, tb = Event(), Event()
    for e in (a, ta, tb):
        e.record(s)
    tb.synchronize()
    get_elapsed_time = cupy.cuda.get_elapsed_time

    def l_record(n):
        for _ in range(n):
            a.record(s)

    def l_query(n):
        for _ in range(n):
            a.done

    def l_record_query(n):
        for _ in range(n):
            a.record(s)
            a.done

    def l_elapsed(n):
        for _ in range(n):
            get_elapsed_time(ta, tb)

    def l_sync(n):
        for _ in range(n):
            a.synchronize()

    def l_create_destroy(n):
        for _ in range(n):
            Event(disable_timing=True)  # destroyed when its last reference goes, at once

    def l_record_sync(n):
        for _ in range(n):
            a.record(s)
            a.synchronize()

    return [("Record", l_record), ("Query", l_query), ("RecordQuery", l_record_query), ("Elapsed", l_elapsed),
            ("SyncDone", l_sync), ("CreateDestroy", l_create_destroy), ("RecordSync", l_record_sync)], s.synchronize


def run_torch(n, runs):
    import torch
    torch.cuda.set_device(0)
    s = torch.cuda.Stream()
    a = torch.cuda.Event()
    ta, tb = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for e in (a, ta, tb):
        e.record(s)
    tb.synchronize()

    def l_record(n):
        for _ in range(n):
            a.record(s)

    def l_query(n):
        for _ in range(n):
            a.query()

    def l_record_query(n):
        for _ in range(n):
            a.record(s)
            a.query()

    def l_elapsed(n):
        for _ in range(n):
            ta.elapsed_time(tb)

    def l_sync(n):
        for _ in range(n):
            a.synchronize()

    def l_record_sync(n):
        for _ in range(n):
            a.record(s)
            a.synchronize()

    return [("Record", l_record), ("Query", l_query), ("RecordQuery", l_record_query), ("Elapsed", l_elapsed),
            ("SyncDone", l_sync), ("RecordSync", l_record_sync)], s.synchronize


def run_launch(rounds, b):
    """The launch comparison (see the module's text); prints a table."""
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        from cuda import cuda as cu
    path = os.environ.get("CUDAGEN_CLOCK_LIB")
    if not path:
        raise RuntimeError("CUDAGEN_CLOCK_LIB names no library with the C launch loop (bench/cbench/libclock.c)")
    lib = ctypes.CDLL(path)
    loop = lib.cudagen_launch_loop
    loop.restype = ctypes.c_longlong
    loop.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_long]
    # The exported entry point: the one the C side calls.
    entry = ctypes.cast(ctypes.CDLL("libcuda.so.1").cuLaunchKernel, ctypes.c_void_p).value

    def ck(ret):
        if ret[0] != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuda.bindings: {ret[0]}")
        return ret[1] if len(ret) > 1 else None

    ck(cu.cuInit(0))
    dev = ck(cu.cuDeviceGet(0))
    ctx = ck(cu.cuDevicePrimaryCtxRetain(dev))
    ck(cu.cuCtxSetCurrent(ctx))
    s = ck(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "peers", "launch", "empty.ptx"), "rb") as f:
        ptx = ctypes.create_string_buffer(f.read())  # NUL-terminated
    mod = ck(cu.cuModuleLoadData(ctypes.addressof(ptx)))
    launch, sync, ok = cu.cuLaunchKernel, cu.cuStreamSynchronize, cu.CUresult.CUDA_SUCCESS
    core = _core_launcher(ptx.value)

    print(f"kernel launch in one process (empty kernel, 1×1 grid and block, 64-bit arguments): {rounds} rounds of {b} launches per block, the order rotated every round")
    print()
    print("| variant | 4 args ns/launch | − C: median (p25..p75) | 16 args ns/launch | − C: median (p25..p75) |")
    print("|---|---|---|---|---|")
    res = {}
    names = []
    for k, nargs in enumerate((4, 16)):
        fn = ck(cu.cuModuleGetFunction(mod, f"cudagen_empty{nargs}".encode()))
        vals = tuple(range(nargs))
        typed = (vals, (ctypes.c_uint64,) * nargs)
        cvals = (ctypes.c_uint64 * nargs)(*vals)
        cptrs = (ctypes.c_void_p * nargs)(*[ctypes.addressof(cvals) + 8 * i for i in range(nargs)])
        raw = ctypes.addressof(cptrs)
        fa, sa = int(fn), int(s)

        def c_block():
            r = loop(entry, fa, sa, nargs, b)
            if r < 0:
                raise RuntimeError(f"C launch: CUresult {-r}")

        def typed_block():
            for _ in range(b):
                if launch(fn, 1, 1, 1, 1, 1, 1, 0, s, typed, 0)[0] != ok:
                    raise RuntimeError("cuda.bindings: cuLaunchKernel failed")

        def raw_block():
            for _ in range(b):
                if launch(fn, 1, 1, 1, 1, 1, 1, 0, s, raw, 0)[0] != ok:
                    raise RuntimeError("cuda.bindings: cuLaunchKernel failed")

        vs = [("C (cuLaunchKernel, kernelParams built once)", c_block),
              ("cuda.bindings cuLaunchKernel (values and ctypes types)", typed_block),
              ("cuda.bindings cuLaunchKernel (kernelParams address)", raw_block)]
        if core is not None:
            vs.append(("cuda.core launch (numpy.uint64 values)", core(nargs, b)))
        if k == 0:
            names = [n for n, _ in vs]
        for _, blk in vs:  # warm up
            blk()
            ck(sync(s))
            if core is not None:
                core.sync()
        ns = [[] for _ in vs]
        for r in range(rounds):
            for i in range(len(vs)):
                j = (i + r) % len(vs)
                t0 = time.perf_counter_ns()
                vs[j][1]()
                ns[j].append((time.perf_counter_ns() - t0) / b)
                ck(sync(s))
                if core is not None:
                    core.sync()
        for j, (name, _) in enumerate(vs):
            d = [x - c for x, c in zip(ns[j], ns[0])]
            res.setdefault(name, []).append((_q(ns[j], 0.5), _q(d, 0.5), _q(d, 0.25), _q(d, 0.75)))
    for i, name in enumerate(names):
        a, c = res[name]
        if i == 0:
            print(f"| {name} | {a[0]:.1f} | – | {c[0]:.1f} | – |")
        else:
            print(f"| {name} | {a[0]:.1f} | {a[1]:+.1f} ({a[2]:+.1f}..{a[3]:+.1f}) | {c[0]:.1f} | {c[1]:+.1f} ({c[2]:+.1f}..{c[3]:+.1f}) |")
    ck(cu.cuModuleUnload(mod))
    ck(cu.cuStreamDestroy(s))
    return 0


def _core_launcher(ptx):
    """cuda.core's launch of the empty kernels in ptx on a stream of its own:
    a callable (nargs, b) -> a block of b launches, with .sync() draining
    the stream; None, saying why, where cuda.core is missing."""
    try:
        try:
            from cuda.core import Device, LaunchConfig, ObjectCode, launch
        except ImportError:  # cuda.core before 0.4
            from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
        import numpy
    except ImportError as e:
        print(f"pybench: launch: no cuda.core ({e}): its row is left out", file=sys.stderr)
        return None
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    obj = ObjectCode.from_ptx(ptx)
    cfg = LaunchConfig(grid=1, block=1)

    class Launcher:
        def __call__(self, nargs, b):
            kernel = obj.get_kernel(f"cudagen_empty{nargs}")
            args = tuple(numpy.uint64(i) for i in range(nargs))

            def block():
                for _ in range(b):
                    launch(stream, cfg, kernel, *args)
            return block

        def sync(self):
            stream.sync()
    return Launcher()


def _rounds(cases, rounds, timed):
    """Each case's figures: one warm-up each, then rounds rounds of every
    case in order (interleaved), timed(f) a figure per run of f."""
    for _, f in cases:
        timed(f)
    res = {name: [] for name, _ in cases}
    for _ in range(rounds):
        for name, f in cases:
            res[name].append(timed(f))
    return res


def run_copy(rounds):
    """The copy comparison (see the module's text)."""
    try:
        from cuda.core import Device, LegacyPinnedMemoryResource
    except ImportError:  # cuda.core before 0.4
        from cuda.core.experimental import Device, LegacyPinnedMemoryResource
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        from cuda import cuda as cu
    size = 256 << 20
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    dbuf = dev.allocate(size, stream=s)
    hbuf = LegacyPinnedMemoryResource().allocate(size, stream=s)
    s.sync()
    hs = int(s.handle)

    def ck(ret):
        if ret[0] != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuda.bindings: {ret[0]}")

    def timed(f):
        t0 = time.perf_counter_ns()
        f()
        s.sync()
        return size / (time.perf_counter_ns() - t0)  # bytes per ns: GB/s

    cases = [
        ("cuda.bindings cuMemcpyHtoDAsync", lambda: ck(cu.cuMemcpyHtoDAsync(int(dbuf.handle), int(hbuf.handle), size, hs))),
        ("cuda.core Buffer.copy_from, to the device", lambda: dbuf.copy_from(hbuf, stream=s)),
        ("cuda.bindings cuMemcpyDtoHAsync", lambda: ck(cu.cuMemcpyDtoHAsync(int(hbuf.handle), int(dbuf.handle), size, hs))),
        ("cuda.core Buffer.copy_from, to the host", lambda: hbuf.copy_from(dbuf, stream=s)),
    ]
    res = _rounds(cases, rounds, timed)
    print(f"copy 256 MiB, page-locked host memory and device memory, {rounds} rounds (GB/s, medians)")
    for name, _ in cases:
        print(f"copy {name}: {_q(res[name], 0.5):.1f} GB/s")
    dbuf.close()
    hbuf.close()
    return 0


def run_copy_pageable(rounds):
    """The pageable copy comparison (see the module's text)."""
    import numpy as np
    import cupy as cp
    import torch
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        from cuda import cuda as cu
    size = 256 << 20
    n = size // 4
    torch.cuda.init()
    dev_c = cp.empty(n, dtype=cp.float32)
    dev_t = torch.empty(n, dtype=torch.float32, device="cuda")
    host = np.arange(n, dtype=np.float32)
    host_t = torch.from_numpy(host)
    # cuda.bindings on the context torch and CuPy share (the primary one).
    err, ctx = cu.cuCtxGetCurrent()
    if err != cu.CUresult.CUDA_SUCCESS or int(ctx) == 0:
        raise RuntimeError(f"cuda.bindings: no current context ({err})")

    def ck(ret):
        if ret[0] != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuda.bindings: {ret[0]}")
        return ret[1:] if len(ret) > 1 else None

    (pinned,) = ck(cu.cuMemHostAlloc(size, 0))
    (dptr,) = ck(cu.cuMemAlloc(size))
    (st,) = ck(cu.cuStreamCreate(1))
    hs = int(st)
    addr = host.ctypes.data

    def sync_all():
        ck(cu.cuCtxSynchronize())

    def timed(f):
        t0 = time.perf_counter_ns()
        f()
        sync_all()
        return size / (time.perf_counter_ns() - t0)

    cases = [
        ("cuda.bindings cuMemcpyHtoDAsync, page-locked", lambda: ck(cu.cuMemcpyHtoDAsync(dptr, pinned, size, hs))),
        ("cuda.bindings cuMemcpyHtoDAsync, pageable", lambda: ck(cu.cuMemcpyHtoDAsync(dptr, addr, size, hs))),
        ("CuPy ndarray.set, pageable", lambda: dev_c.set(host)),
        ("torch Tensor.copy_, pageable, to the device", lambda: dev_t.copy_(host_t)),
        ("cuda.bindings cuMemcpyDtoHAsync, page-locked", lambda: ck(cu.cuMemcpyDtoHAsync(pinned, dptr, size, hs))),
        ("cuda.bindings cuMemcpyDtoHAsync, pageable", lambda: ck(cu.cuMemcpyDtoHAsync(addr, dptr, size, hs))),
        ("CuPy ndarray.get, pageable", lambda: dev_c.get(out=host)),
        ("torch Tensor.copy_, pageable, to the host", lambda: host_t.copy_(dev_t)),
    ]
    res = _rounds(cases, rounds, timed)
    print(f"copy 256 MiB, pageable (a numpy array) and page-locked host memory and device memory, {rounds} rounds (GB/s, medians)")
    for name, _ in cases:
        print(f"copy {name}: {_q(res[name], 0.5):.1f} GB/s (p10 {_q(res[name], 0.1):.1f}, p90 {_q(res[name], 0.9):.1f})")
    ck(cu.cuMemFreeHost(pinned))
    ck(cu.cuMemFree(dptr))
    ck(cu.cuStreamDestroy(st))
    return 0


def _q(v, p):
    """The p-quantile of v: the element at p of the sorted copy (as bench/peers/launch takes it)."""
    w = sorted(v)
    return w[int(p * (len(w) - 1))]


# COMPILE_SRC is cuda_test's benchCompileSrc (the README's SAXPY kernel): the
# same program, compiled to PTX for the device's architecture by both sides.
COMPILE_SRC = r"""extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}"""


def run_compile(n):
    """cuda.core's Program compiling COMPILE_SRC to PTX N times: the median
    and each compile's microseconds (BenchmarkCompile's figure beside it)."""
    try:
        from cuda.core import Device, Program, ProgramOptions
    except ImportError:  # cuda.core before 0.4
        from cuda.core.experimental import Device, Program, ProgramOptions
    dev = Device()
    dev.set_current()
    arch = "sm_" + "".join(str(x) for x in dev.compute_capability)
    times = []
    for i in range(n + 2):
        t0 = time.perf_counter_ns()
        Program(COMPILE_SRC, code_type="c++", options=ProgramOptions(arch=arch)).compile("ptx")
        if i >= 2:  # the first load NVRTC
            times.append((time.perf_counter_ns() - t0) / 1e3)
    print(f"compile cuda.core n={n} median_us={_q(times, 0.5):.1f} p10_us={_q(times, 0.1):.1f} p90_us={_q(times, 0.9):.1f}")
    return 0


LIBS = {"cuda.core": run_cuda_core, "cupy": run_cupy, "cuda.bindings": run_cuda_bindings, "torch": run_torch}


def main():
    # The side-by-side modes, each given the arguments after its name.
    modes = {
        "launch": lambda a: run_launch(int(a[0]) if a else 101, int(a[1]) if len(a) > 1 else 400),
        "copy": lambda a: run_copy(int(a[0]) if a else 9),
        "copy-pageable": lambda a: run_copy_pageable(int(a[0]) if a else 9),
        "compile": lambda a: run_compile(int(a[0]) if a else 50),
    }
    if len(sys.argv) >= 2 and sys.argv[1] in modes:
        try:
            return modes[sys.argv[1]](sys.argv[2:])
        except Exception as e:  # not installed, or no GPU: say so, and no figures
            print(f"pybench: {sys.argv[1]}: {type(e).__name__}: {e}", file=sys.stderr)
            return 3
    if len(sys.argv) < 2 or sys.argv[1] not in LIBS:
        print(f"usage: pybench.py {{{'|'.join(LIBS)}|launch|compile|copy|copy-pageable}} [N [RUNS]]", file=sys.stderr)
        return 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    try:
        ops, drain = LIBS[sys.argv[1]](n, runs)
    except Exception as e:  # not installed, or no GPU: say so, and no figures
        print(f"pybench: {sys.argv[1]}: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    for name, loop in ops:
        loop(min(n, 1000))  # warm up
        drain()
        bench(name, n, runs, loop, drain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
