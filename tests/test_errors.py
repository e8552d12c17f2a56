"""Bad input is a Python exception a person can act on, never a crash: shapes, dtypes, indices, devices, memory,
and ops with no lowering when the CPU fallback is off."""
import inspect
import re
import warnings

import pytest
import torch
import torchtpu

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")


def both(fn):
    """Runs fn on CPU and on tpu; returns the two exceptions (CPU first). Both must raise."""
    excs = []
    for d in ("cpu", "tpu"):
        try:
            r = fn(d)
            if isinstance(r, torch.Tensor) and r.device.type == "tpu":
                r.cpu()
        except Exception as e:  # noqa: BLE001  (the type is what the test compares)
            excs.append(e)
        else:
            excs.append(None)
    assert excs[0] is not None, "the CPU reference did not raise"
    assert excs[1] is not None, f"tpu did not raise (CPU raised {type(excs[0]).__name__}: {excs[0]})"
    return excs


# ---- shapes ---------------------------------------------------------------------------------------------------
def test_broadcast_shape_mismatch_raises_runtime_error_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d) + torch.ones(4, device=d))
    assert type(tpu_e) is type(cpu_e) is RuntimeError
    assert "size" in str(tpu_e)


def test_matmul_shape_mismatch_raises_runtime_error_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d) @ torch.ones(4, 5, device=d))
    assert isinstance(tpu_e, RuntimeError)
    assert "2x3" in str(tpu_e) and "4x5" in str(tpu_e) or "shape" in str(tpu_e) or "size" in str(tpu_e)
    cpu_e, tpu_e = both(lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(4, device=d)))
    assert isinstance(tpu_e, RuntimeError)


def test_bad_view_and_reshape_raise_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d).view(4))
    assert type(tpu_e) is type(cpu_e)
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d).t().view(6))
    assert type(tpu_e) is type(cpu_e)


def test_cat_of_mismatched_shapes_raises_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.cat([torch.ones(2, 3, device=d), torch.ones(2, 4, device=d)]))
    assert isinstance(tpu_e, RuntimeError)


def test_bad_dimension_argument_raises_index_error_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d).sum(5))
    assert type(tpu_e) is type(cpu_e) is IndexError


# ---- dtypes -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.uint16, torch.uint32, torch.float8_e4m3fn],
                         ids=str)
def test_an_unsupported_dtype_raises_a_python_exception_and_does_not_crash(dtype):
    x = torch.zeros(3, dtype=dtype)
    try:
        t = x.to("tpu")
    except (TypeError, RuntimeError, NotImplementedError) as e:
        assert str(dtype).split(".")[-1] in str(e) or "dtype" in str(e).lower() or "type" in str(e).lower()
        return
    # accepted: then it must at least round-trip exactly
    assert t.dtype == dtype
    assert torch.equal(t.cpu().to(torch.float64) if dtype.is_complex is False else t.cpu(), x.to(torch.float64)
                       if dtype.is_complex is False else x)


def test_creating_an_unsupported_dtype_on_the_device_does_not_crash():
    try:
        t = torch.ones(3, dtype=torch.complex64, device="tpu")
        t.cpu()
    except (TypeError, RuntimeError, NotImplementedError):
        pass


def test_float_to_int_in_place_raises_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.ones(3, dtype=torch.int64, device=d).add_(torch.ones(3, device=d)))
    assert type(tpu_e) is type(cpu_e)


# ---- indices --------------------------------------------------------------------------------------------------
def test_integer_index_out_of_range_raises_index_error():
    cpu_e, tpu_e = both(lambda d: torch.arange(3, device=d)[10])
    assert type(cpu_e) is type(tpu_e) is IndexError
    cpu_e, tpu_e = both(lambda d: torch.arange(3, device=d)[-4])
    assert type(tpu_e) is IndexError


def test_select_and_narrow_out_of_range_raise_like_cpu():
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d).select(1, 3))
    assert type(tpu_e) is type(cpu_e)
    cpu_e, tpu_e = both(lambda d: torch.ones(2, 3, device=d).narrow(1, 2, 5))
    assert type(tpu_e) is type(cpu_e)


@pytest.mark.parametrize("op", ["index_select", "tensor index", "embedding", "take"])
@pytest.mark.parametrize("mode", ["debug", "strict"])
def test_out_of_range_tensor_index_raises_index_error_like_cpu(op, mode):
    """Index tensors are bounds-checked when the program runs: debug mode raises at the op, strict mode at the next
    sync point, both as IndexError naming the op, as CPU raises IndexError."""
    torchtpu.set_eager_mode(mode)
    x = torch.arange(5.0, device="tpu") + 1
    bad = torch.tensor([7, -9, 2], device="tpu")
    f = {
        "index_select": lambda: x.index_select(0, bad.abs()),
        "tensor index": lambda: x[bad.abs()],
        "embedding": lambda: torch.nn.functional.embedding(bad.abs(), x.reshape(5, 1)).flatten(),
        "take": lambda: torch.take(x, bad.abs()),
    }[op]
    with pytest.raises(IndexError, match="out of bounds"):
        f().cpu()


@pytest.mark.parametrize("mode", ["debug", "strict"])
def test_scatter_and_index_put_with_an_out_of_range_index_raise_like_cpu(mode):
    torchtpu.set_eager_mode(mode)
    with pytest.raises(RuntimeError, match="out of bounds"):  # CPU: RuntimeError for scatter (and gather)
        torch.zeros(3, device="tpu").scatter(0, torch.tensor([9], device="tpu"), torch.ones(1, device="tpu")).cpu()
    x = torch.zeros(3, device="tpu")
    with pytest.raises(IndexError, match="index_put"):
        x[torch.tensor([7])] = 1.0
        x.cpu()


def test_an_index_error_in_a_queued_op_names_the_op_and_is_raised_at_the_sync():
    torchtpu.set_eager_mode("strict")
    x = torch.arange(3.0, device="tpu")
    y = x[torch.tensor([5], device="tpu")]  # queued: returns before the program has run
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(IndexError, match=rf"aten::index\.Tensor \(recorded at .*test_errors\.py:{line}\): index 5 is out of bounds"):
        torch.tpu.synchronize()
    assert (x + 1).cpu().tolist() == [1.0, 2.0, 3.0]  # the error was collected; the device works on


# ---- devices ----------------------------------------------------------------------------------------------------
def test_mixing_a_tpu_tensor_and_a_cpu_tensor_raises_like_cuda():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(3, device="tpu") + torch.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(3) * torch.ones(3, device="tpu")


def test_mixing_devices_in_matmul_and_in_place_raises():
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(2, 2, device="tpu") @ torch.ones(2, 2)
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(3, device="tpu").add_(torch.ones(3))


def test_a_cpu_zero_dim_tensor_is_allowed_like_a_scalar():
    r = torch.ones(3, device="tpu") + torch.tensor(2.0)
    assert r.device.type == "tpu" and r.tolist() == [3.0, 3.0, 3.0]


# ---- memory -----------------------------------------------------------------------------------------------------
OOM = r"""
import torch, torchtpu
a = torch.empty(4 << 20, dtype=torch.uint8, device='tpu')   # 4 MiB: fits
try:
    b = torch.empty(64 << 20, dtype=torch.uint8, device='tpu')  # 64 MiB: over the 16 MiB limit
except torch.OutOfMemoryError as e:
    print('OOM', e)
else:
    print('NO OOM')
try:
    x = torch.ones(3 << 20, device='tpu')  # 12 MiB each, both held: the result does not fit beside its input
    c = x * 2
    c.cpu()
except torch.OutOfMemoryError as e:
    print('OOM2', e)
else:
    print('NO OOM2')
del x
import gc
gc.collect()  # the failed expression's tensors are held by the exception's traceback cycle until collected
d = torch.ones(1024, device='tpu') + 1
print('AFTER', d.sum().item())
"""


OOM_MODES = pytest.mark.parametrize("mode", ["strict", "fused"])


@OOM_MODES
def test_allocating_over_the_memory_limit_raises_out_of_memory_with_the_figures(python, mode):
    r = python(OOM, env={"TORCHTPU_HOST_MEMORY_LIMIT": str(16 << 20), "TORCHTPU_EAGER_MODE": mode})
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith(("OOM ", "NO OOM"))][0]
    assert line.startswith("OOM "), r.stdout
    assert str(64 << 20) in line or "64" in line, line  # the request
    assert str(16 << 20) in line or "16" in line, line  # the limit


@OOM_MODES
def test_out_of_memory_from_an_op_result_is_an_exception_and_the_device_keeps_working(python, mode):
    r = python(OOM, env={"TORCHTPU_HOST_MEMORY_LIMIT": str(16 << 20), "TORCHTPU_EAGER_MODE": mode})
    assert r.returncode == 0, r.stderr
    assert "OOM2" in r.stdout, r.stdout
    assert "AFTER 2048.0" in r.stdout


def test_out_of_memory_error_is_a_runtime_error_subclass():
    assert issubclass(torch.OutOfMemoryError, RuntimeError)


def test_a_bad_memory_limit_value_is_a_clear_error(python):
    r = python("import torch, torchtpu; torch.ones(1, device='tpu')", env={"TORCHTPU_HOST_MEMORY_LIMIT": "lots"})
    assert r.returncode != 0
    assert "TORCHTPU_HOST_MEMORY_LIMIT" in r.stderr


# ---- CPU fallback -----------------------------------------------------------------------------------------------
def _unlowered():
    """An op with no tpu lowering and no decomposition, and a call that reaches it."""
    candidates = [
        ("aten::_linalg_svd", lambda x: torch.linalg.svd(x)),
        ("aten::linalg_qr", lambda x: torch.linalg.qr(x)),
        ("aten::_linalg_det", lambda x: torch.linalg.det(x)),
        ("aten::_fft_r2c", lambda x: torch.fft.rfft(x)),
        ("aten::cholesky", lambda x: torch.cholesky(x @ x.t() + torch.eye(4, device=x.device))),
    ]
    for name, fn in candidates:
        if not torchtpu._C.has_lowering(name):
            return name, fn
    pytest.skip("every candidate op has a lowering now; pick another unlowered op")


def test_an_op_without_a_lowering_raises_not_implemented_when_fallback_is_off():
    name, fn = _unlowered()
    x = torch.randn(4, 4).to("tpu")
    with torch.tpu.cpu_fallback_mode(False):
        with pytest.raises(NotImplementedError, match=name):
            fn(x)
    assert torchtpu._C.get_cpu_fallback() is True


def test_the_fallback_error_says_how_to_turn_the_fallback_on():
    name, fn = _unlowered()
    with torch.tpu.cpu_fallback_mode(False):
        with pytest.raises(NotImplementedError) as ei:
            fn(torch.randn(4, 4).to("tpu"))
    assert "not implemented for TPU" in str(ei.value)
    assert "TORCHTPU_CPU_FALLBACK" in str(ei.value) or "cpu_fallback_mode" in str(ei.value)


def test_an_op_without_a_lowering_runs_on_cpu_when_fallback_is_on_warns_once_and_is_counted():
    name, fn = _unlowered()
    x = torch.randn(4, 4)
    torchtpu.reset_metrics()
    with torch.tpu.cpu_fallback_mode(True):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r1 = fn(x.to("tpu"))
            r2 = fn(x.to("tpu"))
    ours = [x_ for x_ in w if "torchtpu: operator" in str(x_.message)]
    assert len(ours) == 1, [str(x_.message) for x_ in w]
    assert name in str(ours[0].message)
    fb = torchtpu.metrics()["fallbacks"]
    assert sum(v for k, v in fb.items() if k.startswith(name)) == 2, fb  # the op or its out= form
    want = fn(x)
    for got, ref in zip(r1 if isinstance(r1, tuple) else (r1,), want if isinstance(want, tuple) else (want,)):
        assert got.device.type == "tpu"
        torch.testing.assert_close(got.cpu(), ref, rtol=1e-4, atol=1e-4)


def test_cpu_fallback_off_from_the_environment(python):
    code = ("import torch, torchtpu\n"
            "try:\n"
            "    torch.linalg.svd(torch.randn(3, 3).to('tpu'))\n"
            "except NotImplementedError as e:\n"
            "    print('NIE', e)\n"
            "print('NATIVE', (torch.ones(2, device='tpu') + 1).tolist())\n")
    r = python(code, env={"TORCHTPU_CPU_FALLBACK": "0"})
    assert r.returncode == 0, r.stderr
    if torchtpu._C.has_lowering("aten::_linalg_svd"):
        pytest.skip("svd has a lowering now")
    assert "NIE" in r.stdout and "svd" in r.stdout
    assert "NATIVE [2.0, 2.0]" in r.stdout


def test_an_out_tensor_on_another_device_raises_like_cuda():
    a = torch.ones(3, device="tpu")
    with pytest.raises(RuntimeError, match="same device"):
        torch.add(a, a, out=torch.empty(3))


# ---- the fallback says whether a lowering exists ----------------------------------------------------------------
def test_the_missing_op_error_has_googles_message_and_the_hint():
    name, fn = _unlowered()
    with torch.tpu.cpu_fallback_mode(False):
        with pytest.raises(NotImplementedError) as ei:
            fn(torch.randn(4, 4).to("tpu"))
    msg = str(ei.value)
    assert re.search(rf"'{re.escape(name)}(\.\w+)?' is not implemented for TPU", msg), msg  # Google's wording
    assert re.search(r"operator '([^']+)' is not implemented for TPU", msg), msg  # the OpInfo harness's pattern
    assert "no native tpu lowering" in msg and "TORCHTPU_CPU_FALLBACK" in msg


def _rank9():
    return torch.ones([1] * 8 + [2]).to("tpu")


def test_a_lowering_that_declines_the_arguments_is_named_in_the_fallback_warning():
    x = _rank9()
    assert torchtpu._C.has_lowering("aten::neg")
    torchtpu.reset_metrics()
    with torch.tpu.cpu_fallback_mode(True):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = torch.neg(x)
    assert r.cpu().flatten().tolist() == [-1.0, -1.0]
    ours = [str(m.message) for m in w if "torchtpu: operator 'aten::neg" in str(m.message)]
    assert len(ours) == 1, [str(m.message) for m in w]
    assert "has a native tpu lowering" in ours[0] and "declined" in ours[0] and "rank 9" in ours[0], ours[0]
    assert "has no native tpu lowering" not in ours[0]


def test_a_declined_op_with_the_fallback_off_says_what_was_declined():
    x = _rank9()
    with torch.tpu.cpu_fallback_mode(False):
        with pytest.raises(NotImplementedError) as ei:
            torch.neg(x)
    msg = str(ei.value)
    assert "'aten::neg' is not implemented for TPU" in msg
    assert "declined" in msg and "rank 9" in msg and "TORCHTPU_CPU_FALLBACK" in msg
