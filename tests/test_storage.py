"""Copies of tpu storages: torch.save / torch.load (every map_location), pickle, copy.deepcopy of tensors and
modules, UntypedStorage.cpu() / clone() / copy_(), negative views (math bits) and copy-on-write lazy clones. Every
round trip must be bit-exact: compared on the CPU with torch.equal, with dtype and shape."""
import copy
import io
import pickle

import pytest
import torch

DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.bool]


def sample(dtype, shape=(3, 5), seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=g) * 100
        x.view(-1)[:4] = torch.tensor([0.0, -0.0, float("inf"), float("nan")])
        return x.to(dtype)
    return torch.randint(-(1 << 62), 1 << 62, shape, generator=g, dtype=torch.int64).to(dtype)


def same_bits(got, want):
    """got and want hold the same dtype, shape and bytes (NaN payloads and -0.0 included)."""
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.is_floating_point:
        itype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[want.element_size()]
        return torch.equal(got.contiguous().view(itype), want.contiguous().view(itype))
    return torch.equal(got, want)


def save_load(obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw)


# ---- torch.save / torch.load ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_save_load_round_trips_on_tpu(dtype):
    c = sample(dtype)
    got = save_load(c.to("tpu"))
    assert got.device.type == "tpu"
    assert same_bits(got, c)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tpu_checkpoint_loads_on_cpu(dtype):
    c = sample(dtype)
    got = save_load(c.to("tpu"), map_location="cpu")
    assert got.device.type == "cpu"
    assert same_bits(got, c)


@pytest.mark.parametrize("location", ["tpu", "tpu:0", torch.device("tpu", 0), {"cpu": "tpu:0"},
                                      lambda storage, loc: storage.to(device="tpu")], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_checkpoint_loads_straight_onto_tpu(dtype, location):
    c = sample(dtype)
    got = save_load(c, map_location=location)
    assert got.device == torch.device("tpu", 0)
    assert same_bits(got, c)


def test_views_sharing_a_storage_stay_views_after_load():
    c = sample(torch.float32, (4, 6))
    t = c.to("tpu")
    a, b = save_load([t[1:, 2:], t.t()])
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # one storage, saved once
    assert same_bits(a, c[1:, 2:]) and same_bits(b, c.t())
    b.mul_(2)  # still aliases
    assert same_bits(a, (c * 2)[1:, 2:])


def test_state_dict_of_linear_and_batchnorm_round_trips():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)).to("tpu")
    m(torch.randn(8, 4, device="tpu"))  # running stats move off their initial values
    sd = m.state_dict()
    for location in [None, "cpu", "tpu"]:
        got = save_load(sd, **({} if location is None else {"map_location": location}))
        assert list(got) == list(sd)
        for k in sd:
            assert got[k].device.type == (location or "tpu")
            assert same_bits(got[k], sd[k].cpu()), k
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)).to("tpu")
    fresh.load_state_dict(save_load(sd, map_location="cpu"))
    for k, v in fresh.state_dict().items():
        assert v.device.type == "tpu" and same_bits(v, sd[k].cpu()), k


# ---- pickle and deepcopy --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pickle_round_trips(dtype):
    c = sample(dtype)
    got = pickle.loads(pickle.dumps(c.to("tpu")))
    assert got.device.type == "tpu"
    assert same_bits(got, c)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_deepcopy_of_a_tensor_is_independent(dtype):
    c = sample(dtype)
    t = c.to("tpu")
    d = copy.deepcopy(t)
    assert d.device == t.device and same_bits(d, c)
    assert d.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    t.zero_()
    assert same_bits(d, c)


def test_deepcopy_keeps_shared_storage_and_grad():
    t = torch.randn(6, device="tpu", requires_grad=True)
    a, b = copy.deepcopy([t, t])
    assert a is b and a.requires_grad and a.is_leaf
    v = torch.randn(4, 4, device="tpu")
    x, y = copy.deepcopy([v, v[1]])
    y.fill_(7)
    assert torch.equal(x[1].cpu(), torch.full((4,), 7.0))  # the view still aliases the copied base


class TinyHF(torch.nn.Module):
    """A Hugging Face-like block: parameters, a registered buffer (rotary table) and a non-persistent one."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 4, 2).float() / 4)))
        self.register_buffer("position_ids", torch.arange(8), persistent=False)

    def forward(self, x):
        return self.norm(self.proj(x)) * self.inv_freq.repeat(2)


@pytest.mark.parametrize("make", [lambda: torch.nn.BatchNorm1d(3), TinyHF], ids=["batchnorm", "tiny_hf"])
def test_deepcopy_of_a_module_stays_on_tpu_and_is_independent(make):
    torch.manual_seed(0)
    m = make().to("tpu")
    before = {k: v.cpu().clone() for k, v in m.state_dict(keep_vars=True).items()}
    d = copy.deepcopy(m)
    tensors = dict(d.named_parameters()) | dict(d.named_buffers())
    assert tensors and all(v.device.type == "tpu" for v in tensors.values())
    for k, v in d.state_dict().items():
        assert same_bits(v, before[k]), k
    for p in d.parameters():
        assert p.requires_grad and p.is_leaf
    with torch.no_grad():
        for v in list(d.parameters()) + list(d.buffers()):
            v.add_(1) if v.dtype != torch.bool else v.logical_not_()
    for k, v in m.state_dict().items():
        assert same_bits(v, before[k]), k  # the original is untouched


# ---- UntypedStorage -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_untyped_storage_cpu_clone_copy(dtype):
    c = sample(dtype)
    t = c.to("tpu")
    st = t.untyped_storage()
    assert st.device.type == "tpu" and st.nbytes() == c.numel() * c.element_size()
    host = st.cpu()
    assert host.device.type == "cpu"
    assert same_bits(torch.empty(0, dtype=dtype).set_(host).view(c.shape), c)
    cl = st.clone()
    assert cl.device == st.device and cl.data_ptr() != st.data_ptr()
    t.zero_()  # the clone is a copy, not an alias
    assert same_bits(torch.empty(0, dtype=dtype, device="tpu").set_(cl).view(c.shape), c)
    dst = torch.zeros_like(t).untyped_storage()
    dst.copy_(cl)
    assert same_bits(torch.empty(0, dtype=dtype, device="tpu").set_(dst).view(c.shape), c)
    dst.copy_(c.untyped_storage())  # from the host
    assert same_bits(torch.empty(0, dtype=dtype, device="tpu").set_(dst).view(c.shape), c)
    back = torch.empty_like(c).untyped_storage()
    back.copy_(dst)  # to the host
    assert same_bits(torch.empty(0, dtype=dtype).set_(back).view(c.shape), c)


def test_untyped_storage_misc():
    st = torch.arange(4, dtype=torch.float32, device="tpu").untyped_storage()
    assert st[4] == torch.tensor([1.0]).untyped_storage()[0]  # byte 4 of float 1.0
    st.fill_(0)
    assert torch.equal(torch.empty(0, device="tpu").set_(st).cpu(), torch.zeros(4))
    st.resize_(32)
    assert st.nbytes() == 32
    assert torch.UntypedStorage(0, device="tpu").cpu().nbytes() == 0
    assert torch.UntypedStorage(0, device="tpu").clone().nbytes() == 0
    with pytest.raises(RuntimeError):
        st.copy_(torch.UntypedStorage(8))  # size mismatch, as on the CPU


def test_set_with_a_storage_grows_and_views():
    st = torch.randn(4, device="tpu").untyped_storage()
    t = torch.empty(0, device="tpu").set_(st)  # empty stride: contiguous
    assert t.shape == (4,)
    u = torch.empty(0, device="tpu").set_(st, 1, (2,), (1,))
    assert torch.equal(u.cpu(), t.cpu()[1:3])
    with pytest.raises(RuntimeError):
        torch.empty(0, device="tpu").set_(st, 0, (2, 2), (1,))  # one stride per size


# ---- negative views -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_neg_view_materializes_like_cpu(dtype):
    c = sample(dtype, (3, 4))
    t = c.to("tpu")
    nc, nt = torch._neg_view(c), torch._neg_view(t)
    assert nt.is_neg()
    for got, want in [(nt.clone(), nc.clone()), (nt + 1, nc + 1), (nt.resolve_neg(), nc.resolve_neg()),
                      (nt.cpu(), nc.resolve_neg()), (nt.t().contiguous(), nc.t().contiguous()),
                      (nt[1:, ::2] * 2, nc[1:, ::2] * 2)]:
        assert not got.is_neg()
        # Values, not bits: these results come out of arithmetic lowerings, whose bfloat16 NaN payload is not the
        # CPU's canonical 0x7FC0 (a lowering matter, not a storage one).
        got = got.cpu()
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert nt[1, 2].item() == nc[1, 2].item()


def test_copy_into_a_neg_view_stores_negated_values():
    base_c, base_t = torch.zeros(2, 3), torch.zeros(2, 3, device="tpu")
    src = torch.arange(6.0).reshape(2, 3)
    torch._neg_view(base_c).copy_(src)
    torch._neg_view(base_t).copy_(src.to("tpu"))
    assert same_bits(base_t, base_c)
    torch._neg_view(base_t).copy_(src)  # from the host
    assert same_bits(base_t, base_c)
    torch._neg_view(base_t).copy_(torch._neg_view(src.to("tpu")))  # both negative: plain copy
    assert same_bits(base_t, src)


# ---- copy-on-write lazy clones ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_lazy_clone_is_a_copy(dtype):
    c = sample(dtype)
    t = c.to("tpu")
    lz = torch._lazy_clone(t)
    assert torch._C._is_cow_tensor(lz) and torch._C._is_cow_tensor(t)
    assert same_bits(lz, c)
    t.zero_()  # a later write to the original ...
    assert same_bits(lz, c)  # ... is not seen by the clone
    assert same_bits(t, torch.zeros_like(c))
    lz2 = torch._lazy_clone(lz)
    lz2.fill_(True if dtype == torch.bool else 3)  # and a write to a clone is not seen by its source
    assert same_bits(lz, c)


def test_lazy_clone_of_a_view_and_its_grad():
    t = torch.randn(4, 4, device="tpu")
    want = t.cpu()
    lz = torch._lazy_clone(t[1:])
    t[1:].mul_(0)
    assert same_bits(lz, want[1:])
    x = torch.randn(3, device="tpu", requires_grad=True)
    torch._lazy_clone(x).sum().backward()
    assert torch.equal(x.grad.cpu(), torch.ones(3))


def test_reading_a_lazy_clone_does_not_copy_it():
    """As PyTorch's const_data_ptr: kernels that only read a copy-on-write tensor (native ops, the CPU fallback,
    copies to the host, CPU index tensors moved to the device) share its storage; only a write materializes."""
    x = torch.randn(5, 4, device="tpu")
    want = x.cpu()
    lz = torch._lazy_clone(x)
    idx = torch._lazy_clone(torch.tensor([True, False, True, False, True]))  # a CPU copy-on-write mask
    reads = [torch.exp(lz) + x, lz.sum(0), lz.cpu(), lz[idx], torch.special.bessel_j0(lz), lz.t().contiguous()]
    for r in reads:
        r.cpu()
    assert torch._C._is_cow_tensor(lz) and torch._C._is_cow_tensor(x) and torch._C._is_cow_tensor(idx)
    torch.testing.assert_close(reads[0].cpu(), want.exp() + want)  # exp within an ulp of the CPU's, not bit-equal
    assert torch.equal(reads[2], want)
    assert torch.equal(reads[3].cpu(), want[[0, 2, 4]])
    lz.add_(1)  # a write copies
    assert not torch._C._is_cow_tensor(lz)
    assert torch.equal(lz.cpu(), want + 1) and torch.equal(x.cpu(), want)
    x.mul_(2)  # the last sharer writes in place of its storage (nothing else holds it)
    assert torch.equal(x.cpu(), want * 2) and torch.equal(lz.cpu(), want + 1)


def test_lazy_clone_chain_frees_memory():
    torch.tpu.synchronize()
    base = torch.tpu.memory_allocated()
    t = torch.randn(1 << 16, device="tpu")
    clones = [torch._lazy_clone(t) for _ in range(4)]
    for k, c in enumerate(clones):
        c.add_(k)  # each materializes its own copy
    expect = [(t.cpu() + k) for k in range(4)]
    for c, e in zip(clones, expect):
        assert torch.equal(c.cpu(), e)
    del t, clones, c
    torch.tpu.synchronize()
    assert torch.tpu.memory_allocated() == base


def test_deepcopy_and_checkpoint_of_a_tiny_llama():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32)
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).to("tpu").eval()
    d = copy.deepcopy(m)
    assert dict(d.named_buffers()) and all(v.device.type == "tpu" for v in d.state_dict().values())
    x = torch.randint(0, 64, (1, 8), device="tpu")
    with torch.no_grad():
        assert torch.equal(d(x).logits.cpu(), m(x).logits.cpu())
    sd = save_load(m.state_dict(), map_location="tpu")
    for k, v in m.state_dict().items():
        assert sd[k].device.type == "tpu" and same_bits(sd[k], v.cpu()), k
