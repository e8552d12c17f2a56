"""Shared by the bench scripts: the median time of a function."""
import statistics
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
