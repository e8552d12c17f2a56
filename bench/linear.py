"""nn.Linear's matmul (y = x @ W.t(), the weight stored [out, in]) at the shapes of bench/models.py's GPT step
(8 x 64 tokens, d 128) and MiniLM forward (8 x 14 tokens, d 384): GFLOP/s on tpu in exact f32 and in TPU DEFAULT
precision (bf16 products, f32 sums) next to PyTorch CPU in f32, debug mode (each matmul runs when called).

    python3 bench/linear.py [--repeats R] [--inner N] [--threads T]

The PyTorch CPU column and the tpu columns run in two child processes (bench/timing.py run_groups): PyTorch's OpenMP
workers spin-wait on both cores after every CPU op and would slow the tpu columns in one process. Run on a quiet
machine; the load average is printed.
"""
import argparse
import os
import sys

import torch

import torchtpu
from timing import answer_group, median_ms, run_groups

PRECISION_DEFAULT, PRECISION_FP32 = 0, 3  # tt_precision in csrc/include/tt_ir.h

# (name, M tokens, K in, N out)
SHAPES = [
    ("gpt qkv", 512, 128, 384),
    ("gpt attn proj", 512, 128, 128),
    ("gpt mlp up", 512, 128, 512),
    ("gpt mlp down", 512, 512, 128),
    ("gpt lm head", 512, 128, 512),
    ("minilm qkv (each)", 112, 384, 384),
    ("minilm mlp up", 112, 384, 1536),
    ("minilm mlp down", 112, 1536, 384),
]


def measure(group, args):
    g = torch.Generator().manual_seed(0)
    dev = "cpu" if group == "cpu" else "tpu"
    res = {}
    for name, m, k, n in SHAPES:
        x, w = torch.randn(m, k, generator=g).to(dev), torch.randn(n, k, generator=g).to(dev)

        def run():
            for _ in range(args.inner):
                torch.nn.functional.linear(x, w)
            if dev == "tpu":
                torch.tpu.synchronize()

        gflop = 2.0 * m * k * n * args.inner / 1e9
        if dev == "cpu":
            res[name] = {"cpu": gflop / median_ms(run, args.repeats) * 1e3}
            continue
        cols = {}
        for col, prec in (("tpu f32", PRECISION_FP32), ("tpu DEFAULT", PRECISION_DEFAULT)):
            torchtpu._C.set_precision(prec)
            cols[col] = gflop / median_ms(run, args.repeats) * 1e3
        res[name] = cols
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--inner", type=int, default=20, help="matmuls per timed run")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    ap.add_argument("--group", choices=["cpu", "tpu"], help=argparse.SUPPRESS)  # a child process's share
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads or torchtpu._C.host_num_threads())
    if answer_group(args, measure):
        return 0
    load = os.getloadavg()[0]
    fwd = ["--repeats", str(args.repeats), "--inner", str(args.inner), "--threads", str(args.threads)]
    res = run_groups(os.path.abspath(__file__), ["cpu", "tpu"], fwd)
    print(f"torch {torch.__version__}, torch CPU threads {torch.get_num_threads()}, tpu host threads "
          f"{torchtpu._C.host_num_threads()}, load average {load:.2f}")
    print("GFLOP/s of y = x @ W.t() (W stored [out, in]); ratios > 1 mean tpu is faster")
    hdr = f"{'shape':<20} {'M x K x N':>16} {'cpu f32':>8} {'tpu f32':>8} {'DEFAULT':>8} | {'f32/cpu':>7} {'DEF/cpu':>7}"
    print(hdr)
    print("-" * len(hdr))
    for name, m, k, n in SHAPES:
        r = res[name]
        print(f"{name:<20} {f'{m}x{k}x{n}':>16} {r['cpu']:8.0f} {r['tpu f32']:8.0f} {r['tpu DEFAULT']:8.0f} | "
              f"{r['tpu f32'] / r['cpu']:6.2f}x {r['tpu DEFAULT'] / r['cpu']:6.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
