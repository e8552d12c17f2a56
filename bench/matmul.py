"""f32 matmul throughput on tpu (host driver; exact fp32 and TPU DEFAULT precision = bf16 inputs, f32 accumulation)
vs torch CPU (f32, and bf16 for reference).

    python3 bench/matmul.py [--sizes 512 1024] [--repeats R] [--threads T]

GFLOP/s = 2*n^3 / median seconds per matmul. tpu times are for a run of `--inner` matmuls followed by one
synchronize (so strict mode's queue is drained inside the timed region).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

import torchtpu

PRECISION_DEFAULT, PRECISION_HIGH, PRECISION_HIGHEST = 0, 1, 2  # tt_precision in csrc/include/tt_ir.h

def machine_peak(threads):
    """build/peak's GFLOP/s limits, the best of two runs ({} when it is not built: `make build/peak`)."""
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "peak")
    if not os.access(exe, os.X_OK):
        return {}
    best = {}
    for _ in range(2):
        out = subprocess.run([exe, str(threads), "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            return {}
        for k, v in json.loads(out.stdout).items():
            best[k] = max(best[k], v) if isinstance(v, float) and k in best else v
    return best


def median_s(fn, repeats):
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--inner", type=int, default=4, help="matmuls per timed run")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: the tpu host pool's)")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads or torchtpu._C.host_num_threads())
    torchtpu.set_precision("exact")  # the fp32 columns; DEFAULT, HIGH, HIGHEST set around their own
    sync = torch.tpu.synchronize
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, torch CPU threads {torch.get_num_threads()}, "
          f"tpu host threads {torchtpu._C.host_num_threads()}, eager mode {torchtpu.get_eager_mode()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    hdr = (f"{'n':>6} {'cpu f32':>9} {'tpu fp32':>9} {'tpu/cpu':>8} {'rel err':>9} | {'tpu DEFAULT':>11} "
           f"{'rel err':>9} {'HIGH':>6} {'HIGHEST':>7} | {'cpu bf16':>9}")
    print("GFLOP/s; rel err = ||tpu - f64 reference|| / ||reference||; tpu fp32 = EXACT (plain f32), "
          "tpu DEFAULT = TPU bf16 one-pass; HIGH, HIGHEST = their time / DEFAULT's (3 and 6 passes)")
    peak = machine_peak(torchtpu._C.host_num_threads())
    if peak:
        bf16_peak = max(peak["bf16_dot"], peak["amx_bf16"])
        print(f"machine peak with {peak['threads']} threads (build/peak): f32 FMA {peak['f32_fma']:.0f}, bf16 dot "
              f"{peak['bf16_dot']:.0f}, AMX bf16 {peak['amx_bf16']:.0f} GFLOP/s; %pk = tpu fp32 / f32 FMA peak, "
              f"tpu DEFAULT / bf16 peak ({bf16_peak:.0f})")
        hdr += f" | {'%pk':>5} {'%pk':>5}"
    print(hdr)
    print("-" * len(hdr))
    g = torch.Generator().manual_seed(0)
    for n in args.sizes:
        a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
        ta, tb = a.to("tpu"), b.to("tpu")
        ab, bb = a.bfloat16(), b.bfloat16()
        flops = 2.0 * n ** 3 * args.inner

        def cpu_run():
            for _ in range(args.inner):
                torch.mm(a, b)

        def cpu_bf16_run():
            for _ in range(args.inner):
                torch.mm(ab, bb)

        def tpu_run():
            # The results are kept until the synchronize: in fused mode a result nobody holds is never computed.
            outs = [torch.mm(ta, tb) for _ in range(args.inner)]
            sync()
            return outs

        exact = a.double() @ b.double()

        def rel_err():
            return ((torch.mm(ta, tb).cpu().double() - exact).norm() / exact.norm()).item()

        cpu = flops / median_s(cpu_run, args.repeats) / 1e9
        tpu = flops / median_s(tpu_run, args.repeats) / 1e9
        err = rel_err()
        old = torchtpu._C.get_precision()
        try:
            torchtpu._C.set_precision(PRECISION_DEFAULT)
            tpu16 = flops / median_s(tpu_run, args.repeats) / 1e9
            err16 = rel_err()
            slower = []
            for prec in (PRECISION_HIGH, PRECISION_HIGHEST):
                torchtpu._C.set_precision(prec)
                slower.append(median_s(tpu_run, max(1, args.repeats // 2)) * tpu16 * 1e9 / flops)
        finally:
            torchtpu._C.set_precision(old)
        cpu16 = flops / median_s(cpu_bf16_run, max(1, args.repeats // 2)) / 1e9
        frac = f" | {100 * tpu / peak['f32_fma']:4.0f}% {100 * tpu16 / bf16_peak:4.0f}%" if peak else ""
        print(f"{n:6d} {cpu:9.1f} {tpu:9.1f} {tpu / cpu:7.2f}x {err:9.1e} | {tpu16:11.1f} {err16:9.1e} "
              f"{slower[0]:5.1f}x {slower[1]:6.1f}x | {cpu16:9.1f}{frac}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
