"""conv2d on ResNet-style shapes: forward, and forward + both backward passes (input and weight gradients), on tpu
at EXACT (plain f32) and at the TPU DEFAULT precision, next to PyTorch CPU in f32; and each shape's GEMM at the same
FLOPs (M = N*Ho*Wo, K = Cin/groups*kh*kw, N = Cout) on tpu, so convolution is judged against the matmul it
amounts to.

    python3 bench/conv.py [--repeats R] [--threads T] [--batch B]

GFLOP/s count 2*M*K*N per pass (a backward step is two such passes). tpu runs in debug mode (each call runs
when made). The PyTorch CPU column and the tpu columns run in separate child processes (bench/timing.py
run_groups). Run on a quiet machine; the load average is printed.
"""
import argparse
import os
import sys

import torch

import torchtpu
from timing import answer_group, median_ms, run_groups

# (name, Cin, H, W, Cout, kernel, stride, groups)
SHAPES = [
    ("res2 3x3 64", 64, 56, 56, 64, 3, 1, 1),
    ("res2 1x1 256->64", 256, 56, 56, 64, 1, 1, 1),
    ("res2 1x1 64->256", 64, 56, 56, 256, 1, 1, 1),
    ("res3 3x3 128 s2", 128, 56, 56, 128, 3, 2, 1),
    ("res4 3x3 256", 256, 14, 14, 256, 3, 1, 1),
    ("depthwise 3x3 64", 64, 56, 56, 64, 3, 1, 64),
]


def gemm_dims(batch, cin, h, w, cout, k, stride, groups):
    ho, wo = (h + 2 * (k // 2) - k) // stride + 1, (w + 2 * (k // 2) - k) // stride + 1
    return batch * ho * wo, cin // groups * k * k, cout  # per group: N = cout / groups, groups of them


def measure(group, args):
    g = torch.Generator().manual_seed(0)
    dev = "cpu" if group == "cpu" else "tpu"
    res = {}
    for name, cin, h, w, cout, k, stride, groups in SHAPES:
        x = torch.randn(args.batch, cin, h, w, generator=g).to(dev)
        wt = (torch.randn(cout, cin // groups, k, k, generator=g) * 0.1).to(dev)
        xg, wg = x.clone().requires_grad_(), wt.clone().requires_grad_()
        out_shape = torch.nn.functional.conv2d(x, wt, stride=stride, padding=k // 2, groups=groups).shape
        gy = torch.randn(out_shape, generator=g).to(dev)
        M, K, N = gemm_dims(args.batch, cin, h, w, cout, k, stride, groups)
        gflop = 2.0 * M * K * N / 1e9  # N counts every group's outputs: the groups' GEMMs together

        def fwd():
            torch.nn.functional.conv2d(x, wt, stride=stride, padding=k // 2, groups=groups)
            if dev == "tpu":
                torch.tpu.synchronize()

        def fwd_bwd():
            xg.grad = wg.grad = None
            torch.nn.functional.conv2d(xg, wg, stride=stride, padding=k // 2, groups=groups).backward(gy)
            if dev == "tpu":
                torch.tpu.synchronize()

        cols = {}
        precisions = [("cpu", None)] if dev == "cpu" else [("EXACT", "exact"), ("DEFAULT", "default")]
        for col, prec in precisions:
            if prec:
                torchtpu.set_precision(prec)
            cols[f"{col} fwd"] = gflop / median_ms(fwd, args.repeats) * 1e3
            cols[f"{col} fwd+bwd"] = 3 * gflop / median_ms(fwd_bwd, args.repeats) * 1e3
        if dev == "tpu":  # the GEMM of the same FLOPs (one group's worth per group), at EXACT
            torchtpu.set_precision("exact")
            a = torch.randn(groups, M, K, generator=g).to(dev)
            b = torch.randn(groups, K, N // groups, generator=g).to(dev)

            def gemm():
                torch.bmm(a, b)
                torch.tpu.synchronize()
            cols["EXACT gemm"] = gflop / median_ms(gemm, args.repeats) * 1e3
        res[name] = cols
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    ap.add_argument("--group", choices=["cpu", "tpu"], help=argparse.SUPPRESS)  # a child process's share
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads or torchtpu._C.host_num_threads())
    if answer_group(args, measure):
        return 0
    load = os.getloadavg()[0]
    res = run_groups(os.path.abspath(__file__), ["cpu", "tpu"],
                     ["--repeats", str(args.repeats), "--batch", str(args.batch), "--threads", str(args.threads)])
    print(f"torch {torch.__version__}, torch CPU threads {torch.get_num_threads()}, tpu host threads "
          f"{torchtpu._C.host_num_threads()}, batch {args.batch}, load average {load:.2f}")
    print("GFLOP/s of conv2d (padding k//2); fwd+bwd = forward, input gradient, weight gradient; ratios > 1 mean "
          "tpu is faster; conv/gemm = EXACT conv forward / EXACT GEMM of the same FLOPs")
    hdr = (f"{'shape':<18} {'cpu fwd':>8} {'EXACT':>7} {'DEFAULT':>8} | {'cpu f+b':>8} {'EXACT':>7} {'DEFAULT':>8} | "
           f"{'EX/cpu f+b':>10} {'DEF/cpu f+b':>11} {'conv/gemm':>9}")
    print(hdr)
    print("-" * len(hdr))
    for name, *_ in SHAPES:
        r = res[name]
        print(f"{name:<18} {r['cpu fwd']:8.0f} {r['EXACT fwd']:7.0f} {r['DEFAULT fwd']:8.0f} | "
              f"{r['cpu fwd+bwd']:8.0f} {r['EXACT fwd+bwd']:7.0f} {r['DEFAULT fwd+bwd']:8.0f} | "
              f"{r['EXACT fwd+bwd'] / r['cpu fwd+bwd']:9.2f}x {r['DEFAULT fwd+bwd'] / r['cpu fwd+bwd']:10.2f}x "
              f"{r['EXACT fwd'] / r['EXACT gemm']:8.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
