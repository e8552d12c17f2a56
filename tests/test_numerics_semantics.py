"""PyTorch semantics the review and PyTorch's own suite found wrong in the C core (issue 5, items 8 and 10).

- bool tensors holding bytes other than 0 and 1 (PyTorch's test_non_standard_bool_values) read as True in every
  op, as on CPU;
- nll_loss / cross_entropy with an out-of-range target raise IndexError("Target t is out of bounds."), and
  gather / scatter / one_hot raise CPU's exception types and messages;
- output_mask: masked-off gradients of the backward ops are undefined (None), as on CPU;
- out= with a dtype the result cannot be cast to raises PyTorch's error;
- type promotion with a float64 default dtype gives float64 where CPU does.
"""
import pytest
import torch
import torch.nn.functional as F
import torchtpu


# ---- non-standard bools -----------------------------------------------------------------------------------------
BYTES = [2, 0, 255, 1, 7, 0, 128, 3, 0, 64, 1, 0]
OTHER = [1, 1, 0, 7, 0, 3, 0, 255, 0, 2, 0, 9]


def _odd_bool(vals, device):
    """A bool tensor whose bytes are vals (any non-zero byte means True)."""
    return torch.tensor(vals, dtype=torch.uint8).view(torch.bool).to(device)


A = torch.arange(len(BYTES), dtype=torch.float32) - 3.5

# name -> f(x, y, a): x, y bool (non-standard on tpu), a float32, all of length 12.
BOOL_OPS = {
    "logical_not": lambda x, y, a: torch.logical_not(x),
    "bitwise_not": lambda x, y, a: ~x,
    "logical_and": lambda x, y, a: torch.logical_and(x, y),
    "logical_or": lambda x, y, a: torch.logical_or(x, y),
    "logical_xor": lambda x, y, a: torch.logical_xor(x, y),
    "and": lambda x, y, a: x & y,
    "or": lambda x, y, a: x | y,
    "xor": lambda x, y, a: x ^ y,
    "eq": lambda x, y, a: x == y,
    "ne": lambda x, y, a: x != y,
    "lt": lambda x, y, a: x < y,
    "ge": lambda x, y, a: x >= y,
    "eq_scalar": lambda x, y, a: x == True,  # noqa: E712
    "add": lambda x, y, a: x + y,
    "mul": lambda x, y, a: x * y,
    "maximum": lambda x, y, a: torch.maximum(x, y),
    "minimum": lambda x, y, a: torch.minimum(x, y),
    "to_int32": lambda x, y, a: x.int(),
    "to_int64": lambda x, y, a: x.long(),
    "to_uint8": lambda x, y, a: x.to(torch.uint8),
    "to_float": lambda x, y, a: x.float(),
    "to_bfloat16": lambda x, y, a: x.bfloat16(),
    "add_int": lambda x, y, a: x + 1,
    "mul_float": lambda x, y, a: x * a,
    "sub_from_int": lambda x, y, a: 3 - x.long(),
    "where": lambda x, y, a: torch.where(x, a, -a),
    "where_scalar": lambda x, y, a: torch.where(x, 1.0, 0.0),
    "masked_fill": lambda x, y, a: a.masked_fill(x, 9.0),
    "masked_index": lambda x, y, a: a[x],
    "masked_select": lambda x, y, a: torch.masked_select(a, x),
    "masked_scatter": lambda x, y, a: torch.zeros_like(a).masked_scatter(x, a),
    "index_put_mask": lambda x, y, a: a.clone().index_put_((x,), torch.tensor(5.0, device=a.device)),
    "nonzero": lambda x, y, a: torch.nonzero(x),
    "all": lambda x, y, a: x.all(),
    "any": lambda x, y, a: x.any(),
    "all_dim": lambda x, y, a: x.reshape(3, 4).all(1),
    "any_dim": lambda x, y, a: x.reshape(3, 4).any(0),
    "sum": lambda x, y, a: x.sum(),
    "sum_dim": lambda x, y, a: x.reshape(3, 4).sum(1),
    "count_nonzero": lambda x, y, a: torch.count_nonzero(x),
    "amax": lambda x, y, a: x.amax(),
    "amin": lambda x, y, a: x.amin(),
    "max_dim": lambda x, y, a: x.reshape(3, 4).max(1).values,
    "cumsum": lambda x, y, a: x.cumsum(0),
    "prod": lambda x, y, a: x.prod(),
    "mean_float": lambda x, y, a: x.float().mean(),
    "matmul_float": lambda x, y, a: x.float() @ a,
    "dot_int": lambda x, y, a: (x.long() * y.long()).sum(),
    "select_x_y": lambda x, y, a: torch.where(x, y, False).view(torch.uint8) != 0,
    "abs_int": lambda x, y, a: x.long().abs(),
    "neg_float": lambda x, y, a: -x.float(),
    "sign": lambda x, y, a: torch.sign(x.float()),
    "clamp_int": lambda x, y, a: x.int().clamp(0, 1),
    "bool_to_bool": lambda x, y, a: x.bool().logical_not(),
    "unique": lambda x, y, a: torch.unique(x.long()),
    "sort": lambda x, y, a: torch.sort(x.long()).values,
    "argsort_stable": lambda x, y, a: torch.argsort(x.long(), stable=True),
    "topk": lambda x, y, a: torch.topk(x.float(), 3).values,
    "float_mask_mul": lambda x, y, a: a * x,
    "softmax_masked": lambda x, y, a: torch.softmax(a.masked_fill(~x, float("-inf")), 0),
    "addcmul": lambda x, y, a: torch.addcmul(a, x.float(), y.float()),
    "logical_and_float": lambda x, y, a: torch.logical_and(x, a),
    "bitwise_and_int": lambda x, y, a: x.long() & 3,
    "eq_int": lambda x, y, a: x.long() == 1,
    "stack": lambda x, y, a: torch.stack([x, y]).long(),
    "cat": lambda x, y, a: torch.cat([x, y]).long(),
    "flip": lambda x, y, a: x.flip(0).long(),
    "pad_int": lambda x, y, a: F.pad(x.long(), (1, 1)),
    "dropout_p0": lambda x, y, a: F.dropout(x.float(), 0.0),
    "bool_eq_float": lambda x, y, a: x == (a > 0),
}

# ops whose result copies input bytes (CPU keeps them too): compared as bool values, not bytes
COPIES = {"masked_index_bool", "select_x_y"}


@pytest.mark.parametrize("name", sorted(BOOL_OPS))
@pytest.mark.parametrize("source", ["moved", "viewed_on_device"])
def test_non_standard_bools_read_as_true(name, source):
    """The op on bools whose bytes are 2, 7, 255... equals the op on the normalized bools (x != 0) on CPU."""
    f = BOOL_OPS[name]
    x_cpu = torch.tensor(BYTES, dtype=torch.uint8) != 0
    y_cpu = torch.tensor(OTHER, dtype=torch.uint8) != 0
    want = f(x_cpu, y_cpu, A)
    if source == "moved":
        x, y = _odd_bool(BYTES, "tpu"), _odd_bool(OTHER, "tpu")
    else:  # written as uint8 on the device, then viewed as bool there
        x = torch.tensor(BYTES, dtype=torch.uint8, device="tpu").view(torch.bool)
        y = torch.zeros(len(OTHER), dtype=torch.uint8, device="tpu")
        y.copy_(torch.tensor(OTHER, dtype=torch.uint8))
        y = y.view(torch.bool)
    assert x.view(torch.uint8).cpu().tolist() == BYTES  # the bytes really are non-standard
    got = f(x, y, A.to("tpu"))
    assert isinstance(got, torch.Tensor) and got.device.type == "tpu"
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype == torch.bool and name not in COPIES:
        # computed bools are canonical bytes, like CPU's
        assert got.view(torch.uint8).tolist() == want.view(torch.uint8).tolist(), name
    else:
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)


def test_fill_through_a_uint8_view_makes_true_bools():
    x = torch.zeros(100, dtype=torch.bool, device="tpu")
    x.view(torch.uint8).fill_(7)
    assert bool(x.all()) and int(x.sum()) == 100 and int(x.long().sum()) == 100
    assert not bool((~x).any())
    assert torch.equal(torch.where(x, 1, 0).cpu(), torch.ones(100, dtype=torch.int64))
    big = torch.zeros(200_000, dtype=torch.bool, device="tpu")
    big.view(torch.uint8).fill_(255)
    assert bool(big.all()) and int(big.sum()) == 200_000


# ---- nll_loss / cross_entropy targets, gather / scatter / one_hot errors ---------------------------------------
def _both(fn):
    """(cpu exception, tpu exception) of fn(device); the tpu side synchronizes so queued work is checked."""
    errs = []
    for dev in ("cpu", "tpu"):
        try:
            r = fn(dev)
            if isinstance(r, torch.Tensor):
                r.cpu()
            torch.tpu.synchronize()
            errs.append(None)
        except Exception as e:  # noqa: BLE001 - compared below
            errs.append(e)
    return errs


def _assert_same_error(fn, match=None):
    cpu_e, tpu_e = _both(fn)
    assert cpu_e is not None, "CPU did not raise"
    assert tpu_e is not None, f"tpu did not raise (CPU raised {type(cpu_e).__name__}: {cpu_e})"
    assert type(tpu_e) is type(cpu_e), (type(tpu_e), tpu_e, type(cpu_e), cpu_e)
    cpu_msg = str(cpu_e).splitlines()[0]
    assert cpu_msg in str(tpu_e), (str(tpu_e), cpu_msg)
    if match:
        assert match in str(tpu_e)


@pytest.mark.parametrize("mode", ["debug", "strict"])
@pytest.mark.parametrize("case", ["1d", "2d", "negative", "spatial", "weighted", "none", "cross_entropy", "backward"])
def test_nll_loss_with_an_out_of_range_target_raises_index_error(case, mode):
    torchtpu.set_eager_mode(mode)
    g = torch.Generator().manual_seed(0)
    x2 = torch.randn(3, 5, generator=g)
    x4 = torch.randn(2, 5, 3, 3, generator=g)
    w = torch.rand(5, generator=g)

    def run(dev):
        if case == "1d":
            return F.nll_loss(x2[0].to(dev), torch.tensor(9, device=dev))
        if case == "2d":
            return F.nll_loss(x2.to(dev), torch.tensor([1, 7, 2], device=dev))
        if case == "negative":
            return F.nll_loss(x2.to(dev), torch.tensor([1, -1, 2], device=dev))
        if case == "spatial":
            t = torch.zeros(2, 3, 3, dtype=torch.long)
            t[1, 2, 0] = 5
            return F.nll_loss(x4.to(dev), t.to(dev))
        if case == "weighted":
            return F.nll_loss(x2.to(dev), torch.tensor([1, 5, 2], device=dev), weight=w.to(dev))
        if case == "none":
            return F.nll_loss(x2.to(dev), torch.tensor([1, 7, 2], device=dev), reduction="none")
        if case == "cross_entropy":
            return F.cross_entropy(x2.to(dev), torch.tensor([0, 1, 6], device=dev))
        if case == "backward":
            x = x2.to(dev).requires_grad_()
            F.cross_entropy(x, torch.tensor([0, 1, 6], device=dev)).backward()
            return x.grad

    _assert_same_error(run, match="is out of bounds")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_honours_ignore_index_out_of_range_or_not(reduction):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 5, generator=g).log_softmax(1)
    for ignore, tgt in [(-100, [1, -100, 4, 0]), (7, [1, 7, 4, 7]), (2, [2, 2, 4, 0]), (-1, [-1, 3, 0, 0])]:
        t = torch.tensor(tgt)
        want = F.nll_loss(x, t, ignore_index=ignore, reduction=reduction)
        got = F.nll_loss(x.to("tpu"), t.to("tpu"), ignore_index=ignore, reduction=reduction).cpu()
        torch.testing.assert_close(got, want)
        xg = x.clone().requires_grad_()
        F.cross_entropy(xg, t, ignore_index=ignore, reduction=reduction).sum().backward()
        xt = x.to("tpu").requires_grad_()
        F.cross_entropy(xt, t.to("tpu"), ignore_index=ignore, reduction=reduction).sum().backward()
        torch.testing.assert_close(xt.grad.cpu(), xg.grad)


GATHER_SCATTER_ERRORS = {
    "gather_high": lambda d: torch.gather(torch.ones(3, 4, device=d), 1, torch.tensor([[5]], device=d)),
    "gather_negative": lambda d: torch.gather(torch.ones(3, 4, device=d), 1, torch.tensor([[-1]], device=d)),
    "gather_float_index": lambda d: torch.gather(torch.ones(3, 4, device=d), 1, torch.tensor([[1.0]], device=d)),
    "gather_bad_dim": lambda d: torch.gather(torch.ones(3, 4, device=d), 3, torch.tensor([[1]], device=d)),
    "gather_1d": lambda d: torch.gather(torch.arange(5.0, device=d), 0, torch.tensor([7, 1], device=d)),
    "scatter_high": lambda d: torch.zeros(3, 4, device=d).scatter_(1, torch.tensor([[5]], device=d), 1.0),
    "scatter_negative": lambda d: torch.zeros(3, 4, device=d).scatter(1, torch.tensor([[-5]], device=d),
                                                                      torch.ones(1, 1, device=d)),
    "scatter_add_high": lambda d: torch.zeros(3, 4, device=d).scatter_add(1, torch.tensor([[5]], device=d),
                                                                          torch.ones(1, 1, device=d)),
    "scatter_reduce_high": lambda d: torch.zeros(3, 4, device=d).scatter_reduce(
        1, torch.tensor([[4]], device=d), torch.ones(1, 1, device=d), "amax"),
    "one_hot_too_big": lambda d: F.one_hot(torch.tensor([1, 5], device=d), 3),
    "one_hot_negative": lambda d: F.one_hot(torch.tensor([1, -1], device=d), 3),
    "one_hot_float": lambda d: F.one_hot(torch.tensor([1.0, 2.0], device=d), 3),
    "one_hot_bad_classes": lambda d: F.one_hot(torch.tensor([1, 2], device=d), -2),
    "one_hot_empty": lambda d: F.one_hot(torch.tensor([], dtype=torch.long, device=d)),
}


@pytest.mark.parametrize("mode", ["debug", "strict"])
@pytest.mark.parametrize("name", sorted(GATHER_SCATTER_ERRORS))
def test_gather_scatter_and_one_hot_raise_cpus_exception(name, mode):
    torchtpu.set_eager_mode(mode)
    if name.startswith("one_hot") and name not in ("one_hot_float", "one_hot_empty"):
        # ATen's own one_hot reads the values (min / max, a sync) only on CPU; on accelerators it checks
        # num_classes and lets the scatter it runs catch bad values, as on CUDA. Same RuntimeError, and the
        # message names the out-of-range class.
        cpu_e, tpu_e = _both(GATHER_SCATTER_ERRORS[name])
        assert type(cpu_e) is type(tpu_e) is RuntimeError, (cpu_e, tpu_e)
        return
    _assert_same_error(GATHER_SCATTER_ERRORS[name])


# ---- output_mask ------------------------------------------------------------------------------------------------
def _backward_cases(dev):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 6, generator=g).to(dev)
    go = torch.randn(4, 6, generator=g).to(dev)
    w = torch.randn(6, generator=g).to(dev)
    b = torch.randn(6, generator=g).to(dev)
    out, mean, rstd = torch.ops.aten.native_layer_norm(x, [6], w, b, 1e-5)
    yield "layer_norm", lambda m: torch.ops.aten.native_layer_norm_backward(go, x, [6], mean, rstd, w, b, m)
    xb = torch.randn(4, 3, 5, generator=g).to(dev)
    gb = torch.randn(4, 3, 5, generator=g).to(dev)
    wb = torch.rand(3, generator=g).to(dev)
    rm, rv = torch.zeros(3).to(dev), torch.ones(3).to(dev)
    _, sm, si = torch.ops.aten.native_batch_norm(xb, wb, None, rm.clone(), rv.clone(), True, 0.1, 1e-5)
    yield "batch_norm", lambda m: torch.ops.aten.native_batch_norm_backward(gb, xb, wb, rm, rv, sm, si, True, 1e-5, m)
    xg = torch.randn(2, 4, 3, generator=g).to(dev)
    gg = torch.randn(2, 4, 3, generator=g).to(dev)
    wg = torch.rand(4, generator=g).to(dev)
    _, gm, gr = torch.ops.aten.native_group_norm(xg, wg, None, 2, 4, 3, 2, 1e-5)
    yield "group_norm", lambda m: torch.ops.aten.native_group_norm_backward(gg, xg, gm, gr, wg, 2, 4, 3, 2, m)
    xc = torch.randn(1, 2, 5, 5, generator=g).to(dev)
    wc = torch.randn(3, 2, 3, 3, generator=g).to(dev)
    gc = torch.randn(1, 3, 3, 3, generator=g).to(dev)
    yield "convolution", lambda m: torch.ops.aten.convolution_backward(
        gc, xc, wc, [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, m)


MASKS = [[True, False, False], [False, True, False], [False, False, True], [True, True, True], [False, True, True]]


@pytest.mark.parametrize("op", ["layer_norm", "batch_norm", "group_norm", "convolution"])
def test_output_mask_leaves_masked_gradients_undefined_like_cpu(op):
    cpu = dict(_backward_cases("cpu"))[op]
    tpu = dict(_backward_cases("tpu"))[op]
    for m in MASKS:
        want, got = cpu(m), tpu(m)
        for k in range(3):
            if want[k] is None:
                assert got[k] is None, (op, m, k)
            else:
                assert got[k] is not None, (op, m, k)
                torch.testing.assert_close(got[k].cpu(), want[k], rtol=1e-4, atol=1e-5)


def test_output_mask_of_a_real_backward_returns_no_weight_gradient_for_a_frozen_weight():
    ln = torch.nn.LayerNorm(8).to("tpu")
    ln.weight.requires_grad_(False)
    x = torch.randn(4, 8, device="tpu", requires_grad=True)
    ln(x).sum().backward()
    assert ln.weight.grad is None and ln.bias.grad is not None and x.grad is not None
    ref = torch.nn.LayerNorm(8)
    ref.weight.requires_grad_(False)
    xr = x.detach().cpu().requires_grad_()
    ref(xr).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), xr.grad, rtol=1e-5, atol=1e-6)


# ---- out= casting -----------------------------------------------------------------------------------------------
OUT_CASES = {
    "sin_int_to_long": (lambda x, out: torch.sin(x, out=out), torch.arange(4), torch.long),
    "add_float_to_long": (lambda x, out: torch.add(x, 1.5, out=out), torch.arange(4.0), torch.long),
    "div_int_to_long": (lambda x, out: torch.div(x, 2, out=out), torch.arange(4), torch.long),
    "mul_float_to_bool": (lambda x, out: torch.mul(x, 2.0, out=out), torch.arange(4.0), torch.bool),
    "exp_float_to_int": (lambda x, out: torch.exp(x, out=out), torch.arange(4.0), torch.int32),
    "sqrt_int_to_int": (lambda x, out: torch.sqrt(x, out=out), torch.arange(4), torch.int64),
    "mean_float_to_long": (lambda x, out: torch.mean(x, 0, out=out), torch.arange(4.0), torch.long),
    "sigmoid_int_to_long": (lambda x, out: torch.sigmoid(x, out=out), torch.arange(4), torch.long),
    "true_divide_int": (lambda x, out: torch.true_divide(x, 2, out=out), torch.arange(4), torch.long),
    # TensorIterator's unary ops demand the same dtype ("Found dtype Double but expected Float")
    "neg_float_to_double": (lambda x, out: torch.neg(x, out=out), torch.arange(4.0), torch.float64),
    "neg_long_to_float": (lambda x, out: torch.neg(x, out=out), torch.arange(4), torch.float32),
    "floor_float_to_double": (lambda x, out: torch.floor(x, out=out), torch.arange(4.0), torch.float64),
    "abs_long_to_float": (lambda x, out: torch.abs(x, out=out), torch.arange(4), torch.float32),
    "cat_float_to_uint8": (lambda x, out: torch.cat([x, x], out=out), torch.arange(4.0), torch.uint8),  # TypeError
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out_with_a_dtype_the_result_cannot_be_cast_to_raises_like_cpu(name):
    f, x, odt = OUT_CASES[name]

    def run(dev):
        out = torch.empty(x.shape[:1] if "mean" not in name and "sum" not in name else (), dtype=odt, device=dev)
        return f(x.to(dev), out)

    _assert_same_error(run)


def test_out_with_a_castable_dtype_gives_cpus_values():
    x = torch.arange(6.0) - 2.5
    for odt in (torch.float64, torch.float32, torch.bfloat16):
        out = torch.empty(6, dtype=odt, device="tpu")
        torch.sin(x.to("tpu"), out=out)
        torch.testing.assert_close(out.cpu(), torch.sin(x).to(odt), rtol=1e-2, atol=1e-3)
    out = torch.empty(6, dtype=torch.float64, device="tpu")
    torch.add(torch.arange(6, device="tpu"), 2, out=out)
    assert out.cpu().tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    # reductions cast even float -> int, as CPU does
    x = torch.arange(12.0).reshape(3, 4) / 7
    out, out_cpu = torch.empty(0, dtype=torch.long, device="tpu"), torch.empty(0, dtype=torch.long)
    torch.sum(x.to("tpu"), 1, out=out)
    torch.sum(x, 1, out=out_cpu)  # CPU casts each element to long first: [0, 1, 4]
    assert out.cpu().tolist() == out_cpu.tolist() == [0, 1, 4]


def test_softshrink_keeps_nan_and_the_sign_of_zero_like_cpu():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.3, -0.7, 0.5, -0.5, 2.0, -2.0])
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        want = F.softshrink(x.to(dt))
        got = F.softshrink(x.to(dt).to("tpu")).cpu()
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(got.nan_to_num().view(torch.int16 if dt != torch.float32 else torch.int32),
                           want.nan_to_num().view(torch.int16 if dt != torch.float32 else torch.int32))


def test_view_as_complex_raises_the_refused_dtype_type_error():
    with pytest.raises(TypeError, match="tpu does not support tensors of dtype ComplexFloat"):
        torch.view_as_complex(torch.zeros(3, 2, device="tpu"))
    with pytest.raises(RuntimeError, match="only supported for float and double tensors"):
        torch.view_as_complex(torch.zeros(3, 2, dtype=torch.long, device="tpu"))


def test_views_of_more_dims_than_the_device_kernels_take_copy_like_cpu():
    """PyTorch allows 25 dims; the device kernels take TT_MAX_RANK (8). Strided views beyond that move through the
    host: to the CPU, from it, and device-to-device (clone, contiguous, view of a transposed tensor)."""
    c = torch.rand(4, 2, 5, 1, 6, 2, 9, 3).transpose(-1, 2).transpose(-2, 3)
    t = c.to("tpu")
    shape = [8, 1, 3, 3, 3, 4, 1, 3, 5]
    assert torch.equal(t.view(*shape).cpu(), c.view(*shape))
    assert torch.equal(t.view(*shape).clone().cpu(), c.view(*shape))
    z = torch.randn(2, 1, 2, 1, 2, 1, 2, 1, 2)
    zt = z.to("tpu").transpose(0, 8)
    assert torch.equal(zt.contiguous().cpu(), z.transpose(0, 8).contiguous())
    dst = torch.zeros(2, 1, 2, 1, 2, 1, 2, 1, 2, device="tpu").transpose(0, 8)
    dst.copy_(z.transpose(0, 8) * 3)  # host -> a strided device view
    assert torch.equal(dst.cpu(), z.transpose(0, 8) * 3)


# ---- default dtype float64 --------------------------------------------------------------------------------------
DEFAULT_DTYPE_CASES = {
    "int_times_float": lambda d: torch.arange(3, device=d) * 1.5,
    "int_div_float": lambda d: torch.arange(3, device=d) / 2.0,
    "true_divide_ints": lambda d: torch.true_divide(torch.arange(3, device=d), 2),
    "div_ints": lambda d: torch.arange(3, device=d) / torch.arange(1, 4, device=d),
    "int_plus_float": lambda d: torch.arange(3, device=d) + 0.5,
    "bool_plus_float": lambda d: torch.ones(3, dtype=torch.bool, device=d) + 0.5,
    "float32_times_float": lambda d: torch.ones(3, device=d, dtype=torch.float32) * 1.5,
    "int_pow_float": lambda d: torch.arange(3, device=d) ** 0.5,
    "sqrt_int": lambda d: torch.sqrt(torch.arange(3, device=d)),
    "sigmoid_int": lambda d: torch.sigmoid(torch.arange(3, device=d)),
    "atan2_ints": lambda d: torch.atan2(torch.arange(3, device=d), torch.arange(1, 4, device=d)),
    "zeros": lambda d: torch.zeros(3, device=d),
    "ones": lambda d: torch.ones(2, 2, device=d),
    "full_float": lambda d: torch.full((2,), 1.5, device=d),
    "full_int": lambda d: torch.full((2,), 3, device=d),
    "arange_float": lambda d: torch.arange(0, 1, 0.25, device=d),
    "linspace": lambda d: torch.linspace(0, 1, 5, device=d),
    "eye": lambda d: torch.eye(3, device=d),
    "tensor_float": lambda d: torch.tensor([1.5, 2.0], device=d),
    "scalar_tensor": lambda d: torch.scalar_tensor(2.5, device=d),
    "zero_dim_float_times_int": lambda d: torch.tensor(1.5, device=d) * torch.arange(3, device=d),
    "where_int_float": lambda d: torch.where(torch.arange(3, device=d) > 0, torch.arange(3, device=d), 0.5),
    "cat_int": lambda d: torch.cat([torch.arange(2, device=d), torch.arange(2, device=d)]) * 1.0,
    "mean_of_float_cast": lambda d: torch.arange(4, device=d).to(torch.get_default_dtype()).mean(),
    "float_of_int": lambda d: torch.arange(3, device=d).float(),
    "lerp": lambda d: torch.lerp(torch.zeros(3, device=d), torch.ones(3, device=d), 0.25),
}


@pytest.fixture
def float64_default():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.mark.parametrize("name", sorted(DEFAULT_DTYPE_CASES))
def test_float64_default_dtype_promotes_like_cpu(name, float64_default):
    f = DEFAULT_DTYPE_CASES[name]
    want = f("cpu")
    got = f("tpu")
    assert got.device.type == "tpu"
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    torch.testing.assert_close(got.cpu(), want)


def test_mean_of_ints_raises_like_cpu_under_float64_default(float64_default):
    _assert_same_error(lambda d: torch.arange(4, device=d).mean())


def test_default_dtype_is_read_per_op():
    """Switching the default dtype back and forth between ops changes the next op's result (no stale cache)."""
    old = torch.get_default_dtype()
    try:
        for dt in (torch.float64, torch.float32, torch.float64):
            torch.set_default_dtype(dt)
            assert (torch.arange(3, device="tpu") * 1.5).dtype == dt
            assert torch.zeros(2, device="tpu").dtype == dt
    finally:
        torch.set_default_dtype(old)


def test_a_python_number_first_keeps_the_result_on_tpu():
    """torch.div(5, t): the 5 is a wrapped CPU scalar tensor and comes first; results stay on t's device, as on
    CUDA (PyTorch's cpu_fallback alone would return them on the CPU)."""
    t = torch.tensor([[3, -4, 5, 2, 7]])
    for f in (lambda x: torch.div(5, x, rounding_mode="floor"), lambda x: torch.floor_divide(5, x),
              lambda x: torch.remainder(5, x), lambda x: torch.div(5, x)):
        got = f(t.to("tpu"))
        assert got.device.type == "tpu"
        assert torch.equal(got.cpu(), f(t))


@pytest.mark.parametrize("make", ["empty_affine", "quantize_on_tpu", "move_to_tpu"])
def test_quantized_dtypes_are_refused_like_every_dtype_the_core_lacks(make):
    f = {
        "empty_affine": lambda: torch._empty_affine_quantized([5, 5], scale=2, zero_point=3, dtype=torch.quint8,
                                                              device="tpu"),
        "quantize_on_tpu": lambda: torch.quantize_per_tensor(torch.randn(3, device="tpu"), 0.1, 5, torch.qint8),
        "move_to_tpu": lambda: torch.quantize_per_tensor(torch.randn(3), 0.1, 5, torch.qint32).to("tpu"),
    }[make]
    with pytest.raises(TypeError, match=r"tpu does not support tensors of dtype Q(UInt8|Int8|Int32)"):
        f()


def test_cpu_fallback_keeps_the_layout_of_views_with_gaps():
    """_linalg_det factors A or A^T by A.is_contiguous() and its backward decides the same way on the device
    tensor, so a view with gaps must reach the CPU kernel as such (PyTorch's cpu_fallback would make it contiguous
    and the gradient wrong)."""
    a = torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    grads = {}
    for dev in ("cpu", "tpu"):
        wide = a.to(dev).repeat_interleave(2, dim=-1)
        x = wide[..., ::2].detach().requires_grad_()  # strides (10, 2)
        d = torch.linalg.det(x)
        (grads[dev],) = torch.autograd.grad(d, x)
    torch.testing.assert_close(grads["tpu"].cpu(), grads["cpu"], rtol=1e-5, atol=1e-5)


ERROR_CASES = {
    "cat_out_is_an_input": lambda d: torch.cat([torch.randn(4, 6, device=d), z := torch.zeros(4, 6, device=d)], out=z),
    "softshrink_negative_lambda": lambda d: F.softshrink(torch.ones(2, device=d), -0.5),
    "max_pool2d_negative_pad": lambda d: F.max_pool2d(torch.ones(1, 4, 4, device=d), 2, padding=-1),
    "max_pool2d_empty_channel": lambda d: F.max_pool2d(torch.ones(1, 0, 10, device=d), 1),
    "ldexp_would_resize_self": lambda d: torch.randn(0, 1, 3, device=d).ldexp_(torch.randn(2, 3, device=d)),
    "mul_out_is_an_input_of_another_shape": lambda d: torch.mul(a := torch.randn(0, 1, 3, device=d),
                                                                torch.randn(2, 3, device=d), out=a),
}


def test_layer_norm_statistics_are_in_the_accumulation_dtype_as_on_cuda():
    for dt, acc in ((torch.bfloat16, torch.float32), (torch.float16, torch.float32), (torch.float64, torch.float64)):
        x = torch.randn(4, 6, dtype=dt, device="tpu")
        out, mean, rstd = torch.native_layer_norm(x, (6,), None, None, 1e-5)
        assert (out.dtype, mean.dtype, rstd.dtype) == (dt, acc, acc)
        want = torch.native_layer_norm(x.cpu().to(acc), (6,), None, None, 1e-5)
        torch.testing.assert_close(mean.cpu(), want[1]), torch.testing.assert_close(rstd.cpu(), want[2])


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_bad_arguments_raise_cpus_error(name):
    _assert_same_error(ERROR_CASES[name])
