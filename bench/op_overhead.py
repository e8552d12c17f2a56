"""Per-op eager overhead on tpu (debug, strict and fused modes) next to PyTorch CPU eager, in microseconds per op.

    python3 bench/op_overhead.py [--iters N] [--repeats R] [--threads T]

For each small op: N calls in a loop after a warm-up, median over R repeats.
  cpu            PyTorch CPU eager, same tensors on the CPU.
  debug          tpu, each op runs synchronously on the calling thread.
  strict launch  tpu, asynchronous: time of N launches only (the launch rate the Python thread sees).
  strict +sync   the same N launches plus one torch.tpu.synchronize() at the end (throughput).
  strict no-sig  strict launch with the signature cache off (TORCHTPU_SIGNATURE_CACHE=0): every op lowers, builds
                 and hashes its program again, as before the cache existed.
  strict no-line strict launch without noting the user's file:line per op (torchtpu._C.set_op_lines(False)), which
                 a deferred op's error names; "line cost" is what noting it adds to a strict launch.
  strict no-brw  strict launch with the hot ops' unboxed kernels referencing their tensor arguments as c10's boxing
                 does (torchtpu._C.set_borrow_args(False)): in torch 2.13 that takes the GIL twice per op when
                 Python held the only reference; "borrow gain" is what borrowing them saves a strict launch.
  fused record   tpu, deferred: time of N ops recorded into the window (results unused, so the cut runs nothing:
                 this is the recording cost alone).
"""
import argparse
import os
import statistics
import sys
import time

import torch

import torchtpu


def make_cases():
    """(name, inputs builder, fn). Inputs are built once on the CPU and copied to the device."""
    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, generator=g)

    return [
        ("add 16 f32", (r(16), r(16)), lambda a, b: torch.add(a, b)),
        ("mul 16 f32", (r(16), r(16)), lambda a, b: torch.mul(a, b)),
        ("relu 16 f32", (r(16),), lambda a: torch.relu(a)),
        ("sum 16 f32", (r(16),), lambda a: torch.sum(a)),
        ("add 64x64 f32", (r(64, 64), r(64, 64)), lambda a, b: torch.add(a, b)),
        ("matmul 64x64 f32", (r(64, 64), r(64, 64)), lambda a, b: torch.matmul(a, b)),
    ]


def loop_time(fn, args, iters, sync=None):
    """Seconds for `iters` calls, and (if sync is given) seconds including one final sync."""
    t0 = time.perf_counter()
    for _ in range(iters):
        fn(*args)
    t1 = time.perf_counter()
    if sync is not None:
        sync()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t0


def measure(fn, args, iters, repeats, sync=None):
    """Median microseconds per op: (launch only, including final sync)."""
    launch, total = [], []
    for _ in range(repeats):
        if sync is not None:
            sync()  # start each repeat with an empty queue
        a, b = loop_time(fn, args, iters, sync)
        launch.append(a * 1e6 / iters)
        total.append(b * 1e6 / iters)
    return statistics.median(launch), statistics.median(total)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=1000, help="ops per timed loop")
    ap.add_argument("--repeats", type=int, default=7, help="timed loops per measurement (median)")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    args = ap.parse_args(argv)

    import warnings

    warnings.filterwarnings("ignore", message="torchtpu: operator")
    threads = args.threads or torchtpu._C.host_num_threads()
    torch.set_num_threads(threads)
    torchtpu.set_precision("exact")  # plain f32 matmuls, as PyTorch CPU's (TPU DEFAULT: bench/matmul.py, linear.py)
    sync = torch.tpu.synchronize
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, torch CPU threads {torch.get_num_threads()}, "
          f"tpu host threads {torchtpu._C.host_num_threads()}, load average {os.getloadavg()[0]:.2f}")
    print(f"{args.iters} ops per loop, median of {args.repeats} loops, microseconds per op\n")

    hdr = (f"{'op':<18} {'cpu':>8} {'debug':>8} {'strict':>8} {'strict':>8} {'strict':>8} {'strict':>8} "
           f"{'strict':>8} {'fused':>8} | {'debug/cpu':>9} {'launch/cpu':>10} {'+sync/cpu':>9} {'no-sig/cpu':>10} "
           f"{'fused/cpu':>9} {'line cost':>9} {'borrow gain':>11}")
    print(hdr)
    print(f"{'':<18} {'':>8} {'':>8} {'launch':>8} {'+sync':>8} {'no-sig':>8} {'no-line':>8} {'no-brw':>8} "
          f"{'record':>8} |")
    print("-" * len(hdr))
    old_mode = torchtpu.get_eager_mode()
    rows = []
    bad = []
    for name, cpu_args, fn in make_cases():
        tpu_args = tuple(a.to("tpu") for a in cpu_args)
        ref = fn(*cpu_args)
        for _ in range(args.warmup):
            fn(*cpu_args)
        cpu_us, _ = measure(fn, cpu_args, args.iters, args.repeats)

        torchtpu.set_eager_mode("debug")
        got = fn(*tpu_args).cpu()
        if not torch.allclose(got, ref, rtol=1e-4, atol=1e-4):  # tpu at EXACT, as the CPU (see main)
            bad.append(name)
        for _ in range(args.warmup):
            fn(*tpu_args)
        debug_us, _ = measure(fn, tpu_args, args.iters, args.repeats)

        torchtpu.set_eager_mode("strict")
        for _ in range(args.warmup):
            fn(*tpu_args)
        sync()
        launch_us, total_us = measure(fn, tpu_args, args.iters, args.repeats, sync=sync)
        torchtpu._C.set_signature_cache(False)
        for _ in range(args.warmup):
            fn(*tpu_args)
        nosig_us, _ = measure(fn, tpu_args, args.iters, args.repeats, sync=sync)
        torchtpu._C.set_signature_cache(True)
        torchtpu._C.set_op_lines(False)
        for _ in range(args.warmup):
            fn(*tpu_args)
        noline_us, _ = measure(fn, tpu_args, args.iters, args.repeats, sync=sync)
        torchtpu._C.set_op_lines(True)
        torchtpu._C.set_borrow_args(False)
        for _ in range(args.warmup):
            fn(*tpu_args)
        noborrow_us, _ = measure(fn, tpu_args, args.iters, args.repeats, sync=sync)
        torchtpu._C.set_borrow_args(True)

        torchtpu.set_eager_mode("fused")
        got = fn(*tpu_args).cpu()
        if not torch.allclose(got, ref, rtol=2e-2, atol=2e-2):
            bad.append(name + " (fused)")
        for _ in range(args.warmup):
            fn(*tpu_args)
        sync()
        record_us, _ = measure(fn, tpu_args, args.iters, args.repeats, sync=sync)
        torchtpu.set_eager_mode(old_mode)

        rows.append((name, cpu_us, debug_us, launch_us, total_us, nosig_us, noline_us, noborrow_us, record_us))
        print(f"{name:<18} {cpu_us:8.2f} {debug_us:8.2f} {launch_us:8.2f} {total_us:8.2f} {nosig_us:8.2f} "
              f"{noline_us:8.2f} {noborrow_us:8.2f} {record_us:8.2f} | {debug_us / cpu_us:8.1f}x "
              f"{launch_us / cpu_us:9.1f}x {total_us / cpu_us:8.1f}x {nosig_us / cpu_us:9.1f}x "
              f"{record_us / cpu_us:8.1f}x {(launch_us - noline_us) / noline_us * 100:8.1f}% "
              f"{(noborrow_us - launch_us) / launch_us * 100:10.1f}%", flush=True)

    fb = torchtpu.metrics().get("fallbacks") or {}
    if fb:
        print(f"\nCPU fallbacks during the run: {fb}")
    if bad:
        print(f"\nWRONG RESULTS (tpu vs cpu) for: {', '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
