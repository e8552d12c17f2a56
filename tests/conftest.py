"""Shared fixtures for the tpu capability tests.

The suite compares tpu results with PyTorch's CPU results, so matmuls and convolutions run at torchtpu's EXACT
precision (plain f32, as the CPU computes them) instead of the TPU DEFAULT: set here once, for this process and the
interpreters the tests start (TORCHTPU_PRECISION), never by loosening a tolerance. tests/test_precision.py checks
each TPU precision against a float64 reference instead.

Every test runs with the eager mode, the precision, the CPU-fallback policy and the current device restored
afterwards, so a test that switches them cannot leak into the next one. `assert_same(tpu, cpu)` compares a device
result with the CPU reference (dtype, shape and values; exact unless a tolerance is given).
"""
import os
import subprocess
import sys
import warnings

os.environ["TORCHTPU_PRECISION"] = "exact"

import pytest  # noqa: E402
import torch  # noqa: E402
import torchtpu  # noqa: E402  (registers the tpu device)

torchtpu.set_precision("exact")  # torch (and torchtpu with it) may have been imported before the line above

# "host" or "pjrt" (TORCHTPU_DRIVER). A few properties are the host driver's own: bit-for-bit equal results of a
# fused window and a compiled graph, a division kept a division, executables holding scratch memory; tests of
# them ask for it here. XLA (pjrt) fuses each program its own way and may rewrite x / c as x * (1 / c).
DRIVER = torchtpu._C.driver_name()

# Tests that only spawn child processes with settings of their own give the same result in every CI pass
# (.ci/run); they run in the default pass alone: no eager mode, driver or opaque-buffer override in the environment.
DEFAULT_PASS = not any(os.environ.get(k) for k in ("TORCHTPU_EAGER_MODE", "TORCHTPU_DRIVER", "TORCHTPU_HOST_OPAQUE"))
default_pass_only = pytest.mark.skipif(not DEFAULT_PASS, reason="runs its own child processes; once, in CI's default pass")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # `from tests.models import ...` and `examples/` work from any cwd


@pytest.fixture(autouse=True)
def _restore_tpu_state():
    mode = torch.tpu.get_eager_mode()
    fallback = torchtpu._C.get_cpu_fallback()
    dev = torch.tpu.current_device()
    precision = (torchtpu._C.get_process_precision(), torchtpu._C.get_thread_precision())
    yield
    failed = None
    try:
        torch.tpu.synchronize()
    except Exception as e:  # queued work the test never waited for failed: the test did not pass
        failed = e
    finally:
        torchtpu._C.set_cpu_fallback(fallback)
        torchtpu._C.set_precision(precision[0])
        torchtpu._C.set_thread_precision(precision[1])
        torch.tpu.set_device(dev)
        torchtpu.set_eager_mode(mode)  # the process mode, and drops a thread override the test left
    if failed is not None:
        pytest.fail(f"queued tpu work failed at the test's final synchronize: {type(failed).__name__}: {failed}",
                    pytrace=False)


def assert_same(got, want, rtol=0.0, atol=0.0, check_dtype=True):
    """got: a tpu tensor (or anything torch.as_tensor takes); want: the CPU reference."""
    if isinstance(got, torch.Tensor):
        assert got.device.type == "tpu", f"expected a tpu tensor, got one on {got.device}"
        got = got.cpu()
    want = want if isinstance(want, torch.Tensor) else torch.as_tensor(want)
    if check_dtype:
        assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"shape {tuple(got.shape)} != {tuple(want.shape)}"
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True, check_dtype=check_dtype)


@pytest.fixture
def same():
    return assert_same


def run_python(code, env=None, timeout=120):
    """Runs `python3 -c code` in a fresh interpreter (env added to os.environ); returns the CompletedProcess."""
    full = dict(os.environ)
    for k in ("TORCHTPU_EAGER_MODE", "TPU_LAUNCH_BLOCKING", "TORCHTPU_HOST_DEVICES", "TORCHTPU_HOST_MEMORY_LIMIT",
              "TORCHTPU_CPU_FALLBACK", "TORCH_DEVICE_BACKEND_AUTOLOAD"):
        full.pop(k, None)
    full["PYTHONPATH"] = ROOT + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


@pytest.fixture
def python():
    return run_python


@pytest.fixture
def no_fallback_warnings():
    """Turns torchtpu's fallback warnings into nothing, for tests that do not care which ops are native."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="torchtpu: operator")
        yield
