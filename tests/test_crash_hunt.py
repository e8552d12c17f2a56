"""No Python-reachable call crashes the process: every public `torch.Tensor` method, every `torch.UntypedStorage`
method (on tpu tensors and storages) and every public callable of `torch.tpu`, called with odd arguments (none,
None, 0, negative, huge, empty, 0-dim, wrong device, wrong dtype, ...), must return or raise, never die of a signal
or hang.

The calls run in subprocesses, many per process. A child prints a marker before each call, so when one dies (or
its watchdog fires) the parent knows the exact call, records it, and starts a new child after it. Device memory is
capped (TORCHTPU_HOST_MEMORY_LIMIT) and so is the child's address space, so a huge size must fail fast.

TORCHTPU_CRASH_HUNT=full sweeps more receivers (dtypes, shapes) with every argument pattern; the default sweep
keeps the test near a minute. `python3 tests/test_crash_hunt.py [full]` prints the counts and every crash.
"""
import json
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALL_TIMEOUT_S = 20  # per call; a legitimate call here takes milliseconds
BATCH = 4000  # calls per child (a child also restarts after each crash)

# Receivers: expressions evaluated afresh for every call, so in-place methods never poison the next call.
TENSORS = {
    "f": "torch.randn(3, 4, device='tpu')",
    "z": "torch.tensor(1.5, device='tpu')",
    "e": "torch.empty(0, device='tpu')",
    "i": "torch.arange(6, device='tpu').reshape(2, 3)",
}
TENSORS_FULL = dict(TENSORS, **{
    "b": "torch.tensor([True, False, True], device='tpu')",
    "h": "torch.randn(2, 3, device='tpu', dtype=torch.bfloat16)",
    "t": "torch.randn(4, 3, device='tpu').t()",
    "n": "torch._neg_view(torch.randn(3, device='tpu'))",
    "g": "torch.randn(3, device='tpu', requires_grad=True)",
})
STORAGES = {
    "s": "torch.randn(4, device='tpu').untyped_storage()",
    "se": "torch.UntypedStorage(0, device='tpu')",
}

# Argument patterns (source text of the argument tuple). SHORT runs on every receiver, DEFAULT on the main one (and
# storages, torch.tpu), MORE only in the full sweep.
ARGS_SHORT = ["()", "(0,)", "(F(),)"]
ARGS_DEFAULT = [
    "(None,)", "(-1,)", "(1 << 40,)", "(-5,)", "(1.5,)", "(0, 1)", "((1 << 31, 1 << 31),)", "(F(), F())",
    "(C(),)", "(I(),)", "(E(),)", "(Z(),)", "(torch.float64,)", "('tpu:7',)", "(S(),)",
]
ARGS_MORE = [
    "(2 ** 62,)", "(0, 0, 0)", "(-1, -1)", "([],)", "(torch.int64,)", "('tpu',)", "('cpu',)",
    "(torch.device('tpu', 7),)", "(CS(),)", "('x',)", "(True,)", "(F(), None)", "(0, F())", "(F(), 0)",
    "(slice(None),)", "((0, 1),)", "(-(1 << 40),)",
]
# Arguments the patterns use (fresh each time).
PRELUDE = """
import torch, torchtpu
F = lambda: torch.randn(3, 4, device='tpu')
C = lambda: torch.randn(3, 4)
I = lambda: torch.ones(3, 4, dtype=torch.int64, device='tpu')
E = lambda: torch.empty(0, device='tpu')
Z = lambda: torch.tensor(2.0, device='tpu')
S = lambda: torch.randn(4, device='tpu').untyped_storage()
CS = lambda: torch.randn(4).untyped_storage()
"""

# Object-protocol members that are not operations on the value (calling them tests Python, not us).
SKIP = {
    "__class__", "__init__", "__new__", "__init_subclass__", "__subclasshook__", "__del__", "__delattr__",
    "__setattr__", "__getattribute__", "__getattr__", "__dir__", "__sizeof__", "__format__", "__reduce__",
    "__getstate__", "__torch_function__", "__torch_dispatch__", "__class_getitem__", "__weakref__",
    # torch 2.13 itself segfaults on `del storage[i]` for every device, the CPU included (its mp_ass_subscript
    # does not handle deletion): not a tpu crash.
    "UntypedStorage.__delitem__",
}


# Calls that crash or hang on the CPU too, in torch 2.13 itself (not tpu bugs): skipped by exact label.
CPU_TOO = {
    "Tensor.index[z](0, 1)",  # functorch.dim's Tensor.index loops forever in _wrap_dim on a 0-dim tensor
}


def _methods(cls):
    names = []
    for n in sorted(dir(cls)):
        if n in SKIP or f"{cls.__name__}.{n}" in SKIP or (n.startswith("_") and not (n.startswith("__") and n.endswith("__"))):
            continue
        if callable(getattr(cls, n, None)):
            names.append(n)
    return names


def _tpu_functions():
    import torchtpu  # noqa: F401

    out = []
    for n in sorted(dir(torch.tpu)):
        if n.startswith("_"):
            continue
        obj = getattr(torch.tpu, n)
        if callable(obj) and not isinstance(obj, type(torch)):
            out.append(n)
    return out


def build_calls(full=False):
    """The call list: (label, source) pairs."""
    calls = []
    every = ARGS_SHORT + ARGS_DEFAULT + (ARGS_MORE if full else [])
    tensors = TENSORS_FULL if full else TENSORS
    for m in _methods(torch.Tensor):
        for key, recv in tensors.items():
            for a in every if (full or key == "f") else ARGS_SHORT:
                calls.append((f"Tensor.{m}[{key}]{a}", f"torch.Tensor.{m}({recv}, *{a})"))
    for m in _methods(torch.UntypedStorage):
        for key, recv in STORAGES.items():
            for a in every:
                calls.append((f"UntypedStorage.{m}[{key}]{a}", f"torch.UntypedStorage.{m}({recv}, *{a})"))
    for fn in _tpu_functions():
        for a in every:
            calls.append((f"torch.tpu.{fn}{a}", f"torch.tpu.{fn}(*{a})"))
    return [c for c in calls if c[0] not in CPU_TOO]


# The child: runs calls from a JSON file starting at an index, printing "S <i>" before each and "D" at the end.
CHILD = PRELUDE + r"""
import faulthandler, json, resource, sys, warnings
warnings.simplefilter("ignore")
faulthandler.enable()
soft = int(sys.argv[4])
resource.setrlimit(resource.RLIMIT_AS, (soft, soft))
calls = json.load(open(sys.argv[1]))
start, timeout = int(sys.argv[2]), float(sys.argv[3])
mode, fallback, dev = torch.tpu.get_eager_mode(), torchtpu._C.get_cpu_fallback(), torch.tpu.current_device()
dtype = torch.get_default_dtype()
out = sys.stdout
for i in range(start, len(calls)):
    out.write(f"S {i}\n"); out.flush()
    faulthandler.dump_traceback_later(timeout, exit=True)
    try:
        r = eval(calls[i], globals())
        if isinstance(r, torch.Tensor) and r.device.type == "tpu" and r.numel() < 4096:
            r.cpu()  # queued work runs (and may fail) inside this call
        torch.tpu.synchronize()
    except BaseException as e:  # noqa: B902 (SystemExit, KeyboardInterrupt from odd args are results too)
        if isinstance(e, MemoryError):
            pass
        try:
            torch.tpu.synchronize()
        except BaseException:
            pass
    faulthandler.cancel_dump_traceback_later()
    # Undo global state a torch.tpu call may have changed, so later calls test what they mean to.
    try:
        if torch.tpu.get_eager_mode() != mode:
            torch.tpu.set_eager_mode(mode)
        torchtpu._C.set_cpu_fallback(fallback)
        torch.tpu.set_device(dev)
        torch.set_default_dtype(dtype)
        if hasattr(torch.tpu, "_set_cache_only"):
            torch.tpu._set_cache_only(False)
    except BaseException:
        pass
out.write("D\n"); out.flush()
"""


def run_calls(calls, timeout=CALL_TIMEOUT_S, as_bytes=8 << 30, env_extra=None, log=None):
    """Runs every call; returns (tried, crashes) where crashes are dicts (label, code, kind, detail)."""
    import tempfile

    env = dict(os.environ)
    env.setdefault("TORCHTPU_HOST_MEMORY_LIMIT", str(1 << 30))
    env["PYTHONPATH"] = env.get("CRASH_HUNT_PYTHONPATH", ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONFAULTHANDLER"] = "1"
    env.update(env_extra or {})
    crashes = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calls.json")
        child = os.path.join(tmp, "child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        i = 0
        while i < len(calls):
            end = min(i + BATCH, len(calls))
            with open(path, "w") as f:
                json.dump([src for _, src in calls[:end]], f)
            p = subprocess.run([sys.executable, child, path, str(i), str(timeout), str(as_bytes)],
                               capture_output=True, text=True, env=env, timeout=timeout * 3 + 600)
            lines = p.stdout.split()
            if p.returncode == 0 and p.stdout.endswith("D\n"):
                i = end
                continue
            starts = [int(lines[k + 1]) for k in range(len(lines) - 1) if lines[k] == "S"]
            if not starts:
                raise RuntimeError(f"crash-hunt child failed before its first call (rc {p.returncode}):\n"
                                   f"{p.stderr[-3000:]}")
            last = starts[-1]
            kind = "hang" if "Timeout (" in p.stderr else f"signal {-p.returncode}" if p.returncode < 0 else \
                f"exit {p.returncode}"
            tail = [ln for ln in p.stderr.splitlines() if ln.strip()][-12:]
            crashes.append({"label": calls[last][0], "code": calls[last][1], "kind": kind, "detail": "\n".join(tail)})
            if log:
                log(f"CRASH {kind}: {calls[last][0]}")
            i = last + 1
    return len(calls), crashes


def test_no_call_crashes_or_hangs():
    full = os.environ.get("TORCHTPU_CRASH_HUNT") == "full"
    calls = build_calls(full=full)
    tried, crashes = run_calls(calls)
    assert tried > 10000
    msg = "\n\n".join(f"{c['kind']}: {c['label']}\n  {c['code']}\n{c['detail']}" for c in crashes)
    assert not crashes, f"{len(crashes)} of {tried} calls crashed or hung:\n{msg}"


if __name__ == "__main__":
    full = len(sys.argv) > 1 and sys.argv[1] == "full"
    calls = build_calls(full=full)
    tried, crashes = run_calls(calls, log=lambda s: print(s, flush=True))
    print(f"calls tried: {tried}, crashes: {len(crashes)}")
    for c in crashes:
        print(f"--- {c['kind']}: {c['label']}\n    {c['code']}\n{c['detail']}")
