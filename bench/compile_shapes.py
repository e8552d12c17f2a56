"""torch.compile on tpu fed 30 sequence lengths: how many graphs Dynamo compiles, how many programs the runtime
compiles for them, and the time, for a small GPT's forward (no grad) under each way of compiling shapes.

    python3 bench/compile_shapes.py [--lengths 30]

Rows: `dynamic=False` (a graph per length; Dynamo's recompile limit raised so that it never falls back to eager),
the default (Dynamo makes the length symbolic at its second value: one more graph), `dynamic=True` (symbolic from
the start), and `mark_dynamic(max=)`: the length bounded, padded to power-of-two buckets (one program per bucket
instead of one per length; torchtpu/_buckets.py). "graph programs" counts the programs compiled for the graphs;
"all programs" adds everything else the loop compiled (reading each result back, whose shape is the length's).
Each row starts with an empty cache. A fused-eager table does the same without torch.compile: per size, and with
`torchtpu.mark_dynamic(idx, 1, max=)` (each fused window that carries the length runs as its bucket's program;
csrc/ir/bucket.c), with the windows padded and refused, and the forward's time once warm at a bucket's edge and
inside a bucket. A further table times a 2-layer GPT training step once compiled, at a length
that is a bucket's edge (64) and one inside a bucket (50, padded to 64), per-size graph vs padded graph: the masks
the padding needs, and the padded work, are what buckets cost. Run on a quiet machine; the load average is printed.
"""
import argparse
import os
import sys
import time

import torch

import torchtpu

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))


def run(model, lengths, dynamic, bound):
    torch._dynamo.reset()
    torch.tpu._clear_cache()  # each row starts cold: its programs are compiled, not found from the row before
    compiled = torch.compile(model, dynamic=dynamic)
    stats = torchtpu._compile.compile_stats
    g0, p0, c0 = stats()["graphs"], stats()["programs"], torchtpu.metrics()["compiles"]
    t0 = time.perf_counter()
    with torch.no_grad():
        for n in lengths:
            idx = torch.randint(0, 512, (4, n)).to("tpu")
            if bound:
                torch._dynamo.mark_dynamic(idx, 1, min=1, max=bound)
            compiled(idx)[0].cpu()
    seconds = time.perf_counter() - t0
    return (stats()["graphs"] - g0, stats()["programs"] - p0, torchtpu.metrics()["compiles"] - c0, seconds)


def run_eager(model, lengths, bound):
    """Fused eager mode over the lengths: (programs compiled, windows padded, windows refused, seconds)."""
    torch.tpu._clear_cache()
    torch.tpu.synchronize()
    torchtpu.reset_metrics()
    t0 = time.perf_counter()
    with torch.no_grad(), torchtpu.eager_mode("fused"):
        for n in lengths:
            idx = torch.randint(0, 512, (4, n)).to("tpu")
            if bound:
                torchtpu.mark_dynamic(idx, 1, max=bound)
            model(idx)[0].cpu()
    seconds = time.perf_counter() - t0
    m = torchtpu.metrics()
    return m["compiles"], m["bucketed_windows"], m["bucket_refused"], seconds


def steady_eager(model, lengths_at, bound, reps):
    """Milliseconds per fused-eager forward once warm, per size vs marked, at each length."""
    rows = []
    with torch.no_grad(), torchtpu.eager_mode("fused"):
        for n in lengths_at:
            row = []
            for marked in (False, True):
                idx = torch.randint(0, 512, (4, n)).to("tpu")
                if marked:
                    torchtpu.mark_dynamic(idx, 1, max=bound)
                for _ in range(3):
                    model(idx)[0].cpu()
                best = float("inf")
                for _ in range(5):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        out = model(idx)[0]
                    out.cpu()
                    best = min(best, (time.perf_counter() - t0) / reps * 1e3)
                row.append(best)
            rows.append((n, *row))
    return rows


def steady(lengths_at, bound, steps):
    """Milliseconds per GPT training step after warm-up, per-size graph vs padded graph, at each length."""
    from tiny_gpt import GPTConfig, TinyGPT

    rows = []
    for n in lengths_at:
        row = []
        for padded in (False, True):
            torch._dynamo.reset()
            torch.manual_seed(0)
            model = TinyGPT(GPTConfig(vocab_size=512, block_size=128, n_layer=2, n_head=4, n_embd=128,
                                      dropout=0.0)).to("tpu")
            f = torch.compile(model, dynamic=None if padded else False)
            idx = torch.randint(0, 512, (8, n)).to("tpu")
            if padded:
                torch._dynamo.mark_dynamic(idx, 1, min=1, max=bound)

            def step():
                model.zero_grad(set_to_none=True)
                _, loss = f(idx, idx)
                loss.backward()
                return loss

            for _ in range(3):
                step().item()
            best = float("inf")
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(steps):
                    loss = step()
                loss.item()
                best = min(best, (time.perf_counter() - t0) / steps * 1e3)
            row.append(best)
        rows.append((n, *row))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", type=int, default=30)
    ap.add_argument("--steps", type=int, default=10, help="training steps per timing (steady-state table)")
    args = ap.parse_args(argv)
    from tiny_gpt import GPTConfig, TinyGPT

    torch._dynamo.config.recompile_limit = 10 * args.lengths
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=512, block_size=128, n_layer=2, n_head=4, n_embd=128)
    model = TinyGPT(cfg).to("tpu").eval()
    lengths = [8 + 3 * i for i in range(args.lengths)]
    bound = cfg.block_size - 1  # the model slices its causal mask to the length: Dynamo specializes the full size
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, load average {os.getloadavg()[0]:.2f}")
    print(f"small GPT forward (2L d128, batch 4), {len(lengths)} lengths {lengths[0]}..{lengths[-1]}, one call each\n")
    print(f"{'compile':<26} {'Dynamo graphs':>13} {'graph programs':>14} {'all programs':>12} {'seconds':>8}")
    for name, dynamic, b in (("dynamic=False", False, None), ("default", None, None), ("dynamic=True", True, None),
                             (f"mark_dynamic(max={bound})", None, bound)):
        graphs, programs, compiles, seconds = run(model, lengths, dynamic, b)
        print(f"{name:<26} {graphs:>13} {programs:>14} {compiles:>12} {seconds:8.2f}")
    print(f"\nfused eager (no torch.compile), the same forward and lengths; load average {os.getloadavg()[0]:.2f}")
    print(f"{'eager':<26} {'programs':>13} {'padded windows':>14} {'refused':>12} {'seconds':>8}")
    for name, b in (("per size", None), (f"mark_dynamic(max={bound})", bound)):
        compiles, padded, refused, seconds = run_eager(model, lengths, b)
        print(f"{name:<26} {compiles:>13} {padded:>14} {refused:>12} {seconds:8.2f}")
    print(f"\nwhat the padding costs in fused eager: ms per forward (batch 4) once warm, best of 5 x {args.steps}")
    print(f"{'length':>6} {'per size':>15} {'marked':>13} {'ratio':>6}")
    for n, plain, padded in steady_eager(model, [64, 50], bound, args.steps):
        print(f"{n:>6} {plain:15.2f} {padded:13.2f} {padded / plain:6.2f}")
    print(f"\nwhat the padding costs once compiled: ms per training step (batch 8) after warm-up, best of 5 x "
          f"{args.steps}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'length':>6} {'per-size graph':>15} {'padded graph':>13} {'ratio':>6}")
    for n, plain, padded in steady([64, 50], bound, args.steps):
        print(f"{n:>6} {plain:15.2f} {padded:13.2f} {padded / plain:6.2f}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
