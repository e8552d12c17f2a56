"""Op-conformance checks over PyTorch's OpInfo database, shared by tests/test_opinfo.py and tools/opinfo_report.py.

One case is one (OpInfo entry, dtype). Its samples run on the CPU (the reference) and on the tpu with the CPU
fallback off, so a missing lowering shows up as NotImplementedError naming the aten op instead of a silent CPU run.
"""
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass, field

import torch
import torchtpu  # noqa: F401  (registers the device)

from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_device_type import toleranceOverride

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "int64": torch.int64, "bool": torch.bool}

# Every sample runs (OPINFO_MAX_SAMPLES=n caps them, for a quick local look only).
MAX_SAMPLES = int(os.environ.get("OPINFO_MAX_SAMPLES", "0")) or None
MAX_SAMPLE_NUMEL = 1 << 22  # samples bigger than this are skipped: op_db has a few, they only cost time on 2 cores
# A guard against hangs, not a budget: max_pool2d's 1440 samples take ~50 s on a busy 2-core machine.
CASE_TIMEOUT_S = int(os.environ.get("OPINFO_TIMEOUT", "300"))
# Ways to call each op beyond its function variant: "method" (x.op(...)) and "inplace" (x.clone().op_(...)).
VARIANTS = tuple(v for v in os.environ.get("OPINFO_VARIANTS", "method,inplace").split(",") if v)

# Ops whose values are random or uninitialized: only shape, dtype and device are compared, except for the samples
# whose randomness is switched off (see _randomness_off), which are compared by value.
NONDETERMINISTIC = {
    "bernoulli", "normal", "rand_like", "randn_like", "randint_like", "randint", "randn", "rand", "multinomial",
    "uniform", "exponential", "geometric", "cauchy", "log_normal", "randperm",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout", "nn.functional.rrelu", "nn.functional.gumbel_softmax",
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
    "nn.functional.multi_head_attention_forward",
    "empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted", "resize_", "resize_as_",
    "torch.empty", "_refs.empty", "svd_lowrank", "pca_lowrank",
}

# Ops whose index outputs are not unique when the input has ties: positions (op name -> index of `dim` among the
# positional args after the input, its default). Indices are checked by what they point at, not compared.
TIE_AMBIGUOUS = {"sort": (0, -1), "argsort": (0, -1), "topk": (1, -1), "kthvalue": (1, -1), "median": (0, None),
                 "nanmedian": (0, None), "mode": (0, -1)}

# (atol, rtol) by result dtype; float32 is assert_close's own default; CLOSE_TOL is the looser bar of "close".
TOLERANCES = {torch.float32: (1.3e-6, 1e-5), torch.bfloat16: (1.6e-2, 1.6e-2), torch.int64: (0.0, 0.0),
              torch.bool: (0.0, 0.0)}
CLOSE_TOL = {torch.float32: (1e-3, 1e-3), torch.bfloat16: (5e-2, 5e-2)}

_UNSUPPORTED_DTYPE = re.compile(r"tpu does not support (?:tensors of )?dtype (\w+)")
# "'aten::X' is not implemented for TPU" is Google TorchTPU's wording; ours says "operator 'aten::X' is not
# implemented for TPU (...)" around it. Only this (and the dispatcher's own "Could not run") means no lowering.
_MISSING_RE = re.compile(r"'([^']+)' is not implemented for TPU")

# Default `training` of the functional forms, and where each op's randomness is switched off.
_DROPOUTS = {"nn.functional.dropout": True, "nn.functional.dropout2d": True, "nn.functional.dropout3d": True,
             "nn.functional.alpha_dropout": False, "nn.functional.feature_alpha_dropout": False}


def _randomness_off(op_name, sample):
    """True when this sample of a NONDETERMINISTIC op computes a deterministic result: dropout with p=0 or
    training=False, rrelu outside training (or lower == upper), multi_head_attention_forward without dropout."""
    kw = sample.kwargs
    if op_name in _DROPOUTS:
        return kw.get("p", 0.5) == 0 or not kw.get("training", _DROPOUTS[op_name])
    if op_name == "nn.functional.rrelu":
        return not kw.get("training", False) or kw.get("lower", 1 / 8) == kw.get("upper", 1 / 3)
    if op_name == "nn.functional.multi_head_attention_forward":  # dropout_p is the 11th argument (args[9])
        p = sample.args[9] if len(sample.args) > 9 else kw.get("dropout_p", 0.0)
        return p == 0 or not kw.get("training", True)
    return False


@dataclass
class Case:
    op: object
    dtype_name: str

    @property
    def name(self):
        v = self.op.variant_test_name
        return self.op.name + ("." + v if v else "")

    @property
    def id(self):
        return f"{self.name}-{self.dtype_name}"


@dataclass
class Result:
    status: str  # pass | close | wrong | error | not_native | timeout | no_samples
    detail: str = ""
    missing: str = ""  # first aten op with no lowering (not_native)
    n_samples: int = 0
    n_run: int = 0
    seconds: float = 0.0
    failing_sample: int = -1
    extra: dict = field(default_factory=dict)


def cases(dtype_names=("float32",), ops=None):
    """Every (OpInfo, dtype) pair whose dtype the OpInfo supports on the CPU, in op_db order."""
    out = []
    for op in op_db:
        if ops and op.name not in ops and Case(op, "").name not in ops:
            continue
        try:
            supported = op.supported_dtypes("cpu")
        except Exception:
            continue
        for dn in dtype_names:
            if DTYPES[dn] in supported:
                out.append(Case(op, dn))
    return out


def load_known_failures(path):
    """{(name, dtype): reason} from lines "opname dtype reason..."; dtype may be * for all. '#' starts a comment."""
    known = {}
    if not os.path.exists(path):
        return known
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) < 2:
                continue
            known[(parts[0], parts[1])] = parts[2] if len(parts) > 2 else ""
    return known


def known_reason(known, case):
    return known.get((case.name, case.dtype_name), known.get((case.name, "*")))


def _opinfo_tolerance(op, dtype):
    """The largest (atol, rtol) any toleranceOverride decorator of the OpInfo sets for dtype, or None."""
    best = None
    for di in getattr(op, "decorators", ()) or ():
        for d in getattr(di, "decorators", ()) or ():
            if isinstance(d, toleranceOverride) and dtype in d.d:
                t = d.d[dtype]
                best = (t.atol, t.rtol) if best is None else (max(best[0], t.atol), max(best[1], t.rtol))
    return best


def tolerances(op, dtype, loose=False):
    """tol(out_dtype) -> (atol, rtol) for a case of input dtype `dtype`: chosen by each result's dtype (cos of an
    int64 tensor is compared as float32), widened by the OpInfo's own override for `dtype` on float results, and
    to CLOSE_TOL for float32 results when `loose`."""
    own = _opinfo_tolerance(op, dtype)

    def tol(out_dtype):
        if out_dtype is None:  # a Python float: computed in double on the CPU, float32 on the device
            out_dtype = torch.float32
        if not (out_dtype.is_floating_point or out_dtype.is_complex):
            return (0.0, 0.0)
        atol, rtol = TOLERANCES.get(out_dtype, TOLERANCES[torch.float32])
        if own:
            atol, rtol = max(atol, own[0]), max(rtol, own[1])
        if loose and out_dtype in CLOSE_TOL:
            atol, rtol = max(atol, CLOSE_TOL[out_dtype][0]), max(rtol, CLOSE_TOL[out_dtype][1])
        return atol, rtol

    return tol


class _Timeout(BaseException):
    """BaseException: the alarm may fire inside the CPU reference call, whose `except Exception` would otherwise
    record it as the CPU raising."""


def _on_alarm(signum, frame):
    raise _Timeout()


def _numel(x):
    if isinstance(x, torch.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return sum(_numel(v) for v in x)
    if isinstance(x, dict):
        return sum(_numel(v) for v in x.values())
    return 0


def _is_tpu_device(v):
    try:
        return isinstance(v, (str, torch.device)) and torch.device(v).type == "tpu"
    except (RuntimeError, ValueError, TypeError):
        return False


def _is_cpu_device(v):
    try:
        return isinstance(v, (str, torch.device)) and torch.device(v).type == "cpu"
    except (RuntimeError, ValueError, TypeError):
        return False


def _to_cpu_sample(x):
    """The CPU reference of a sample made on the tpu: tpu tensors copied to the CPU, tpu device names -> "cpu"
    (tensors the sample generator put on the CPU on purpose stay there)."""
    if isinstance(x, torch.Tensor):
        with torch.no_grad():
            if x.device.type != "tpu":
                return x.detach().clone()
            if x._base is not None:  # keep the view's place in its storage (as_strided samples depend on it)
                return x._base.detach().cpu().as_strided(x.size(), x.stride(), x.storage_offset())
            return x.detach().cpu()
    if _is_tpu_device(x):
        return "cpu" if isinstance(x, str) else torch.device("cpu")
    if isinstance(x, list):
        return [_to_cpu_sample(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_to_cpu_sample(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_cpu_sample(v) for k, v in x.items()}
    return x


def _mentions_tpu(x):
    if _is_tpu_device(x) or (isinstance(x, torch.Tensor) and x.device.type == "tpu"):
        return True
    if isinstance(x, (list, tuple)):
        return any(_mentions_tpu(v) for v in x)
    if isinstance(x, dict):
        return any(_mentions_tpu(v) for v in x.values())
    return False


def _mentions_cpu(x):
    if _is_cpu_device(x):
        return True
    if isinstance(x, torch.Tensor):
        return x.device.type == "cpu" and x.dim() > 0
    if isinstance(x, (list, tuple)):
        return any(_mentions_cpu(v) for v in x)
    if isinstance(x, dict):
        return any(_mentions_cpu(v) for v in x.values())
    return False


def _to_cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu() if x.device.type == "tpu" else x
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        vals = [_to_cpu(v) for v in x]
        if hasattr(x, "_fields"):  # namedtuple (torch.return_types are structseqs: plain tuple of values is fine)
            return type(x)(*vals)
        return type(x)(vals) if isinstance(x, list) else tuple(vals)
    return x


class Mismatch(AssertionError):
    pass


def _devices(x, acc):
    if isinstance(x, torch.Tensor):
        acc.add(x.device.type)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _devices(v, acc)
    return acc


def _exact(out_dtype):
    return (0.0, 0.0)


def compare(actual, expected, tol, shape_only=False, path="out"):
    """assert_close recursively over tuples/lists, with tol(result dtype) -> (atol, rtol); actual is on the CPU."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise Mismatch(f"{path}: expected a tensor, got {type(actual).__name__}")
        if shape_only:
            if actual.shape != expected.shape or actual.dtype != expected.dtype:
                raise Mismatch(f"{path}: expected {tuple(expected.shape)} {expected.dtype}, "
                               f"got {tuple(actual.shape)} {actual.dtype}")
            return
        atol, rtol = tol(expected.dtype)
        try:
            torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=True, check_device=False,
                                       check_layout=False)
        except AssertionError as e:
            raise Mismatch(f"{path}: {e}") from None
        return
    if isinstance(expected, (list, tuple)) and not isinstance(expected, torch.Size):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            raise Mismatch(f"{path}: expected a sequence of {len(expected)}, got {type(actual).__name__}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, tol, shape_only, f"{path}[{i}]")
        return
    if isinstance(expected, (bool, int, float, complex)) and not shape_only:
        if isinstance(actual, torch.Tensor):
            actual = actual.item()
        atol, rtol = tol(None) if isinstance(expected, (float, complex)) else (0.0, 0.0)
        try:
            torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=True, check_dtype=False)
        except (AssertionError, TypeError) as e:
            raise Mismatch(f"{path}: {e}") from None
        return
    if isinstance(expected, torch.Size) and tuple(actual) != tuple(expected):
        raise Mismatch(f"{path}: expected {expected}, got {actual}")


def _tie_equivalent(op_name, sample, actual, expected):
    """True when actual's indices point at the same values as expected's (ties broken differently)."""
    pos, default = TIE_AMBIGUOUS[op_name]
    dim = sample.kwargs.get("dim", sample.args[pos] if len(sample.args) > pos else default)
    if dim is None:
        return False
    keepdim = sample.kwargs.get("keepdim", False)
    if op_name in ("kthvalue",) and len(sample.args) > 2:
        keepdim = sample.args[2]
    elif op_name in ("median", "nanmedian", "mode") and len(sample.args) > 1:
        keepdim = sample.args[1]
    x = sample.input
    if op_name == "argsort":
        a_idx, e_idx = actual, expected
    else:
        compare(actual[0], expected[0], _exact)  # values must match exactly
        a_idx, e_idx = actual[1], expected[1]
    if op_name in ("sort", "argsort", "topk") or keepdim or x.dim() == 0:
        ga, ge = a_idx, e_idx
    else:
        ga, ge = a_idx.unsqueeze(dim), e_idx.unsqueeze(dim)
    if x.dim() == 0:
        return bool(torch.equal(a_idx, e_idx))
    va, ve = x.gather(dim, ga), x.gather(dim, ge)
    if torch.equal(va, ve):
        return True
    nan = va.isnan()
    return bool(torch.equal(nan, ve.isnan()) and torch.equal(va[~nan], ve[~nan]))


_WIDER = {torch.bfloat16: torch.float32, torch.float32: torch.float64}


def _widen(dtype):
    def f(t):
        return t.to(_WIDER[dtype]) if isinstance(t, torch.Tensor) and t.dtype == dtype else t
    return f


def _narrow(x, dtype):
    if isinstance(x, torch.Tensor):
        return x.to(dtype) if x.dtype == _WIDER[dtype] else x
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        vals = [_narrow(v, dtype) for v in x]
        return type(x)(vals) if isinstance(x, list) else tuple(vals)
    return x


# Results tpu gives in the accumulation dtype where the CPU gives the input's reduced precision, on purpose: CUDA's
# dtypes (and what PyTorch's reference implementations expect of every device but the CPU). {op name: result
# indices}. Such a result must be float32 for a bf16/f16 input; its value is compared after rounding to CPU's dtype.
ACC_DTYPE_RESULTS = {"native_layer_norm": (1, 2)}


def _as_cuda_dtypes(op_name, actual, expected):
    idx = ACC_DTYPE_RESULTS.get(op_name)
    if not idx or not isinstance(actual, (list, tuple)) or not isinstance(expected, (list, tuple)):
        return actual
    out = list(actual)
    for i in idx:
        a, e = out[i], expected[i]
        if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and e.dtype in (torch.bfloat16, torch.float16):
            if a.dtype != torch.float32:
                raise Mismatch(f"out[{i}]: expected float32 (the accumulation dtype, as on CUDA), got {a.dtype}")
            out[i] = a.to(e.dtype)
    return type(actual)(out) if isinstance(actual, tuple) else out


def _matches_upcast(fn, cpu_sample, dtype, actual, tol):
    """A result that matches the computation done one precision up (bf16 -> f32, f32 -> f64) and rounded once is
    right, not wrong: several CPU bf16 kernels (conv_transpose, grid_sampler) accumulate in bf16, and float32
    kernels sum in other orders."""
    try:
        ref = _narrow(_call(fn, cpu_sample.transform(_widen(dtype))), dtype)
        compare(actual, ref, tol)
        return True
    except Exception:
        return False


def _short(e, n=300):
    s = f"{type(e).__name__}: {e}".replace("\n", " ")
    return s if len(s) <= n else s[:n] + "..."


_OTHER_MISSING = (re.compile(r"Could not run '(aten::[^']+)' with arguments from the '(?:PrivateUse1|tpu)' backend"),)


_LOWERED_BASES = None


def has_lowering(aten_name):
    """True when some C lowering of the op's base name exists ("aten::arange.start_out" reaches the functional
    aten::arange.start_step through the shim's out= handling), so a fallback on it means a lowering declined these
    arguments (or the shim did not match the overload) rather than a missing lowering."""
    global _LOWERED_BASES
    try:
        if _LOWERED_BASES is None:
            _LOWERED_BASES = {n.split(".")[0] for n in torchtpu._C.lowered_ops()}
        return aten_name.split(".")[0] in _LOWERED_BASES
    except Exception:
        return False


def _message_norm(s):
    return " ".join(str(s).split())


def same_message(cpu_exc, tpu_exc):
    """True when the tpu's message is PyTorch's: the CPU's message appears in ours, or its key part does (its first
    sentence or line, with the CPU's device name read as ours: "... on cpu" -> "... on tpu")."""
    c, t = _message_norm(cpu_exc), _message_norm(tpu_exc)
    if c in t:
        return True
    first = str(cpu_exc).strip().splitlines()[0] if str(cpu_exc).strip() else ""
    keys = {_message_norm(first), _message_norm(re.split(r"(?<=[.!?:])\s", first, maxsplit=1)[0])}
    for k in list(keys):
        for ours in ("tpu", f"tpu:{torch.tpu.current_device()}"):
            keys.add(re.sub(r"\bcpu\b", ours, k))
        keys.add(re.sub(r"\bCPU\b", "TPU", k))
    return any(k and len(k) >= 8 and k in t for k in keys)


def missing_op(exc):
    """The aten op a NotImplementedError names as having no tpu kernel, or ""."""
    s = str(exc)
    m = _MISSING_RE.search(s)
    if m:
        return m.group(1)
    for rx in _OTHER_MISSING:
        m = rx.search(s)
        if m:
            return m.group(1) if m.group(1).startswith("aten::") else "aten::" + m.group(1)
    return ""


def _call(op, sample):
    return op(sample.input, *sample.args, **sample.kwargs)


def _samples(op, dtype):
    """The first MAX_SAMPLES samples, made on the tpu (as test_compare_cpu makes them on its device), with the CPU
    fallback on so a sample generator needing a missing op still works."""
    try:
        with torch.tpu.cpu_fallback_mode(True):
            gen = op.sample_inputs("tpu", dtype, requires_grad=False)
            samples = list(itertools.islice(gen, MAX_SAMPLES)) if MAX_SAMPLES else list(gen)
            torch.tpu.synchronize()
        return samples, None
    except Exception as e:  # a sample generator that cannot run on this build of PyTorch
        return [], e


def run_sample(op, sample, dtype, shape_only, fallback=False, fn=None):
    """One sample of OpInfo `op`, called through fn (default: the OpInfo's function variant).
    Returns (status, detail, missing). status: pass | close | wrong | error | not_native."""
    fn = fn or op
    cpu_sample = sample.transform(lambda t: t)  # shallow copy; then the CPU reference by hand (device names too)
    cpu_sample.input = _to_cpu_sample(sample.input)
    cpu_sample.args = _to_cpu_sample(sample.args)
    cpu_sample.kwargs = _to_cpu_sample(sample.kwargs)
    tpu_sample = sample
    exp_exc = None
    try:
        expected = _call(fn, cpu_sample)
    except Exception as e:
        exp_exc = e
    act_exc = None
    actual = None
    try:
        with torch.tpu.cpu_fallback_mode(fallback):
            out = _call(fn, tpu_sample)
            torch.tpu.synchronize()
            devs = _devices(out, set())
            actual = _to_cpu(out)
    except _Timeout:
        raise
    except Exception as e:
        act_exc = e
    if act_exc is not None:
        # Only "no lowering" at dispatch, and a dtype the device refuses at allocation, are "not native"; any
        # other exception while running (a driver's UNSUPPORTED, a rank limit, ...) is an error.
        miss = missing_op(act_exc) if isinstance(act_exc, NotImplementedError) else ""
        if miss:
            return "not_native", miss, miss
        if _UNSUPPORTED_DTYPE.search(str(act_exc)) and isinstance(act_exc, TypeError):
            d = _UNSUPPORTED_DTYPE.search(str(act_exc)).group(1)
            return "not_native", f"dtype {d}", f"dtype:{d}"
        if exp_exc is not None:
            if type(exp_exc) is type(act_exc) and same_message(exp_exc, act_exc):
                return "pass", f"both raised {type(act_exc).__name__}", ""
            return "error", f"tpu raised {_short(act_exc, 200)}; CPU raised {_short(exp_exc, 200)}", ""
        return "error", _short(act_exc), ""
    if exp_exc is not None:
        return "error", f"CPU raised {_short(exp_exc)} but tpu did not", ""
    everything = (tpu_sample.input, tpu_sample.args, tpu_sample.kwargs)
    if "cpu" in devs and _mentions_tpu(everything) and not _mentions_cpu(everything):
        return "wrong", "a result tensor is on the cpu, not the tpu", ""
    try:
        actual = _as_cuda_dtypes(op.name, actual, expected)
        compare(actual, expected, tolerances(op, dtype), shape_only)
        return "pass", "", ""
    except Mismatch as e:
        first = str(e)
    if dtype in _WIDER and not shape_only and _matches_upcast(fn, cpu_sample, dtype, actual, tolerances(op, dtype)):
        return "pass", "", ""
    if op.name in TIE_AMBIGUOUS and not shape_only:
        try:
            if _tie_equivalent(op.name, cpu_sample, actual, expected):
                return "pass", "", ""
        except Exception:
            pass
    try:  # float results within CLOSE_TOL count as "close", whatever the input dtype
        compare(actual, expected, tolerances(op, dtype, loose=True), shape_only)
        return "close", first.replace("\n", " ")[:400], ""
    except Mismatch:
        pass
    return "wrong", first.replace("\n", " ")[:600], ""


_RANK = {"pass": 0, "close": 1, "not_native": 2, "wrong": 3, "error": 4}


def _variant_fns(op, variants):
    """[(label, callable)]: the function variant, then the requested method / in-place variants the OpInfo has."""
    out = [("", None)]
    if "method" in variants and op.method_variant is not None:
        out.append(("method", op.method_variant))
    if "inplace" in variants and op.inplace_variant is not None:
        inplace = op.inplace_variant
        out.append(("inplace", lambda x, *a, **k: inplace(x.clone(), *a, **k)))
    return out


def run_case(case, timeout=CASE_TIMEOUT_S, fallback=False, variants=None):
    """All samples of one case (each runs even after another failed). The case's status is its worst sample's:
    pass < close < not_native < wrong < error; `missing` is the first aten op found without a lowering.
    With fallback=True the CPU fallback stays on, and extra["fallbacks"] names the ops that used it."""
    op, dtype = case.op, DTYPES[case.dtype_name]
    nondeterministic = op.name in NONDETERMINISTIC or case.name in NONDETERMINISTIC
    t0 = time.time()
    if op.name.startswith(("sparse.", "to_sparse")) or "sparse" in case.name.split(".")[-1]:
        return Result("not_native", "sparse layouts are not supported on the tpu", "layout:sparse")
    old = signal.signal(signal.SIGALRM, _on_alarm) if timeout else None
    if timeout:
        signal.alarm(timeout)
    res = Result("no_samples")
    try:
        samples, err = _samples(op, dtype)
        if err is not None:
            m = _UNSUPPORTED_DTYPE.search(str(err))
            if m:
                res = Result("not_native", f"dtype {m.group(1)} (making samples)", f"dtype:{m.group(1)}")
            else:
                res = Result("error", f"making samples on the tpu: {_short(err)}")
            return res
        res.n_samples = len(samples)
        worst = "pass" if samples else "no_samples"
        for i, s in enumerate(samples):
            if _numel((s.input, s.args, s.kwargs)) > MAX_SAMPLE_NUMEL:
                continue
            res.n_run += 1
            random_sample = any(isinstance(s.kwargs.get(k), float) and s.kwargs[k] > 0
                                for k in ("dropout_p", "dropout"))
            shape_only = nondeterministic and not _randomness_off(op.name, s)
            for label, fn in _variant_fns(op, VARIANTS if variants is None else variants):
                if label == "inplace" and (not isinstance(s.input, torch.Tensor) or s.broadcasts_input):
                    continue  # in-place ops cannot broadcast their input (PyTorch's own tests skip these too)
                if fallback:  # count only the sample's own fallbacks, not those of making samples
                    torchtpu.reset_metrics()
                st, detail, miss = run_sample(op, s, dtype, shape_only or random_sample, fallback, fn)
                if fallback:
                    res.extra.setdefault("fallbacks", set()).update(torchtpu.metrics().get("fallbacks", {}))
                if st == "pass" and detail:
                    if not label:
                        res.extra["both_raised"] = res.extra.get("both_raised", 0) + 1
                    detail = ""
                if label and detail:
                    detail = f"[{label} variant] {detail}"
                if _RANK[st] > _RANK.get(worst, -1) or worst == "no_samples":
                    worst, res.detail, res.failing_sample = st, detail, i
                    if miss:
                        res.missing = miss
                if st == "not_native" and not res.missing:
                    res.missing = miss
        res.status = worst
        if res.n_run == 0 and samples:
            res.status, res.detail = "no_samples", "every sample is over the size cap"
        elif res.status == "pass" and res.extra.get("both_raised", 0) == res.n_run:
            res.status, res.detail = "no_samples", "every sample raises on the CPU too (nothing compared)"
    except _Timeout:
        res.status, res.detail = "timeout", f"over {timeout} s (after {res.n_run} samples)"
        try:
            torch.tpu.synchronize()
        except Exception:
            pass
    except Exception as e:
        res.status, res.detail = "error", "harness: " + _short(e)
    finally:
        if timeout:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        res.seconds = time.time() - t0
    return res
