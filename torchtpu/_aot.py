"""torchtpu.aot_compile: compile what a function runs on tpu for a real TPU topology, with no TPU here.

    progs = torchtpu.aot_compile(train_step, x, y, target="v5e:2x2", mode="fused")
    for p in progs:
        print(p.index, p.fits, p.temp_bytes, p.cost.get("flops"))

The function runs once on the current driver (host by default) while the runtime notes every program it executes
(fused windows in mode="fused", torch.compile graphs in mode="compiled"); each distinct program's StableHLO is then
compiled by libtpu for one chip of the target topology (PJRT_TopologyDescription_Create + PJRT_Compile, no client,
no device). Each result carries the serialized executable, XLA's memory statistics (does it fit in HBM?) and its
cost analysis. A program too large for the chip comes back with fits=False and libtpu's message.

libtpu asks a cloud metadata server about its host unless TPU_SKIP_MDS_QUERY=1 (set here when no TPU device is
present, as JAX does). Our tests also run it in a network namespace with only loopback (`unshare -n`).
"""
import dataclasses
import glob
import importlib.util
import os

import torch

from . import _C

TOPOLOGY_EXAMPLES = ("v5e:1x1", "v5e:2x2", "v6e:1x1", "v6e:2x4", "v4:2x2x1", "v5p:2x2x1", "tpu7x:2x2x1")


@dataclasses.dataclass
class AotProgram:
    """One program compiled for the target: index in first-run order, its StableHLO, and libtpu's results."""
    index: int
    stablehlo: str
    target: str
    fits: bool
    executable: bytes = b""
    argument_bytes: int = 0
    output_bytes: int = 0
    alias_bytes: int = 0
    temp_bytes: int = 0
    generated_code_bytes: int = 0
    peak_bytes: int = 0
    cost: dict = dataclasses.field(default_factory=dict)
    error: str = ""

    @property
    def device_bytes(self):
        """Arguments + outputs + temporaries - aliased bytes: what the program needs in HBM at once."""
        return self.argument_bytes + self.output_bytes + self.temp_bytes - self.alias_bytes


def libtpu_path():
    """libtpu's plugin: TPU_LIBRARY_PATH, else the installed `libtpu` package's libtpu.so."""
    path = os.environ.get("TPU_LIBRARY_PATH")
    if path:
        return path
    spec = importlib.util.find_spec("libtpu")
    for where in (spec.submodule_search_locations or []) if spec else []:
        if os.path.exists(os.path.join(where, "libtpu.so")):
            return os.path.join(where, "libtpu.so")
    raise RuntimeError("aot_compile needs libtpu: `pip install libtpu` (or set TPU_LIBRARY_PATH)")


def aot_compile(fn, *example_args, target="v5e:2x2", mode="fused", plugin=None, **example_kwargs):
    """Runs fn(*example_args, **example_kwargs) once on tpu and compiles every program it ran for target.
    mode: "fused" (the eager windows of DeferAndFuse) or "compiled" (fn through torch.compile, backend "tpu").
    plugin: a PJRT plugin that compiles without a device (default: libtpu). Returns [AotProgram]."""
    if mode not in ("fused", "compiled"):
        raise ValueError(f"mode must be 'fused' or 'compiled', got {mode!r}")
    run = torch.compile(fn, backend="tpu") if mode == "compiled" else fn
    from . import eager_mode

    torch.tpu.synchronize()  # earlier work is not this function's
    _C.capture_start()
    try:
        with eager_mode("fused"):
            run(*example_args, **example_kwargs)
            torch.tpu.synchronize()
    finally:
        texts = _C.capture_stop()
    return compile_programs(texts, target, plugin)


def compile_programs(texts, target="v5e:2x2", plugin=None):
    """Compiles StableHLO texts for target; a program that does not fit the chip is fits=False, not an error."""
    plugin = plugin or libtpu_path()
    if not (glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*")):
        os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")  # before libtpu loads: no metadata server to ask
    programs = []
    for i, text in enumerate(texts):
        try:
            programs.append(AotProgram(i, text, target, True, **_C.pjrt_aot_compile(plugin, target, text)))
        except torch.OutOfMemoryError as e:  # libtpu: RESOURCE_EXHAUSTED, the program does not fit the chip
            programs.append(AotProgram(i, text, target, False, error=str(e)))
    return programs
