"""What keeping a weight's packed GEMM form across calls saves (csrc/drivers/host/host_packcache.c): the
all-MiniLM-L6-v2 forward (no grad, the demo's sentences) in fused mode at DEFAULT precision and in exact f32, with
the cache off (TORCHTPU_HOST_PACK_CACHE_BYTES=0) and on (default), each in its own process, the two interleaved,
best of rounds; PyTorch CPU eager in exact f32 measured in the same run as the peer.

    HF_HUB_OFFLINE=1 python3 bench/pack_cache.py [--rounds 2] [--repeats 30]

Run on a quiet machine; the load average is printed.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def child(precision, device, repeats):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    sys.path.insert(0, HERE)
    import torch

    import torchtpu
    from demo import SENTENCES, embed, model_dir
    from timing import median_ms
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    d = model_dir()
    enc = dict(AutoTokenizer.from_pretrained(d)(SENTENCES, padding=True, return_tensors="pt"))
    model = AutoModel.from_pretrained(d).eval().to(device)
    enc = {k: v.to(device) for k, v in enc.items()}
    if device == "tpu":
        torchtpu.set_eager_mode("fused")
        torchtpu.set_precision(precision)
    with torch.no_grad():
        print(median_ms(lambda: embed(model, enc).cpu(), repeats, warmup=3))


def measure(precision, device, cache, repeats):
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    if cache is not None:
        env["TORCHTPU_HOST_PACK_CACHE_BYTES"] = cache
    out = subprocess.run([sys.executable, __file__, "--child", precision, device, str(repeats)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    print(f"MiniLM forward, fused, ms (median of {args.repeats}, best of {args.rounds} rounds); "
          f"load average {os.getloadavg()[0]:.2f}")
    cpu = min(measure("exact", "cpu", None, args.repeats) for _ in range(args.rounds))
    print(f"PyTorch CPU eager (f32): {cpu:.2f}")
    print(f"{'precision':<10} {'cache off':>10} {'cache on':>9} {'off/on':>7} {'on vs cpu':>10}")
    for precision in ("default", "exact"):
        best = {"0": float("inf"), None: float("inf")}
        for _ in range(args.rounds):
            for cache in ("0", None):
                best[cache] = min(best[cache], measure(precision, "tpu", cache, args.repeats))
        off, on = best["0"], best[None]
        print(f"{precision:<10} {off:10.2f} {on:9.2f} {off / on:6.2f}x {cpu / on:9.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
