"""OpInfo conformance: every op_db entry x dtype, its samples on the tpu (CPU fallback off) against the CPU.

A test passes when every sample matches the CPU through the function, method and in-place variants, or both raise
the same exception type with PyTorch's message; it is skipped with "not native: aten::X" only when an op it needs
has no lowering at dispatch (or makes a dtype the tpu refuses at allocation); any other exception while running is
a failure, and so are wrong numbers. Cases listed in tests/opinfo_known_failures.txt are xfail (strict=False), or
skipped unrun when their reason starts with "crash".

Environment: OPINFO_DTYPES (comma list, default float32,bfloat16,int64,bool), OPINFO_OPS (comma list of op names),
OPINFO_MAX_SAMPLES (default: every sample), OPINFO_TIMEOUT (seconds per case, default 300), OPINFO_STRICT=1 (fail
"close" results: float32 within 1e-3 / bfloat16 within 5e-2 but not the default tolerance), OPINFO_VARIANTS
(default method,inplace: also x.op(...) and x.clone().op_(...); empty for the function alone).
"""
import os
import warnings

import pytest

from opinfo_harness import DTYPES, cases, known_reason, load_known_failures, run_case  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
KNOWN = load_known_failures(os.path.join(_HERE, "opinfo_known_failures.txt"))
_DTYPES = tuple(d for d in os.environ.get("OPINFO_DTYPES", ",".join(DTYPES)).split(",") if d)
_STRICT = os.environ.get("OPINFO_STRICT", "") == "1"  # "close" (within 1e-3 only) fails instead of warning
_OPS = [o for o in os.environ.get("OPINFO_OPS", "").split(",") if o] or None


def _params():
    out = []
    for c in cases(_DTYPES, _OPS):
        reason = known_reason(KNOWN, c)
        marks = []
        if reason is not None:
            if reason.lower().startswith("crash"):
                marks.append(pytest.mark.skip(reason=f"known crash: {reason}"))
            else:
                marks.append(pytest.mark.xfail(reason=reason or "known failure", strict=False))
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@pytest.mark.parametrize("case", _params())
def test_opinfo(case):
    r = run_case(case)
    if r.status == "pass":
        return
    if r.status == "close" and not _STRICT:
        warnings.warn(f"{case.id}: matches only at atol=rtol=1e-3: {r.detail[:200]}")
        return
    if r.status == "not_native":
        pytest.skip(f"not native: {r.missing or r.detail}")
    if r.status == "no_samples":
        pytest.skip(r.detail or "no samples")
    pytest.fail(f"{r.status} (sample {r.failing_sample}): {r.detail}\nreproduce: OPINFO_OPS={case.name} "
                f"OPINFO_DTYPES={case.dtype_name} python3 -m pytest tests/test_opinfo.py", pytrace=False)
