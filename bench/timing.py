"""Shared by the bench scripts: the median time of a function, and columns measured in child processes."""
import json
import statistics
import subprocess
import sys
import time


def median_ms(fn, repeats, warmup=1):
    """Median milliseconds of `repeats` runs after `warmup` runs (compiles on tpu, allocator/threads on cpu)."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def run_groups(script, groups, args):
    """{row: {column: value}} merged over one child process per group: `python3 script --group G *args`, whose
    last stdout line is a JSON object of that shape. PyTorch CPU columns and tpu columns measured in one process
    distort each other (PyTorch's OpenMP workers spin-wait on every core after each CPU op)."""
    res = {}
    for group in groups:
        out = subprocess.run([sys.executable, script, "--group", group, *args], capture_output=True, text=True,
                             check=True).stdout
        for row, cols in json.loads(out.strip().splitlines()[-1]).items():
            res.setdefault(row, {}).update(cols)
    return res


def answer_group(args, measure):
    """In a child process of run_groups (`--group G`): prints measure(G, args) as its JSON line, tpu ops in debug
    mode (each op's own time); True. In the parent: False."""
    if not args.group:
        return False
    import torchtpu

    torchtpu.set_eager_mode("debug")
    print(json.dumps(measure(args.group, args)))
    return True
