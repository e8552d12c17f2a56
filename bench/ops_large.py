"""Throughput of the non-matmul ops that dominate a BERT/GPT forward, at MiniLM's 32x128 batch sizes, and of the
small-shape ops of a GPT training step (bench/models.py's 8x64 tokens, 4 heads of 32: attention's batched matmuls,
a causal softmax, the loss, bias gradients).

    python3 bench/ops_large.py [--repeats R] [--threads T]

tpu in debug mode (synchronous, so each time is the op's own), vs PyTorch CPU eager. Milliseconds per call
(median) and nanoseconds per output element on tpu.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

import torchtpu
from timing import median_ms


def cases():
    g = torch.Generator().manual_seed(0)
    h = torch.randn(32, 128, 1536, generator=g)      # MLP hidden
    s = torch.randn(32, 12, 128, 128, generator=g)   # attention scores
    x = torch.randn(32, 128, 384, generator=g)       # residual stream
    w, b = torch.randn(384, generator=g), torch.randn(384, generator=g)
    mask = torch.rand(32, 1, 1, 128, generator=g) > 0.1
    q, k = torch.randn(32, 64, 32, generator=g), torch.randn(32, 64, 32, generator=g)
    att = torch.randn(32, 64, 64, generator=g).softmax(-1)
    q14, k14 = torch.randn(96, 14, 32, generator=g), torch.randn(96, 14, 32, generator=g)
    causal = torch.randn(8, 4, 64, 64, generator=g).masked_fill(torch.ones(64, 64, dtype=torch.bool).triu(1), float("-inf"))
    logits, tgt = torch.randn(512, 512, generator=g), torch.randint(0, 512, (512,), generator=g)
    g2 = torch.randn(512, 384, generator=g)
    return [
        ("gelu (erf) 32x128x1536", (h,), lambda t: F.gelu(t)),
        ("gelu (tanh) 32x128x1536", (h,), lambda t: F.gelu(t, approximate="tanh")),
        ("softmax 32x12x128x128", (s,), lambda t: torch.softmax(t, -1)),
        ("layer_norm 32x128x384", (x, w, b), lambda t, ww, bb: F.layer_norm(t, (384,), ww, bb)),
        ("add 32x128x384", (x, x), lambda a, c: a + c),
        ("where(mask) 32x12x128x128", (mask, s), lambda m, t: torch.where(m, t, -1e4)),
        ("view+contiguous (transpose)", (s,), lambda t: t.transpose(1, 2).contiguous()),
        ("reshape of contiguous", (h,), lambda t: t.reshape(32 * 128, 1536)),
        ("bmm q.k^T 32x64x32x64", (q, k), lambda a, c: a @ c.transpose(1, 2)),
        ("bmm att.v 32x64x64x32", (att, k), lambda a, c: a @ c),
        ("bmm MiniLM 96x14x32x14", (q14, k14), lambda a, c: a @ c.transpose(1, 2)),
        ("softmax causal 8x4x64x64", (causal,), lambda t: torch.softmax(t, -1)),
        ("log_softmax 512x512", (logits,), lambda t: torch.log_softmax(t, -1)),
        ("cross_entropy 512x512", (logits, tgt), lambda t, y: F.cross_entropy(t, y)),
        ("sum(0) bias grad 512x384", (g2,), lambda t: t.sum(0)),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads or torchtpu._C.host_num_threads())
    torchtpu.set_precision("exact")  # plain f32 matmuls, as PyTorch CPU's (TPU DEFAULT: bench/matmul.py, linear.py)
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, torch CPU threads {torch.get_num_threads()}, "
          f"tpu host threads {torchtpu._C.host_num_threads()}, load average {os.getloadavg()[0]:.2f}")
    hdr = f"{'op':<28} {'cpu ms':>8} {'tpu ms':>8} {'tpu/cpu':>8} {'tpu ns/elem':>11} {'max|diff|':>9}"
    print(hdr)
    print("-" * len(hdr))
    old = torchtpu.get_eager_mode()
    torchtpu.set_eager_mode("debug")
    try:
        for name, cpu_args, fn in cases():
            tpu_args = tuple(a.to("tpu") for a in cpu_args)
            ref = fn(*cpu_args)
            got = fn(*tpu_args).cpu()
            diff = (got.double() - ref.double()).abs().max().item()
            cpu = median_ms(lambda: fn(*cpu_args), args.repeats)
            tpu = median_ms(lambda: fn(*tpu_args), args.repeats)
            print(f"{name:<28} {cpu:8.2f} {tpu:8.2f} {tpu / cpu:7.1f}x {tpu * 1e6 / ref.numel():11.2f} "
                  f"{diff:9.1e}", flush=True)
    finally:
        torchtpu.set_eager_mode(old)
    fb = torchtpu.metrics()["fallbacks"]
    if fb:
        print(f"\nCPU fallbacks: {fb}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
