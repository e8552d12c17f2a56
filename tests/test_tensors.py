"""Tensors on the tpu: copies, dtypes, views, in-place and out= ops, type promotion, scalars, printing, indexing
and creation. Every result is compared with the same computation on the CPU."""
import warnings

import pytest
import torch

from conftest import assert_same

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")

ALL_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int64, torch.int32, torch.int16,
              torch.int8, torch.uint8, torch.bool]


def sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 10).to(dtype)
    lo, hi = (0, 255) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


# ---- copies ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_copy_to_tpu_and_back_is_exact(dtype):
    x = sample((5, 7), dtype)
    y = x.to("tpu")
    assert y.dtype == dtype and y.device.type == "tpu"
    back = y.cpu()
    assert back.dtype == dtype
    assert torch.equal(back, x)


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d.is_floating_point], ids=str)
def test_special_float_values_survive_the_round_trip(dtype):
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-3, -2.5], dtype=dtype)
    back = x.to("tpu").cpu()
    assert torch.equal(torch.signbit(back), torch.signbit(x))
    torch.testing.assert_close(back, x, rtol=0, atol=0, equal_nan=True)


def test_empty_and_zero_dim_tensors_round_trip():
    e = torch.empty(0, 3)
    assert e.to("tpu").cpu().shape == (0, 3)
    s = torch.tensor(3.5)
    t = s.to("tpu")
    assert t.dim() == 0 and t.cpu().item() == 3.5


@pytest.mark.parametrize("kind", ["transposed", "stepped", "expanded", "offset", "permuted3d"])
def test_non_contiguous_cpu_source_copies_to_tpu(kind):
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    src = {
        "transposed": lambda: base.t(),
        "stepped": lambda: base[::2, 1::3],
        "expanded": lambda: base[0:1].expand(4, 10),
        "offset": lambda: base[2:, 3:],
        "permuted3d": lambda: base.reshape(3, 4, 5).permute(2, 0, 1),
    }[kind]()
    assert_same(src.to("tpu"), src.contiguous())


@pytest.mark.parametrize("kind", ["transposed", "stepped", "expanded", "offset"])
def test_non_contiguous_tpu_source_copies_to_cpu(kind):
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    f = {
        "transposed": lambda t: t.t(),
        "stepped": lambda t: t[::2, 1::3],
        "expanded": lambda t: t[0:1].expand(4, 10),
        "offset": lambda t: t[2:, 3:],
    }[kind]
    assert_same(f(base.to("tpu")), f(base))


def test_copy_into_a_non_contiguous_tpu_destination():
    cpu = torch.zeros(6, 8)
    tpu = cpu.to("tpu")
    src = torch.arange(12.0).reshape(3, 4)
    cpu[::2, 1::2].copy_(src)
    tpu[::2, 1::2].copy_(src)
    assert_same(tpu, cpu)
    cpu.t()[:4, :3].copy_(src.t())
    tpu.t()[:4, :3].copy_(src.t().to("tpu"))
    assert_same(tpu, cpu)


def test_copy_from_tpu_into_a_non_contiguous_cpu_destination():
    dst = torch.zeros(4, 6)
    src = torch.arange(12.0).reshape(3, 4).to("tpu")
    dst.t()[1:5, :3].copy_(src.t())
    want = torch.zeros(4, 6)
    want.t()[1:5, :3].copy_(torch.arange(12.0).reshape(3, 4).t())
    assert torch.equal(dst, want)


def test_copy_broadcasts_the_source():
    t = torch.zeros(3, 4, device="tpu")
    t.copy_(torch.arange(4.0))
    assert_same(t, torch.arange(4.0).expand(3, 4).contiguous())
    t.copy_(torch.tensor(7.0, device="tpu"))
    assert_same(t, torch.full((3, 4), 7.0))


@pytest.mark.parametrize("src_dtype,dst_dtype", [
    (torch.float32, torch.int32), (torch.float32, torch.bfloat16), (torch.int64, torch.float16),
    (torch.bool, torch.float32), (torch.float64, torch.uint8), (torch.int32, torch.bool), (torch.bfloat16, torch.float64),
], ids=str)
@pytest.mark.parametrize("src_on_tpu", [True, False], ids=["tpu2tpu", "cpu2tpu"])
def test_copy_converts_dtypes_like_cpu(src_dtype, dst_dtype, src_on_tpu):
    x = sample((4, 5), src_dtype, seed=3)
    if dst_dtype == torch.uint8:
        x = x.abs()
    want = torch.empty(4, 5, dtype=dst_dtype).copy_(x)
    got = torch.empty(4, 5, dtype=dst_dtype, device="tpu").copy_(x.to("tpu") if src_on_tpu else x)
    assert_same(got, want)


def test_to_with_dtype_and_device_at_once():
    x = torch.arange(6, dtype=torch.int64)
    assert_same(x.to("tpu", torch.float16), x.to(torch.float16))
    assert_same(x.to("tpu").to(torch.float32), x.float())
    assert_same(x.to("tpu").double().cpu().to("tpu"), x.double())


def test_clone_and_contiguous_produce_independent_storage():
    x = torch.arange(12.0).reshape(3, 4).to("tpu")
    c = x.t().contiguous()
    assert c.is_contiguous()
    k = x.clone()
    k.add_(1)
    assert_same(x, torch.arange(12.0).reshape(3, 4))
    assert_same(c, torch.arange(12.0).reshape(3, 4).t().contiguous())


# ---- views share storage ---------------------------------------------------------------------------------------
VIEWS = {
    "view": lambda t: t.view(4, 6),
    "reshape": lambda t: t.reshape(2, 12),
    "permute": lambda t: t.permute(1, 0),
    "transpose": lambda t: t.transpose(0, 1),
    "t": lambda t: t.t(),
    "narrow": lambda t: t.narrow(1, 2, 3),
    "select": lambda t: t.select(0, 3),
    "slice_step": lambda t: t[1::2, ::3],
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t.unsqueeze(0).squeeze(0),
    "as_strided": lambda t: t.as_strided((3, 3), (7, 1), 2),
    "unfold": lambda t: t.unfold(1, 2, 3),  # non-overlapping windows: in-place writes are well defined
    "diagonal": lambda t: t.diagonal(),
    "flatten": lambda t: t.flatten(),
    "unflatten": lambda t: t.unflatten(1, (2, 3)),
    "split": lambda t: t.split(2, dim=0)[1],
    "chunk": lambda t: t.chunk(3, dim=1)[2],
    "unbind": lambda t: t.unbind(1)[4],
    "movedim": lambda t: t.movedim(0, 1),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_a_view_reads_like_cpu_and_shares_the_base_storage(name):
    base_cpu = torch.arange(24.0).reshape(4, 6)
    base = base_cpu.to("tpu")
    v = VIEWS[name](base)
    assert v.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert v._base is base or v._base is None or v._base is base._base
    assert_same(v, VIEWS[name](base_cpu).contiguous() if False else VIEWS[name](base_cpu))


@pytest.mark.parametrize("name", list(VIEWS))
def test_in_place_op_on_a_view_is_visible_in_the_base(name):
    base_cpu = torch.arange(24.0).reshape(4, 6)
    base = base_cpu.to("tpu")
    VIEWS[name](base_cpu).mul_(-2).add_(1)
    VIEWS[name](base).mul_(-2).add_(1)
    assert_same(base, base_cpu)


@pytest.mark.parametrize("name", list(VIEWS))
def test_in_place_op_on_the_base_is_visible_in_a_view(name):
    base_cpu = torch.arange(24.0).reshape(4, 6)
    base = base_cpu.to("tpu")
    vc, vt = VIEWS[name](base_cpu), VIEWS[name](base)
    base_cpu.sub_(5).mul_(3)
    base.sub_(5).mul_(3)
    assert_same(vt, vc)


def test_expand_is_a_view_and_reads_broadcast_values():
    x = torch.arange(3.0).to("tpu")
    e = x.expand(4, 3)
    assert e.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert_same(e, torch.arange(3.0).expand(4, 3))
    x.add_(10)
    assert_same(e, (torch.arange(3.0) + 10).expand(4, 3))


def test_copy_into_a_view_writes_the_base():
    base_cpu = torch.zeros(4, 6)
    base = base_cpu.to("tpu")
    base_cpu[:, 2].copy_(torch.arange(4.0))
    base[:, 2].copy_(torch.arange(4.0).to("tpu"))
    base_cpu.diagonal().fill_(9)
    base.diagonal().fill_(9)
    assert_same(base, base_cpu)


def test_view_of_a_view_of_a_view_writes_through():
    base_cpu = torch.arange(120.0).reshape(4, 5, 6)
    base = base_cpu.to("tpu")
    for b in (base_cpu, base):
        b.permute(2, 0, 1)[1:5:2].select(2, 3).unsqueeze(0).zero_()
    assert_same(base, base_cpu)


def test_view_dtype_reinterprets_bits():
    x = torch.tensor([1.0, -2.0, 0.5])
    assert_same(x.to("tpu").view(torch.int32), x.view(torch.int32))


# ---- in-place and out= -----------------------------------------------------------------------------------------
INPLACE = {
    "add_": lambda t, o: t.add_(o, alpha=2),
    "sub_": lambda t, o: t.sub_(o),
    "mul_": lambda t, o: t.mul_(o),
    "div_": lambda t, o: t.div_(o.abs() + 1),
    "clamp_": lambda t, o: t.clamp_(-1, 0.5),
    "clamp_min_": lambda t, o: t.clamp_min_(0.1),
    "pow_": lambda t, o: t.abs_().pow_(1.5),
    "relu_": lambda t, o: t.relu_(),
    "sigmoid_": lambda t, o: t.sigmoid_(),
    "tanh_": lambda t, o: t.tanh_(),
    "exp_": lambda t, o: t.exp_(),
    "neg_": lambda t, o: t.neg_(),
    "fill_": lambda t, o: t.fill_(3.25),
    "zero_": lambda t, o: t.zero_(),
    "addcmul_": lambda t, o: t.addcmul_(o, o, value=0.5),
    "lerp_": lambda t, o: t.lerp_(o, 0.3),
    "masked_fill_": lambda t, o: t.masked_fill_(o > 0, -7.0),
    "copy_": lambda t, o: t.copy_(o),
    "scalar_add_": lambda t, o: t.add_(2.5),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_in_place_op_matches_cpu(name):
    a, o = sample((5, 6), torch.float32, 1) / 10, sample((5, 6), torch.float32, 2) / 10
    ta, to = a.to("tpu"), o.to("tpu")
    ptr = ta.untyped_storage().data_ptr()
    r = INPLACE[name](ta, to)
    INPLACE[name](a, o)
    assert r is ta
    assert ta.untyped_storage().data_ptr() == ptr
    assert_same(ta, a, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["add_", "mul_", "clamp_", "relu_", "fill_", "masked_fill_", "lerp_"])
def test_in_place_op_on_a_non_contiguous_view_matches_cpu(name):
    a, o = sample((6, 8), torch.float32, 1) / 10, sample((6, 8), torch.float32, 2) / 10
    ta, to = a.to("tpu"), o.to("tpu")
    INPLACE[name](a.t()[1::2], o.t()[::2])
    INPLACE[name](ta.t()[1::2], to.t()[::2])
    assert_same(ta, a, rtol=1e-6, atol=1e-6)


def test_in_place_op_with_a_broadcast_operand():
    a, b = sample((4, 5), torch.float32), sample((5,), torch.float32, 1)
    ta = a.to("tpu")
    ta.mul_(b.to("tpu"))
    a.mul_(b)
    assert_same(ta, a)


def test_in_place_op_whose_result_would_not_fit_raises_like_cpu():
    a = torch.ones(5, device="tpu")
    with pytest.raises(RuntimeError):
        a.add_(torch.ones(3, 5, device="tpu"))


def test_in_place_op_that_needs_a_float_result_in_an_int_tensor_raises_like_cpu():
    a = torch.ones(5, dtype=torch.int64)
    with pytest.raises(RuntimeError):
        a.add_(torch.full((5,), 0.5))
    with pytest.raises(RuntimeError):
        a.to("tpu").add_(torch.full((5,), 0.5, device="tpu"))


def test_in_place_int_tensor_with_float_scalar_raises_like_cpu():
    with pytest.raises(RuntimeError):
        torch.ones(3, dtype=torch.int32).mul_(1.5)
    with pytest.raises(RuntimeError):
        torch.ones(3, dtype=torch.int32, device="tpu").mul_(1.5)


def test_in_place_float_tensor_with_int_operand_keeps_its_dtype():
    a, b = torch.ones(4, dtype=torch.float16), torch.arange(4)
    ta = a.to("tpu")
    ta.add_(b.to("tpu"))
    a.add_(b)
    assert_same(ta, a)


def test_out_variant_writes_into_the_given_tensor():
    a, b = sample((3, 4), torch.float32), sample((3, 4), torch.float32, 1)
    out = torch.empty(3, 4, device="tpu")
    ptr = out.untyped_storage().data_ptr()
    r = torch.add(a.to("tpu"), b.to("tpu"), out=out)
    assert r is out and out.untyped_storage().data_ptr() == ptr
    assert_same(out, a + b)


def test_out_variant_of_the_wrong_size_is_resized():
    a, b = sample((3, 4), torch.float32), sample((3, 4), torch.float32, 1)
    out = torch.empty(0, device="tpu")
    torch.add(a.to("tpu"), b.to("tpu"), out=out)
    assert_same(out, a + b)
    out2 = torch.empty(100, device="tpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.mul(a.to("tpu"), b.to("tpu"), out=out2)
    assert_same(out2, a * b)


def test_resizing_a_non_empty_out_warns_like_cpu():
    a = sample((3, 4), torch.float32)
    with pytest.warns(UserWarning, match="resized"):
        torch.mul(a, a, out=torch.empty(100))
    with pytest.warns(UserWarning, match="resized"):
        torch.mul(a.to("tpu"), a.to("tpu"), out=torch.empty(100, device="tpu"))


def test_out_variant_of_a_wider_dtype_converts():
    a, b = sample((3, 4), torch.int32), sample((3, 4), torch.int32, 1)
    out = torch.empty(3, 4, dtype=torch.float64, device="tpu")
    torch.add(a.to("tpu"), b.to("tpu"), out=out)
    assert_same(out, torch.add(a, b, out=torch.empty(3, 4, dtype=torch.float64)))


def test_out_variant_with_a_float_result_into_an_int_tensor_raises_like_cpu():
    a = sample((3,), torch.float32)
    with pytest.raises(RuntimeError):
        torch.add(a, a, out=torch.empty(3, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        torch.add(a.to("tpu"), a.to("tpu"), out=torch.empty(3, dtype=torch.int64, device="tpu"))


@pytest.mark.parametrize("op", ["matmul", "sum", "mean", "cat", "exp", "where", "max"], ids=str)
def test_more_out_variants_match_cpu(op):
    a, b = sample((4, 4), torch.float32) / 10, sample((4, 4), torch.float32, 1) / 10
    f = {
        "matmul": lambda x, y, out: torch.matmul(x, y, out=out),
        "sum": lambda x, y, out: torch.sum(x, 1, out=out),
        "mean": lambda x, y, out: torch.mean(x, 0, out=out),
        "cat": lambda x, y, out: torch.cat([x, y], out=out),
        "exp": lambda x, y, out: torch.exp(x, out=out),
        "where": lambda x, y, out: torch.where(x > y, x, y, out=out),
        "max": lambda x, y, out: torch.maximum(x, y, out=out),
    }[op]
    want = f(a, b, torch.empty(0))
    got = f(a.to("tpu"), b.to("tpu"), torch.empty(0, device="tpu"))
    assert_same(got, want, rtol=1e-5, atol=1e-5)


def test_out_variant_with_a_non_contiguous_out_matches_cpu():
    a, b = sample((3, 4), torch.float32), sample((3, 4), torch.float32, 1)
    oc, ot = torch.zeros(4, 3), torch.zeros(4, 3, device="tpu")
    torch.mul(a, b, out=oc.t())
    torch.mul(a.to("tpu"), b.to("tpu"), out=ot.t())
    assert_same(ot, oc)


# ---- type promotion --------------------------------------------------------------------------------------------
PROMO = [
    ("int+float", lambda d: torch.arange(4, device=d) + torch.ones(4, device=d)),
    ("int+float scalar", lambda d: torch.arange(4, device=d) + 1.5),
    ("int32+int64 scalar", lambda d: torch.arange(4, dtype=torch.int32, device=d) + 7),
    ("bool+int", lambda d: torch.tensor([True, False], device=d) + torch.tensor([2, 3], device=d)),
    ("bool+bool", lambda d: torch.tensor([True, False], device=d) + torch.tensor([True, True], device=d)),
    ("bool*float scalar", lambda d: torch.tensor([True, False], device=d) * 2.5),
    ("bf16+f32", lambda d: torch.ones(3, dtype=torch.bfloat16, device=d) + torch.ones(3, device=d)),
    ("f16+python float", lambda d: torch.ones(3, dtype=torch.float16, device=d) + 0.1),
    ("f16+f32 0-dim", lambda d: torch.ones(3, dtype=torch.float16, device=d) + torch.tensor(2.0, device=d)),
    ("i8+i64 0-dim", lambda d: torch.ones(3, dtype=torch.int8, device=d) + torch.tensor(300, device=d)),
    ("i8 0-dim+f16", lambda d: torch.tensor(3, dtype=torch.int8, device=d) * torch.ones(2, dtype=torch.float16, device=d)),
    ("0-dim f64+0-dim i32", lambda d: torch.tensor(1.5, dtype=torch.float64, device=d) + torch.tensor(2, dtype=torch.int32, device=d)),
    ("u8+i8", lambda d: torch.ones(3, dtype=torch.uint8, device=d) + torch.ones(3, dtype=torch.int8, device=d)),
    ("int div int", lambda d: torch.arange(1, 5, device=d) / torch.tensor([2, 2, 3, 3], device=d)),
    ("int true_divide scalar", lambda d: torch.arange(5, device=d) / 2),
    ("int floor_divide", lambda d: torch.arange(-4, 5, device=d) // 3),
    ("f16 cmp f32", lambda d: torch.ones(3, dtype=torch.float16, device=d) < torch.full((3,), 2.0, device=d)),
    ("i64 pow float", lambda d: torch.arange(4, device=d) ** 0.5),
    ("f64 0-dim cpu scalar tensor", lambda d: torch.ones(3, device=d) * torch.tensor(2.0, dtype=torch.float64)),
]


@pytest.mark.parametrize("name,fn", PROMO, ids=[p[0] for p in PROMO])
def test_type_promotion_matches_cpu(name, fn):
    want = fn("cpu")
    got = fn("tpu")
    assert got.dtype == want.dtype
    assert_same(got, want, rtol=1e-3 if want.dtype == torch.float16 else 1e-6, atol=1e-6)


def test_zero_dim_tensor_ops_and_python_scalars():
    a = torch.tensor(3.0, device="tpu")
    b = a * 2 + 1
    assert b.dim() == 0 and b.device.type == "tpu"
    assert b.item() == 7.0
    assert float(b) == 7.0 and int(b) == 7
    assert bool(b > 5)
    c = torch.arange(4.0, device="tpu") * a
    assert_same(c, torch.arange(4.0) * 3)
    assert_same(torch.tensor(2, device="tpu") ** 10, torch.tensor(2) ** 10)
    assert (a == 3.0).item() is True


def test_cpu_zero_dim_tensor_combines_with_a_tpu_tensor():
    x = torch.arange(4.0, device="tpu")
    s = torch.tensor(5.0)
    r = x + s
    assert r.device.type == "tpu"
    assert_same(r, torch.arange(4.0) + 5)


# ---- scalars, printing, conversions -----------------------------------------------------------------------------
def test_item_returns_python_numbers_of_the_right_kind():
    assert torch.tensor(2.5, device="tpu").item() == 2.5
    i = torch.tensor(-7, device="tpu").item()
    assert i == -7 and isinstance(i, int)
    assert torch.tensor(True, device="tpu").item() is True
    assert torch.tensor([1.5], dtype=torch.bfloat16, device="tpu").item() == 1.5
    assert torch.arange(10, device="tpu")[7].item() == 7


def test_item_on_several_elements_raises_like_cpu():
    with pytest.raises(RuntimeError, match="elements"):
        torch.ones(3, device="tpu").item()


def test_tolist_and_numpy_via_cpu():
    x = torch.arange(6).reshape(2, 3)
    assert x.to("tpu").tolist() == x.tolist()
    assert x.to("tpu").t().tolist() == x.t().tolist()
    assert torch.tensor([True, False], device="tpu").tolist() == [True, False]
    assert (x.to("tpu").cpu().numpy() == x.numpy()).all()


def test_repr_shows_the_device_and_the_values():
    s = repr(torch.tensor([1.5, -2.0, 3.25], device="tpu"))
    assert "device='tpu:0'" in s
    assert "1.5000" in s and "-2.0000" in s and "3.2500" in s
    s = repr(torch.arange(3, dtype=torch.int32, device="tpu"))
    assert "tensor([0, 1, 2]" in s and "dtype=torch.int32" in s and "tpu:0" in s
    s = str(torch.zeros(2, 2, dtype=torch.bfloat16, device="tpu"))
    assert "bfloat16" in s


@pytest.mark.parametrize("make", [
    lambda: torch.arange(5000.0), lambda: torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),
    lambda: torch.arange(6, dtype=torch.int16).reshape(2, 3).t(), lambda: torch.tensor(1e-8),
    lambda: torch.linspace(0, 1e6, 7, dtype=torch.float64),
], ids=["summarized", "randn", "int16 transposed", "0-dim tiny", "f64 wide"])
def test_repr_is_the_cpu_repr_with_the_device_added(make):
    x = make()
    want = repr(x)
    assert want.endswith(")")
    if ", dtype=" in want:
        want = want.replace(", dtype=", ", device='tpu:0', dtype=", 1)
    else:
        want = want[:-1] + ", device='tpu:0')"
    assert repr(x.to("tpu")) == want


def test_repr_of_special_values_and_bool():
    s = repr(torch.tensor([float("nan"), float("inf"), 1.0], device="tpu"))
    assert "nan" in s and "inf" in s
    assert "True" in repr(torch.tensor([True, False], device="tpu"))


# ---- indexing ---------------------------------------------------------------------------------------------------
BASIC = {
    "int": lambda t: t[1],
    "negative int": lambda t: t[-1],
    "int int": lambda t: t[2, 3],
    "slice": lambda t: t[1:3],
    "slice step": lambda t: t[::2, 1::2],
    "negative slice": lambda t: t[-3:-1, :-2],
    "ellipsis": lambda t: t[..., 1],
    "none": lambda t: t[None, :, None],
    "mixed": lambda t: t[1:, None, ..., 2],
}


@pytest.mark.parametrize("name", list(BASIC))
def test_basic_indexing_matches_cpu(name):
    x = torch.arange(4 * 5 * 6).reshape(4, 5, 6).float()
    assert_same(BASIC[name](x.to("tpu")), BASIC[name](x))


ADVANCED = {
    "int list": lambda t, d: t[[0, 2, 3]],
    "int tensor": lambda t, d: t[torch.tensor([3, 0, 0, 1], device=d)],
    "two int tensors": lambda t, d: t[torch.tensor([0, 1], device=d), torch.tensor([2, 4], device=d)],
    "tensor and slice": lambda t, d: t[:, torch.tensor([4, 0], device=d)],
    "negative indices": lambda t, d: t[torch.tensor([-1, -2], device=d)],
    "2d index": lambda t, d: t[torch.tensor([[0, 1], [2, 3]], device=d)],
    "broadcast indices": lambda t, d: t[torch.tensor([[0], [2]], device=d), torch.tensor([1, 3, 4], device=d)],
}


@pytest.mark.parametrize("name", list(ADVANCED))
@pytest.mark.parametrize("index_device", ["tpu", "cpu"])
def test_advanced_indexing_matches_cpu(name, index_device):
    x = torch.arange(4 * 5 * 3).reshape(4, 5, 3).float()
    assert_same(ADVANCED[name](x.to("tpu"), index_device), ADVANCED[name](x, "cpu"))


@pytest.mark.parametrize("index_device", ["tpu", "cpu"])
def test_boolean_mask_indexing_matches_cpu(index_device):
    x = sample((4, 5), torch.float32)
    m = x > 0
    assert_same(x.to("tpu")[m.to(index_device)], x[m])
    rows = torch.tensor([True, False, True, True])
    assert_same(x.to("tpu")[rows.to(index_device)], x[rows])
    assert_same(x.to("tpu")[x.to("tpu") > 100], x[x > 100])  # empty result


SETITEM = {
    "int": lambda t, d: t.__setitem__(1, 5.0),
    "slice column tensor": lambda t, d: t.__setitem__((slice(None), 1), torch.arange(4.0, device=d)),
    "ellipsis": lambda t, d: t.__setitem__((Ellipsis, 0), -1.0),
    "int tensor": lambda t, d: t.__setitem__(torch.tensor([0, 3], device=d), 9.0),
    "int tensor values": lambda t, d: t.__setitem__(torch.tensor([2, 0], device=d),
                                                    torch.ones(2, 5, device=d) * 4),
    "mask scalar": lambda t, d: t.__setitem__(t > 0, 0.0),
    "mask tensor": lambda t, d: t.__setitem__(t < 0, torch.tensor(2.5, device=d)),
    "pairs": lambda t, d: t.__setitem__((torch.tensor([0, 1, 2], device=d), torch.tensor([4, 3, 2], device=d)),
                                        torch.tensor([7.0, 8.0, 9.0], device=d)),
    "stepped slice": lambda t, d: t.__setitem__((slice(None, None, 2), slice(1, None, 2)), 3.0),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_index_assignment_matches_cpu(name):
    x = sample((4, 5), torch.float32)
    t = x.to("tpu")
    SETITEM[name](x, "cpu")
    SETITEM[name](t, "tpu")
    assert_same(t, x)


def test_index_put_accumulate_and_index_add_match_cpu():
    x = torch.zeros(5)
    idx = torch.tensor([0, 2, 2, 4, 0])
    v = torch.arange(5.0)
    t = x.to("tpu")
    x.index_put_((idx,), v, accumulate=True)
    t.index_put_((idx.to("tpu"),), v.to("tpu"), accumulate=True)
    assert_same(t, x)
    assert_same(torch.zeros(5, device="tpu").index_add(0, idx.to("tpu"), v.to("tpu")), torch.zeros(5).index_add(0, idx, v))


def test_gather_scatter_index_select_match_cpu():
    x = sample((4, 6), torch.float32)
    idx = torch.tensor([[0, 5, 1], [2, 2, 3], [5, 4, 0], [1, 1, 1]])
    assert_same(torch.gather(x.to("tpu"), 1, idx.to("tpu")), torch.gather(x, 1, idx))
    assert_same(x.to("tpu").index_select(1, torch.tensor([5, 0], device="tpu")), x.index_select(1, torch.tensor([5, 0])))
    src = torch.ones(4, 3)
    assert_same(torch.zeros(4, 6, device="tpu").scatter(1, idx.to("tpu"), src.to("tpu")),
                torch.zeros(4, 6).scatter(1, idx, src))


# ---- creation ---------------------------------------------------------------------------------------------------
CREATE = {
    "zeros": lambda d: torch.zeros(2, 3, device=d),
    "ones int": lambda d: torch.ones(2, 3, dtype=torch.int32, device=d),
    "full": lambda d: torch.full((3,), 2.5, device=d),
    "full bool": lambda d: torch.full((3,), True, device=d),
    "full int": lambda d: torch.full((2,), 7, device=d),
    "arange": lambda d: torch.arange(10, device=d),
    "arange float step": lambda d: torch.arange(0, 1, 0.125, device=d),
    "arange f16": lambda d: torch.arange(5, dtype=torch.float16, device=d),
    "linspace": lambda d: torch.linspace(-1, 1, 9, device=d),
    "eye": lambda d: torch.eye(3, 4, device=d),
    "tensor": lambda d: torch.tensor([[1, 2], [3, 4]], dtype=torch.int8, device=d),
    "zeros_like": lambda d: torch.zeros_like(torch.ones(2, 2, dtype=torch.float64, device=d)),
    "ones_like bf16": lambda d: torch.ones_like(torch.zeros(3, device=d), dtype=torch.bfloat16),
    "full_like": lambda d: torch.full_like(torch.zeros(3, dtype=torch.int64, device=d), 4),
    "new_ones": lambda d: torch.zeros(1, dtype=torch.float16, device=d).new_ones(2, 2),
    "empty shape": lambda d: torch.zeros_like(torch.empty(2, 0, 3, device=d)),
}


@pytest.mark.parametrize("name", list(CREATE))
def test_creation_on_device_matches_cpu(name):
    got = CREATE[name]("tpu")
    assert got.device == torch.device("tpu", 0)
    assert_same(got, CREATE[name]("cpu"))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_empty_has_the_requested_shape_and_dtype(dtype):
    e = torch.empty(3, 4, dtype=dtype, device="tpu")
    assert e.shape == (3, 4) and e.dtype == dtype and e.device.type == "tpu"
    es = torch.empty_strided((2, 3), (1, 2), device="tpu")
    assert es.stride() == (1, 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64], ids=str)
def test_rand_and_randn_have_the_requested_dtype_and_plausible_values(dtype):
    r = torch.rand(2000, dtype=dtype, device="tpu")
    n = torch.randn(2000, dtype=dtype, device="tpu")
    assert r.dtype == dtype and n.dtype == dtype and r.device.type == "tpu"
    rc, nc = r.cpu().double(), n.cpu().double()
    assert rc.min() >= 0 and rc.max() <= 1
    assert abs(rc.mean() - 0.5) < 0.05
    assert abs(nc.mean()) < 0.15 and abs(nc.std() - 1) < 0.15


def test_randint_respects_its_bounds():
    r = torch.randint(3, 10, (1000,), device="tpu")
    assert r.dtype == torch.int64
    rc = r.cpu()
    assert rc.min() >= 3 and rc.max() < 10
    assert len(rc.unique()) == 7
    r8 = torch.randint(0, 5, (50,), dtype=torch.int8, device="tpu")
    assert r8.dtype == torch.int8


def test_randperm_and_normal_and_bernoulli_run_on_device():
    p = torch.randperm(20, device="tpu")
    assert sorted(p.cpu().tolist()) == list(range(20))
    x = torch.normal(2.0, 0.5, (3000,), device="tpu").cpu()
    assert abs(x.mean() - 2.0) < 0.1
    b = torch.bernoulli(torch.full((2000,), 0.25, device="tpu")).cpu()
    assert set(b.unique().tolist()) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.05
