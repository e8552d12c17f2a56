"""torchtpu.metrics(): what the device did."""
from . import _C

_decompositions = {}


def count_decomposition(op_name):
    _decompositions[op_name] = _decompositions.get(op_name, 0) + 1


def metrics():
    """A dict: ops (launches by eager mode), compiles, cache_hits, cache_size, compile_seconds, fallbacks (count by
    op), decompositions (count by op), bytes_to_device, bytes_to_host, peak_bytes, syncs; torch_compile: the tpu
    backend's graphs, Dynamo recompiles among them, replays (calls that launched a graph's program again without
    recording its ops), programs (compiled for graphs) and padded_graphs (bounded dynamic sizes)."""
    from ._compile import compile_stats

    m = _C.metrics()
    m["decompositions"] = {k: v for k, v in _decompositions.items() if v}
    m["torch_compile"] = compile_stats()
    return m


def reset_metrics():
    from ._compile import reset_compile_stats

    _C.reset_metrics()
    _decompositions.clear()
    reset_compile_stats()
