"""pytest plugin that lets PyTorch's own device-generic tests (test_ops.py, test_view_ops.py, ...) run against tpu,
unmodified. Loaded by tools/conformance.py as `-p conformance_plugin` (tools/ on PYTHONPATH); usable by hand too:

    PYTHONPATH=tools python3 -m pytest -p conformance_plugin ../shared/pytorch-tests/test/test_view_ops.py

It does four things, all before a test file is imported (a -p plugin is imported before collection):
1. imports torchtpu first, so torch.testing._internal sees the renamed PrivateUse1 backend and instantiates
   PrivateUse1TestBase classes (common_utils captures NATIVE_DEVICES at import); only the tpu is instantiated
   (PYTORCH_TESTING_DEVICE_ONLY_FOR=tpu) and slow tests run (test_compare_cpu is @slowTest);
2. bridges the one version skew of the shared test_ops.py: it imports `xfail`, `skip` and a three-argument
   `skipOps(class, test, specs)` from common_methods_invocations, where torch 2.13 has them in common_device_type
   with `skipOps(specs)` taking the class and test from the decorated function's __qualname__;
3. declares the dtypes the device refuses at allocation as unsupported on tpu, the way PyTorch declares a device's
   dtypes: OpInfo.dtypesIf["tpu"] (as dtypesIfCUDA does for cuda) and the @dtypes lists a device test base
   instantiates (_get_dtypes). The refused set is asked of the device (torch.empty raising TypeError "tpu does not
   support tensors of dtype ..."), not listed by hand; tests not instantiated this way are counted, per dtype;
4. bypasses accelerator-only restrictions (the @onlyOn(["cuda", "xpu"]) test_compare_cpu runs; @onlyCPU and
   @onlyCUDA still skip, see _AcceleratorRestrictionsBypassed), and
   records each test's start and outcome as JSON lines in $CONFORMANCE_LOG, so a parent can tell which test was
   running when a child process died, with a per-test timeout ($CONFORMANCE_TIMEOUT s, SIGALRM).
"""
import json
import os
import signal
import sys
import time

os.environ.setdefault("PYTORCH_TESTING_DEVICE_ONLY_FOR", "tpu")
os.environ.setdefault("PYTORCH_TEST_WITH_SLOW", "1")
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
# PyTorch's tolerances assume float32 matmuls (the CPU's): tpu runs them at torchtpu's EXACT precision, not the TPU
# DEFAULT (bf16 products), which would need looser tolerances than these tests give.
os.environ["TORCHTPU_PRECISION"] = "exact"

# CONFORMANCE_CPU_TWIN=1 (conformance.py's check of each failure on CPU): PyTorch's CPU backend alone, as PyTorch
# runs it: torchtpu is not loaded and no dtype list is touched; only the version-skew bridge and the records remain.
CPU_TWIN = os.environ.get("CONFORMANCE_CPU_TWIN") == "1"

import pytest  # noqa: E402
import torch  # noqa: E402

if not CPU_TWIN:
    import torchtpu  # noqa: E402,F401  (before torch.testing._internal: see 1.)

import torch.testing._internal.common_device_type as cdt  # noqa: E402
import torch.testing._internal.common_methods_invocations as cmi  # noqa: E402

DEVICE = torch._C._get_privateuse1_backend_name()


# ---- 2. version skew ---------------------------------------------------------------------------------------------
def _skip_ops(*args):
    """skipOps(test_case_name, base_test_name, to_skip) (old) or skipOps(to_skip) (torch 2.13). The old names are
    redundant: 2.13 reads them from the decorated function, which is the very test the old call named."""
    if len(args) == 3:
        return cdt.skipOps(args[2])
    return cdt.skipOps(*args)


for _name, _value in (("xfail", cdt.xfail), ("skip", cdt.skip), ("skipOps", _skip_ops)):
    if not hasattr(cmi, _name) or _name == "skipOps":
        setattr(cmi, _name, _value)


# ---- 3. dtypes the device refuses ---------------------------------------------------------------------------------
def _refused_dtypes():
    out = {}
    for d in {v for v in vars(torch).values() if isinstance(v, torch.dtype)}:
        try:
            torch.empty(1, dtype=d, device=DEVICE)
        except TypeError as e:
            if "does not support tensors of dtype" in str(e):
                out[d] = str(e).split(" (")[0]
        except Exception:
            pass
    return out


REFUSED = {} if CPU_TWIN else _refused_dtypes()
NOT_INSTANTIATED = {}  # str(dtype) -> number of (@dtypes test, dtype) pairs not instantiated: the device refuses it
OPINFO_RESTRICTED = {}  # str(dtype) -> number of OpInfos whose tpu dtypes lost it


def _count_dropped(dtypes):
    for d in dtypes:
        for r in {x for x in (d if isinstance(d, (tuple, list)) else (d,)) if x in REFUSED}:
            NOT_INSTANTIATED[str(r)] = NOT_INSTANTIATED.get(str(r), 0) + 1


def _refuses(dtype):
    ds = dtype if isinstance(dtype, (tuple, list)) else (dtype,)
    return any(d in REFUSED for d in ds)


def _restrict_opinfos():
    seen = set()
    for db_name in dir(cmi):
        db = getattr(cmi, db_name)
        if not isinstance(db, list):
            continue
        for op in db:
            if not isinstance(op, cmi.OpInfo) or id(op) in seen:
                continue
            seen.add(id(op))
            cpu = set(op.supported_dtypes("cpu"))
            for d in cpu & set(REFUSED):
                OPINFO_RESTRICTED[str(d)] = OPINFO_RESTRICTED.get(str(d), 0) + 1
            op.dtypesIf[DEVICE] = type(op.dtypes)(tuple(d for d in cpu if d not in REFUSED))
            # There is no backward_dtypesIf for PrivateUse1 (it falls back to the CPU's list); only tpu classes are
            # instantiated in this process, so narrowing the list itself is narrowing tpu's.
            if op.backward_dtypes is not None:
                op.backward_dtypes = {d for d in op.backward_dtypes if d not in REFUSED}


if not CPU_TWIN:
    _restrict_opinfos()
_orig_get_dtypes = cdt.PrivateUse1TestBase._get_dtypes.__func__


def _get_dtypes(cls, test):
    dtypes = _orig_get_dtypes(cls, test)
    if dtypes is None:
        return None
    kept = [d for d in dtypes if not _refuses(d)]
    _count_dropped([d for d in dtypes if _refuses(d)])
    return kept


if not CPU_TWIN:
    cdt.PrivateUse1TestBase._get_dtypes = classmethod(_get_dtypes)


# CONFORMANCE_BYPASS_CUDA_ONLY=1 (conformance.py --bypass-cuda-only): run the @onlyCUDA tests too, to see how tpu
# fares on them (jiterator, CUDA-vs-CPU mixing and other CUDA features fail by nature).
BYPASS_CUDA_ONLY = os.environ.get("CONFORMANCE_BYPASS_CUDA_ONLY") == "1"


class _AcceleratorRestrictionsBypassed:
    """PrivateUse1TestBase.bypass_device_restrictions, answered per restriction: True for an @onlyOn naming
    accelerators in general (test_compare_cpu is @onlyOn(["cuda", "xpu"]); such tests are what a new device backend
    should pass). False for an @onlyOn naming one device type: @onlyCPU (numpy interop, CPU kernels; they fail on
    CUDA as well) and @onlyCUDA / @onlyMPS (that backend's own features: jiterator, cuDNN, CUDA-vs-CPU mixing), so
    those skip with PyTorch's own reason ("Only runs on cuda")."""

    def __get__(self, obj, cls):
        restriction = sys._getframe(1).f_locals.get("self")  # onlyOn's only_fn reads us: its onlyOn is `self`
        if isinstance(restriction, cdt.onlyOn):
            types = restriction.device_type
            types = [types] if isinstance(types, str) else list(types)
            accelerators = [t for t in types if t != "cpu"]
            return len(accelerators) >= 2 or (BYPASS_CUDA_ONLY and accelerators == ["cuda"])
        return True


if not CPU_TWIN:
    cdt.PrivateUse1TestBase.bypass_device_restrictions = _AcceleratorRestrictionsBypassed()


# ---- 4. per-test records and timeout ------------------------------------------------------------------------------
LOG = os.environ.get("CONFORMANCE_LOG")
TIMEOUT_S = int(os.environ.get("CONFORMANCE_TIMEOUT", "0") or 0)
_log_file = open(LOG, "a", buffering=1) if LOG else None
_current = {}


class TestTimeout(BaseException):
    """BaseException so the test's own `except Exception` cannot swallow it."""


def _emit(rec):
    if _log_file:
        _log_file.write(json.dumps(rec) + "\n")
        _log_file.flush()
        os.fsync(_log_file.fileno())


def pytest_addoption(parser):
    parser.addoption("--conformance-done", default=None,
                     help="file of test ids (one a line) already run: deselected")
    parser.addoption("--conformance-max", type=int, default=0, help="stop after this many tests (0: all)")
    parser.addoption("--conformance-every", type=int, default=1,
                     help="run every n-th collected test only (a systematic sample across all classes)")


_session = {}


def pytest_sessionstart(session):
    _session["s"] = session
    _session["n"] = 0


def pytest_collection_modifyitems(session, config, items):
    every = config.getoption("--conformance-every")
    if every > 1:  # by collection index, before the done ones go, so a resumed run keeps the same sample
        config.hook.pytest_deselected(items=[it for i, it in enumerate(items) if i % every])
        items[:] = items[::every]
    path = config.getoption("--conformance-done")
    if path and os.path.exists(path):
        with open(path) as f:
            done = {line.rstrip("\n") for line in f}
        kept = [it for it in items if it.nodeid not in done]
        if len(kept) != len(items):
            config.hook.pytest_deselected(items=[it for it in items if it.nodeid in done])
            items[:] = kept
    _emit({"collected": len(items), "every": every, "not_instantiated": NOT_INSTANTIATED,
           "opinfo_restricted": OPINFO_RESTRICTED,
           "refused": sorted(str(d) for d in REFUSED)})


def _on_alarm(signum, frame):
    raise TestTimeout(f"over the per-test timeout of {TIMEOUT_S} s")


def pytest_runtest_logstart(nodeid, location):
    _current.clear()
    _current.update(id=nodeid, t0=time.time(), outcome="pass", msg="")
    _emit({"start": nodeid})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if TIMEOUT_S:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(TIMEOUT_S)
    try:
        yield
    finally:
        if TIMEOUT_S:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def _message(report):
    lr = report.longrepr
    if lr is None:
        return ""
    if isinstance(lr, tuple):  # skip: (path, line, reason)
        return str(lr[2])
    crash = getattr(getattr(lr, "reprcrash", None), "message", None)
    return crash if crash else str(lr)[-2000:]


def pytest_runtest_logreport(report):
    if not _current:
        return
    if report.when == "call" and hasattr(report, "wasxfail"):
        _current.update(outcome="xfail" if report.skipped else "xpass", msg=report.wasxfail or "")
        return
    if report.failed:
        msg = _message(report)
        if "TestTimeout" in msg or "per-test timeout" in msg:
            outcome = "timeout"
        elif report.when == "call" and msg.split("\n")[0].strip() in ("Unexpected success",
                                                                       "Failed: Unexpected success"):
            outcome = "xpass"  # a unittest.expectedFailure that passed (pytest reports it as a failure)
        else:
            outcome = "fail" if report.when == "call" else "error"
        if _current["outcome"] == "pass":  # the first failing phase names the outcome
            _current.update(outcome=outcome, msg=msg)
    elif report.skipped and _current["outcome"] == "pass":
        _current.update(outcome="skip", msg=_message(report))


def pytest_runtest_logfinish(nodeid, location):
    if _current.get("id") == nodeid:
        _emit({"id": nodeid, "outcome": _current["outcome"], "msg": _current["msg"][:2000],
               "s": round(time.time() - _current["t0"], 3)})
        _current.clear()
        s = _session.get("s")
        _session["n"] = _session.get("n", 0) + 1
        limit = s.config.getoption("--conformance-max") if s else 0
        if limit and _session["n"] >= limit:
            s.shouldstop = f"conformance: chunk of {limit} tests done"
