"""torch.compile on tpu: the "tpu" Dynamo backend.

    model = torch.compile(model)                  # tpu inputs pick this backend; CPU and CUDA keep Inductor
    model = torch.compile(model, backend="tpu", options={"name": "block"})

Pipeline (as Google TorchTPU's): Dynamo captures a graph; aot_autograd turns it into ATen graphs, forward and
backward separately (min-cut partition: cheap ops are recomputed in the backward rather than saved); each graph then
runs through the same C lowerings and the same deferred runtime as eager ops, as one window (csrc/runtime/graph.c):
the window's cut at the graph's end is its program, compiled once per structure and found in the cache on every
later call. Intermediates the graph does not return are never allocated. Random ops draw from the device generator
as in eager mode (dropout differs step to step and follows the eager sequence for the same seed); mutations of
inputs (optimizer steps, BatchNorm running stats) are written by the program; graph breaks run in the eager mode in
force. The program's precision is the one in force when the graph runs (`torch.tpu.precision` around the call).

Recompiles: Dynamo's, when its guards fail (new shapes, dtypes, ...), and the runtime's, when a graph's program
changes (new shapes, dtype or precision). `TORCHTPU_LOG=compile` prints each, with what changed. A graph whose
dynamic sizes have upper bounds runs padded to buckets: one program per bucket (_buckets.py).
"""
import itertools
import os
import sys

import torch

from . import _C, _buckets

# Google TorchTPU's backend options. Those with no effect here are accepted, so code written for it runs unchanged.
OPTIONS = {
    "name": "names the graphs' programs (profiler, TORCHTPU_LOG, errors)",
    "async_compile": "accepted; compiles here are synchronous and fast (one program per graph)",
    "num_dynamic_buckets": "bounded dynamic sizes: n equal buckets up to the bound (default: powers of two)",
    "bucket_size": "bounded dynamic sizes: buckets at multiples of this size (default: powers of two)",
    "serializable": "accepted; programs persist on disk whenever the driver serializes them (not the host driver)",
    "debug_callback": "called with (kind, graph module) for each ATen graph compiled",
}

_graph_ids = itertools.count()
_seen_frames = {}  # Dynamo frame id -> the input signature of its last compile, for the recompile log
_stats = {"graphs": 0, "recompiles": 0, "replays": 0, "programs": 0, "padded_graphs": 0}


def _log_on():
    return "compile" in os.environ.get("TORCHTPU_LOG", "")


def _log(msg):
    print(f"torchtpu compile: {msg}", file=sys.stderr, flush=True)


def compile_stats():
    """Graphs compiled by the tpu backend (forward and backward count apart), Dynamo recompiles among them, calls
    that launched a graph's program again without recording its ops (replays), programs the runtime compiled for
    graphs (one per graph and shape or bucket; a program found in the cache is not counted), and graphs padded
    to buckets (bounded dynamic sizes)."""
    return dict(_stats)


def reset_compile_stats():
    for k in _stats:
        _stats[k] = 0


def _tpu_index(example_inputs, gm):
    """The tpu device the graph works on: its first tpu input's, else the first tpu value it makes, else None."""
    for t in example_inputs:
        if isinstance(t, torch.Tensor) and t.device.type == "tpu":
            return t.device.index or 0
    for node in gm.graph.nodes:
        v = node.meta.get("val", node.meta.get("example_value"))  # aot's graphs / Dynamo's
        if isinstance(v, torch.Tensor) and v.device.type == "tpu":
            return v.device.index or 0
    return None


def _signature(example_inputs):
    """The tensor inputs' shapes (symbolic dims print as s0, s1, ...) and dtypes, and how many other inputs."""
    tensors = [(str(tuple(t.shape)), str(t.dtype).replace("torch.", "")) for t in example_inputs
               if isinstance(t, torch.Tensor)]
    return tensors, len(example_inputs) - len(tensors)


def _where(gm):
    """The compiled function and its line: the outermost frame of the first op's stack trace."""
    for node in gm.graph.nodes:
        trace = node.meta.get("stack_trace")
        if trace:
            for line in trace.splitlines():
                line = line.strip()
                if line.startswith("File "):  # File "path", line N, in name
                    parts = line.split(", ")
                    if len(parts) >= 3:
                        file = parts[0][len("File "):].strip('"')
                        return f"{parts[2][len('in '):]} ({os.path.basename(file)}:{parts[1][len('line '):]})"
    return "?"


def _explain(frame, sig):
    """What changed since this frame's last compile: the tensor inputs whose shape or dtype differ."""
    prev = _seen_frames.get(frame)
    _seen_frames[frame] = sig
    if prev is None:
        return None
    (pt, pn), (nt, nn) = prev, sig
    diffs = [f"input {i}: {a[0]} {a[1]} -> {b[0]} {b[1]}" for i, (a, b) in enumerate(zip(pt, nt)) if a != b]
    if len(pt) != len(nt):
        diffs.append(f"{len(pt)} -> {len(nt)} tensor inputs")
    if nn > pn and not diffs:
        diffs.append("sizes became inputs (Dynamo marked them dynamic)")
    if not diffs:
        return "guards failed (same input shapes and dtypes: a global, an attribute or a constant changed)"
    more = f"; +{len(diffs) - 4} more" if len(diffs) > 4 else ""
    return "; ".join(diffs[:4]) + more


REPLAY_CAPTURES = 3  # captures of one size key before the graph stays on recording (its inputs keep changing)
REPLAY_KEYS = 16     # size keys a dynamic graph keeps programs for


def _replayable(gm):
    """A graph whose program can be launched again: its random ops draw from the device's default generator (a
    replay reserves the graph's counters from it anew; a generator passed in is not followed), and it closes every
    precision block it opens (a graph break inside a block leaves the thread's precision to the next graph, which
    a replay would not set)."""
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    pushes = sum(1 for n in calls if n.target is torch.ops.tpu._push_precision.default)
    pops = sum(1 for n in calls if n.target is torch.ops.tpu._pop_precision.default)
    return pushes == pops and not any(n.kwargs.get("generator") is not None for n in calls)


def _graph_runner(gm, device, name):
    """The compiled graph (boxed: takes the argument list). The first call records gm's ATen ops into one window
    on `device`; when that ran as one program, later calls with inputs laid out the same launch it again without
    recording (csrc/aten/graph.cpp); any other call records again. A dynamic graph (sizes among its inputs) keeps
    a program per size key, as the runtime compiles one per concrete shape."""
    enabled = _replayable(gm) and os.environ.get("TORCHTPU_GRAPH_REPLAY") != "0"
    replays, captures = {}, {}  # size key -> GraphReplay / captures tried

    def run(args):
        key = tuple(a for a in args if isinstance(a, (int, float)))
        replay = replays.get(key)
        if replay is not None:
            out = replay.run(list(args))
            if out is not None:
                _stats["replays"] += 1
                return out
        prev = _C.graph_begin(device, name)  # cuts the window before the graph: its compile is not the graph's
        compiles = _C.metrics()["compiles"]
        try:
            out = gm(*args)
        except BaseException:
            try:
                _C.graph_end(device, prev)
            except Exception:  # noqa: BLE001  (the graph's own error is the one to report)
                pass
            raise
        tries = captures.get(key, 0)
        if not enabled or not isinstance(out, (list, tuple)) or tries >= REPLAY_CAPTURES or \
                (key not in captures and len(captures) >= REPLAY_KEYS):
            _C.graph_end(device, prev)
        else:
            captures[key] = tries + 1
            replay = _C.graph_end_capture(device, prev, name, list(args), out)
            if replay is not None:
                replays[key] = replay
        _stats["programs"] += _C.metrics()["compiles"] - compiles  # the graph's program (ops before it were cut)
        return out

    run._boxed_call = True
    return run


def _check_options(options):
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"torch.compile(backend='tpu'): unknown option(s) {unknown}; valid: {sorted(OPTIONS)}")
    _buckets.buckets_for(1, 2, options)  # a bad bucket option fails here, not at the first dynamic graph
    return options


def tpu_backend(gm, example_inputs, mode=None, options=None):
    """The Dynamo backend "tpu" (torch.compile(..., backend="tpu")). `mode` ("default", "reduce-overhead",
    "max-autotune", ...) is accepted and changes nothing: every graph is one program already."""
    from functorch.compile import min_cut_rematerialization_partition
    from torch._dynamo.backends.common import aot_autograd
    from torch._guards import CompileContext

    options = _check_options(options)
    cid = CompileContext.current_compile_id()
    frame = getattr(cid, "frame_id", None)
    where = _where(gm)
    base = options.get("name") or f"{where.split(' ')[0] if where != '?' else 'graph'}#{next(_graph_ids)}"
    sig = _signature(example_inputs)
    why = _explain(frame, sig) if frame is not None else None
    if why is not None:
        _stats["recompiles"] += 1
    if _log_on():
        _log(f"Dynamo graph {cid} of {where}: {len(gm.graph.nodes)} nodes"
             + (f"; recompiled because {why}" if why else ""))
    callback = options.get("debug_callback")
    link = {}  # between this graph's forward and backward: how the tensors the forward saves are padded

    def compiler(kind):
        def compile_graph(agm, inputs):
            device = _tpu_index(inputs, agm)
            name = f"{base} {kind}"
            _stats["graphs"] += 1
            if _log_on():
                ops = sum(1 for n in agm.graph.nodes if n.op == "call_function")
                _log(f"{name}: {ops} ATen ops on tpu:{device if device is not None else '-'}")
            if callback is not None:
                callback(kind, agm)
            if device is None:  # nothing on tpu (a graph of CPU work inside a tpu model): plain eager
                from functorch.compile import make_boxed_func
                return make_boxed_func(agm)
            padded, why = _buckets.plan(agm, kind, options, device, link)
            if padded is not None:
                _stats["padded_graphs"] += 1
                if _log_on():
                    _log(f"{name}: padded to buckets " + ", ".join(f"{s} in {e}" for s, e in padded.edges.items()))
                return padded.wrap(_graph_runner(agm, device, name))
            if why is not None and _log_on():
                _log(f"{name}: one program per size (not padded to buckets: {why})")
            run = _graph_runner(agm, device, name)
            if kind == "backward" and link.get("padded_saved"):
                run = _buckets.unpadder(agm, options, device, link).wrap_unpadded(run)
            return run
        return compile_graph

    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                        inference_compiler=compiler("inference"), partition_fn=min_cut_rematerialization_partition,
                        keep_inference_input_mutations=True)(gm, example_inputs)


def _has_tpu(model, inputs):
    return isinstance(model, torch.fx.GraphModule) and _tpu_index(inputs, model) is not None


def _route_default_compile():
    """torch.compile's default backend (Inductor) picks "tpu" for graphs on tpu: torch 2.13 would hand them to its
    Inductor Pallas scheduler (written for Google's package; it needs JAX). Graphs on every other device go to
    Inductor untouched; torch.compile itself is not replaced."""
    wrapper = torch._TorchCompileInductorWrapper
    if getattr(wrapper.__call__, "_torchtpu", False):
        return
    inductor_call = wrapper.__call__

    def __call__(self, model_, inputs_, **kwargs):
        if _has_tpu(model_, inputs_):
            return tpu_backend(model_, inputs_, mode=None, options={"name": self.name} if self.name else None)
        return inductor_call(self, model_, inputs_, **kwargs)

    __call__._torchtpu = True
    __call__.__doc__ = inductor_call.__doc__
    wrapper.__call__ = __call__


def _device_interface(di):
    """Dynamo's DeviceInterface for tpu, in place of torch 2.13's own TpuInterface (written for Google's package:
    Pallas, no float64)."""
    import torch.tpu as tpu

    class TpuInterface(di.DeviceInterface):
        device = tpu.device
        Event = tpu.Event
        Stream = tpu.Stream

        class Worker:
            set_device = staticmethod(tpu.set_device)
            current_device = staticmethod(tpu.current_device)
            get_device_properties = staticmethod(tpu.get_device_properties)

        current_device = staticmethod(tpu.current_device)
        set_device = staticmethod(tpu.set_device)
        device_count = staticmethod(tpu.device_count)
        is_available = staticmethod(tpu.is_available)
        stream = staticmethod(tpu.stream)
        current_stream = staticmethod(tpu.current_stream)
        set_stream = staticmethod(tpu.set_stream)
        synchronize = staticmethod(tpu.synchronize)
        memory_allocated = staticmethod(tpu.memory_allocated)

        @staticmethod
        def maybe_exchange_device(device):
            prev = tpu.current_device()
            if device >= 0 and device != prev:
                tpu.set_device(device)
            return prev

        exchange_device = maybe_exchange_device

        @staticmethod
        def get_raw_stream(device_idx):
            return tpu.current_stream(device_idx).stream_id

        @staticmethod
        def _set_stream_by_id(stream_id, device_index, device_type):
            tpu.set_stream(torch.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type))

        @classmethod
        def get_device_properties(cls, device=None):
            return tpu.get_device_properties(device)

        @staticmethod
        def get_compute_capability(device=None):
            return ""

        @staticmethod
        def is_bf16_supported(including_emulation=False):
            return True

        @classmethod
        def is_dtype_supported(cls, dtype, including_emulation=False):
            return True

        @staticmethod
        def is_triton_capable(device=None):
            return False

    return TpuInterface


def _after_dynamo_device_interface(di):
    """Registers our interface right after torch's own registration (init_device_reg, which runs lazily on first
    use and would put torch's TpuInterface back)."""
    torch_init = di.init_device_reg

    def init_device_reg():
        torch_init()
        di.register_interface_for_device("tpu", _device_interface(di))

    di.init_device_reg = init_device_reg
    if di._device_initialized:
        di.register_interface_for_device("tpu", _device_interface(di))


class _AfterImport:
    """An import hook: runs hooks[name](module) right after `name` is first imported (torch._dynamo costs a second
    to import; torchtpu must not import it up front). Leaves sys.meta_path once every hook ran."""

    def __init__(self, hooks):
        self.hooks = dict(hooks)

    def find_spec(self, fullname, path=None, target=None):
        fn = self.hooks.pop(fullname, None)
        if fn is None:
            return None
        import importlib.util

        if not self.hooks:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def run(module):
            exec_module(module)
            fn(module)

        spec.loader.exec_module = run
        return spec


def _register_backend(registry):
    """backend="tpu" without the installed entry point too (a source checkout on sys.path)."""
    if "tpu" not in registry._COMPILER_FNS:
        registry.register_backend(tpu_backend, name="tpu")


def install():
    _route_default_compile()
    hooks = {"torch._dynamo.device_interface": _after_dynamo_device_interface,
             "torch._dynamo.backends.registry": _register_backend}
    for name in list(hooks):
        if name in sys.modules:
            hooks.pop(name)(sys.modules[name])
    if hooks:
        sys.meta_path.insert(0, _AfterImport(hooks))
