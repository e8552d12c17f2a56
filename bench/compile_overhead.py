"""What a call of a small torch.compile'd function costs: a chain of N elementwise ops on a small tensor, called in
a loop, on tpu (fused eager, compiled: its program replayed, compiled with replay off: its ops recorded each call)
next to PyTorch CPU eager and CPU Inductor. Microseconds per call, median of repeats, and each column's time over
tpu compiled's (> 1: tpu compiled is faster).

    python3 bench/compile_overhead.py [--ops 20] [--size 256] [--calls 2000] [--repeats 5]

The tpu columns end each timed loop with torch.tpu.synchronize(). Run on a quiet machine; the load average is
printed.
"""
import argparse
import os
import statistics
import sys
import time

import torch

import torchtpu


def chain(n_ops):
    def f(x):
        for i in range(n_ops // 2):
            x = torch.sin(x) * (1.0 + 0.01 * i)
        return x
    return f


def per_call_us(fn, x, calls, repeats, sync):
    for _ in range(20):
        fn(x)
    sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            out = fn(x)
        sync()
        ts.append((time.perf_counter() - t0) / calls * 1e6)
        del out
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", type=int, default=20)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    torch.set_num_threads(torchtpu._C.host_num_threads())
    f = chain(args.ops)
    x_cpu = torch.randn(args.size)
    x_tpu = x_cpu.to("tpu")
    nothing = lambda: None  # noqa: E731
    tpu_sync = torch.tpu.synchronize
    print(f"torch {torch.__version__}, {torch.tpu.get_device_name()}, threads {torch.get_num_threads()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"a chain of {args.ops} elementwise ops on {args.size} floats; microseconds per call\n")
    res = {}
    res["cpu eager"] = per_call_us(f, x_cpu, args.calls, args.repeats, nothing)
    torch._dynamo.reset()
    res["cpu inductor"] = per_call_us(torch.compile(f), x_cpu, args.calls, args.repeats, nothing)
    res["tpu fused eager"] = per_call_us(f, x_tpu, args.calls, args.repeats, tpu_sync)
    torch._dynamo.reset()
    res["tpu compiled"] = per_call_us(torch.compile(f), x_tpu, args.calls, args.repeats, tpu_sync)
    os.environ["TORCHTPU_GRAPH_REPLAY"] = "0"
    torch._dynamo.reset()
    res["tpu compiled, no replay"] = per_call_us(torch.compile(f), x_tpu, args.calls, args.repeats, tpu_sync)
    del os.environ["TORCHTPU_GRAPH_REPLAY"]
    for name, us in res.items():
        print(f"{name:<24} {us:8.1f} us   this / tpu compiled: {us / res['tpu compiled']:5.2f}x")
    print(f"\nreplays: {torchtpu.metrics()['torch_compile']['replays']}; load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
