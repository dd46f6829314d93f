"""NCCL all-reduce through torch.distributed: the baseline for the Go side's
BenchmarkNCCLAllReduce.

One process per visible GPU (torch.multiprocessing.spawn, backend "nccl",
init through a file in a temporary directory), float32 tensors. Per size:
the result checked once (rank r fills with r+1, every element must be
n(n+1)/2), 5 warm-up all-reduces, then ROUNDS timed rounds of one
all_reduce each, between two torch.cuda.Events on the current stream. The
ranks meet at a barrier before each round; rank 0 prints one line a round:

  allreduce torch bytes=<N> ranks=<n> round=<i> us=<f> algbw=<GB/s> busbw=<GB/s>

algbw = bytes/time, busbw = algbw*2*(n-1)/n (as nccl-tests), GB = 1e9 bytes.

  python bench/multigpu/torch_allreduce.py [-r ROUNDS] [BYTES ...]
"""

import os

# NVLink multicast (NVLS) stays off; set before anything initialises NCCL.
os.environ["NCCL_NVLS_ENABLE"] = "0"

import argparse
import shutil
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [1 << 10, 1 << 20, 64 << 20, 1 << 30]
WARMUP = 5


def worker(rank, n, init, sizes, rounds):
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=init, rank=rank, world_size=n, device_id=dev)
    try:
        for nbytes in sizes:
            t = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)
            t.fill_(rank + 1)
            dist.all_reduce(t)
            want = n * (n + 1) / 2
            bad = (t != want).sum().item()
            if bad:
                raise RuntimeError(f"bytes={nbytes}: rank {rank}: {bad} of {t.numel()} elements are not {want}")
            for _ in range(WARMUP):
                dist.all_reduce(t)
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            for i in range(rounds):
                dist.barrier(device_ids=[rank])
                torch.cuda.synchronize()
                start.record()
                dist.all_reduce(t)
                stop.record()
                stop.synchronize()
                us = start.elapsed_time(stop) * 1e3
                if rank == 0:
                    algbw = nbytes / us / 1e3
                    busbw = algbw * 2 * (n - 1) / n
                    print(f"allreduce torch bytes={nbytes} ranks={n} round={i} us={us:.3f} "
                          f"algbw={algbw:.3f} busbw={busbw:.3f}", flush=True)
            del t
    finally:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description="NCCL all-reduce through torch.distributed")
    p.add_argument("-r", "--rounds", type=int, default=20, help="timed rounds per size")
    p.add_argument("sizes", type=int, nargs="*", help="bytes per rank (multiples of 4)")
    a = p.parse_args()
    sizes = a.sizes or SIZES
    if a.rounds <= 0 or any(s <= 0 or s % 4 for s in sizes):
        p.error("rounds and sizes must be positive, sizes multiples of 4")
    n = torch.cuda.device_count()
    if n == 0:
        print("torch_allreduce: no GPU", file=sys.stderr)
        return 1
    print(f"torch {torch.__version__}, NCCL {torch.cuda.nccl.version()}, {n} GPU(s)", flush=True)
    d = tempfile.mkdtemp(prefix="allreduce-")
    try:
        mp.spawn(worker, args=(n, "file://" + os.path.join(d, "init"), sizes, a.rounds), nprocs=n, join=True)
    except Exception as e:
        print(f"torch_allreduce: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
