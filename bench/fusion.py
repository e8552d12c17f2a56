"""Fused eager mode against strict mode, PyTorch CPU eager and PyTorch CPU torch.compile (Inductor), on
elementwise-heavy work, measured in one run.

    python3 bench/fusion.py [--repeats R] [--iters N] [--no-inductor] [--only NAME]

Each workload runs N steps per repeat; a step ends with a sync point (torch.tpu.synchronize() on tpu), as a training
loop's loss.item() does, so fused mode cuts its window once per step. Figures are the median over R repeats of the
time per step, after warm-up steps (compiles excluded); the repeats interleave the columns (cpu, inductor, strict,
fused, cpu, ...) so that a slow spell of a shared machine does not favour one of them. Ratios > 1 mean the first is faster. Run on a quiet machine;
the load average is printed with the figures.

The PyTorch CPU columns (cpu eager, inductor) and the tpu columns (strict, fused) run in two separate child
processes, interleaved within each: PyTorch's OpenMP workers spin-wait on both cores for a while after every CPU op,
and in one process they stole the cores from the tpu columns' threads (strict mode, with its stream worker, far more
than fused: strict measured 1.6-2x slower next to them, which made fused/strict look like 1.5-1.8x when it is ~1.0-1.3x).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

import torchtpu
from timing import run_groups


def gelu_mlp(dev):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 256, generator=g).to(dev)
    w1, b1 = (torch.randn(256, 1024, generator=g) * 0.05).to(dev), torch.randn(1024, generator=g).to(dev)
    w2, b2 = (torch.randn(1024, 256, generator=g) * 0.05).to(dev), torch.randn(256, generator=g).to(dev)

    def step():
        h = torch.nn.functional.gelu(x @ w1 + b1)
        return x + (h @ w2 + b2)
    return step


def layernorm_residual(dev):
    g = torch.Generator().manual_seed(1)
    x, r = torch.randn(128, 768, generator=g).to(dev), torch.randn(128, 768, generator=g).to(dev)
    w, b = torch.randn(768, generator=g).to(dev), torch.randn(768, generator=g).to(dev)

    def step():
        h = x + r * 0.5
        return torch.nn.functional.layer_norm(h, (768,), w, b) + h
    return step


def masked_softmax(dev):
    g = torch.Generator().manual_seed(2)
    s = torch.randn(4, 8, 64, 64, generator=g).to(dev)
    mask = torch.ones(64, 64, dtype=torch.bool).triu(1).to(dev)

    def step():
        a = (s * 0.125).masked_fill(mask, float("-inf"))
        return torch.softmax(a, dim=-1) * 1.1
    return step


def adamw(dev):
    g = torch.Generator().manual_seed(3)
    params = [torch.randn(64, 64, generator=g).to(dev).requires_grad_() for _ in range(40)]
    for p in params:
        p.grad = torch.randn(64, 64, generator=g).to(dev)
    opt = torch.optim.AdamW(params, lr=1e-3, foreach=False)

    def step():
        opt.step()
        return params[0]
    return step


def adamw_foreach(dev):
    """torch.optim.AdamW's default on tpu (foreach: each op over every tensor, then the next) over the small GPT's
    parameter shapes (bench/models.py), which differ in size."""
    g = torch.Generator().manual_seed(4)
    shapes = [(512, 128), (64, 128)] + [(128,), (128,), (384, 128), (384,), (128, 128), (128,), (128,), (128,),
                                        (512, 128), (512,), (128, 512), (128,)] * 4 + [(128,), (128,)]
    params = [torch.randn(*s, generator=g).to(dev).requires_grad_() for s in shapes]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g).to(dev)
    opt = torch.optim.AdamW(params, lr=1e-3)

    def step():
        opt.step()
        return params[0]
    return step


WORKLOADS = {"gelu_mlp": gelu_mlp, "layernorm_residual": layernorm_residual, "masked_softmax": masked_softmax,
             "adamw": adamw, "adamw_foreach": adamw_foreach}


def run_steps(step, sync, iters):
    """Seconds per step over `iters` steps."""
    t0 = time.perf_counter()
    for _ in range(iters):
        out = step()  # held across the sync: fused mode computes only what something references
        sync()
        del out
    return (time.perf_counter() - t0) / iters


def no_sync():
    pass


def measure(name, group, a):
    """{column: median seconds per step} for one workload's columns of one group ("cpu": cpu eager and Inductor;
    "tpu": strict and fused), in this process."""
    make = WORKLOADS[name]
    # (column, eager mode or None for the CPU, step, sync); every column is built and warmed first, then the
    # repeats interleave the columns, so a slow spell of a shared machine hits all of them alike
    cols = []
    if group == "cpu":
        cols.append(("cpu", None, make("cpu"), no_sync))
        if not a.no_inductor:
            torch._dynamo.reset()
            cols.append(("inductor", None, torch.compile(make("cpu")), no_sync))
    else:
        for mode in ("strict", "fused"):
            torchtpu.set_eager_mode(mode)
            cols.append((mode, mode, make("tpu"), torch.tpu.synchronize))
    times = {c[0]: [] for c in cols}
    for col, mode, step, sync in cols:
        if mode:
            torchtpu.set_eager_mode(mode)
        run_steps(step, sync, 5)  # warm-up: compiles, caches, allocator
    for _ in range(a.repeats):
        for col, mode, step, sync in cols:
            if mode:
                torchtpu.set_eager_mode(mode)
            times[col].append(run_steps(step, sync, a.iters))
    return {c: statistics.median(t) for c, t in times.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--group", choices=["cpu", "tpu"], help=argparse.SUPPRESS)  # a child process's share
    a = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    torchtpu.set_precision("exact")  # plain f32 matmuls, as PyTorch CPU's (TPU DEFAULT: bench/matmul.py, linear.py)
    names = [n for n in WORKLOADS if not a.only or n in a.only.split(",")]
    if a.group:
        print(json.dumps({n: measure(n, a.group, a) for n in names}))
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; torch threads "
          f"{torch.get_num_threads()}, host driver threads {torchtpu._C.host_num_threads()}")
    res = run_groups(os.path.abspath(__file__), ("cpu", "tpu"), ["--only", ",".join(names), "--repeats",
                     str(a.repeats), "--iters", str(a.iters)] + (["--no-inductor"] if a.no_inductor else []))
    print(f"{'workload':<20} {'cpu eager':>10} {'inductor':>10} {'strict':>10} {'fused':>10}   "
          f"{'fused/strict':>12} {'fused/inductor':>14} {'fused/cpu':>9}")
    for name in names:
        r = res[name]
        cpu, ind = r["cpu"], r.get("inductor", float("nan"))
        us = lambda t: f"{t * 1e6:9.0f}u"  # noqa: E731
        print(f"{name:<20} {us(cpu)} {us(ind)} {us(r['strict'])} {us(r['fused'])}   "
              f"{r['strict'] / r['fused']:11.2f}x {ind / r['fused']:13.2f}x {cpu / r['fused']:8.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
