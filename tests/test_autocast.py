"""torch.autocast("tpu"): CUDA's op policy (lower precision / float32 / promote), bfloat16 by default; and
torch.amp.GradScaler("tpu") steps, skips on inf and updates its scale."""
import pytest
import torch

from conftest import run_python

D = "tpu"
BF16 = torch.bfloat16


def _r(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(D)


def test_the_default_autocast_dtype_is_bfloat16():
    assert torch.get_autocast_dtype("tpu") == BF16
    assert BF16 in torch.tpu.get_amp_supported_dtype()
    with torch.autocast("tpu"):
        assert torch.is_autocast_enabled("tpu")
        assert torch.get_autocast_dtype("tpu") == BF16
    assert not torch.is_autocast_enabled("tpu")


def test_a_fresh_process_defaults_to_bfloat16_too():
    out = run_python("import torch, torchtpu\nprint(torch.get_autocast_dtype('tpu'))\n"
                     "with torch.autocast('tpu'):\n"
                     "    print(torch.mm(torch.ones(2, 2, device='tpu'), torch.ones(2, 2, device='tpu')).dtype)\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["torch.bfloat16", "torch.bfloat16"]


LOWER = {
    "linear": lambda a, b, v: torch.nn.functional.linear(a, b, v[:4]),
    "matmul": lambda a, b, v: a @ b.t(),
    "mm": lambda a, b, v: torch.mm(a, b.t()),
    "bmm": lambda a, b, v: torch.bmm(a[None], b.t()[None]),
    "addmm": lambda a, b, v: torch.addmm(v[:4], a, b.t()),
    "mv": lambda a, b, v: torch.mv(a, v[:8]),
    "baddbmm": lambda a, b, v: torch.baddbmm(v[:4], a[None], b.t()[None]),
    "einsum": lambda a, b, v: torch.einsum("ij,kj->ik", a, b),
    "conv1d": lambda a, b, v: torch.nn.functional.conv1d(a[None], b[:2, :4, None].contiguous()),
    "prelu": lambda a, b, v: torch.nn.functional.prelu(a, v[:1]),
    "sdpa": lambda a, b, v: torch.nn.functional.scaled_dot_product_attention(a[None], b[None], b[None]),
}

FP32 = {
    "softmax": lambda x, t: torch.softmax(x, -1),
    "log_softmax": lambda x, t: torch.log_softmax(x, -1),
    "layer_norm": lambda x, t: torch.nn.functional.layer_norm(x, (8,)),
    "group_norm": lambda x, t: torch.nn.functional.group_norm(x, 2),
    "exp": lambda x, t: torch.exp(x),
    "log1p": lambda x, t: torch.log1p(x),
    "rsqrt": lambda x, t: torch.rsqrt(x),
    "pow": lambda x, t: torch.pow(x, 2),
    "sum": lambda x, t: torch.sum(x),
    "cumsum": lambda x, t: torch.cumsum(x, 0),
    "mse_loss": lambda x, t: torch.nn.functional.mse_loss(x, t),
    "l1_loss": lambda x, t: torch.nn.functional.l1_loss(x, t),
    "bce_with_logits": lambda x, t: torch.nn.functional.binary_cross_entropy_with_logits(x, t.sigmoid()),
    "cross_entropy": lambda x, t: torch.nn.functional.cross_entropy(x, torch.zeros(4, dtype=torch.long).to(x.device)),
    "norm": lambda x, t: torch.norm(x),
    "logsumexp": lambda x, t: torch.logsumexp(x, 1),
    "cosine_similarity": lambda x, t: torch.nn.functional.cosine_similarity(x, t),
}


@pytest.mark.parametrize("name", sorted(LOWER))
def test_lower_precision_ops_run_in_bfloat16(name):
    a, b, v = _r(4, 8), _r(4, 8, seed=1), _r(8, seed=2)
    with torch.autocast("tpu"):
        out = LOWER[name](a, b, v)
    assert out.dtype == BF16
    with torch.autocast("cpu", dtype=BF16):
        want = LOWER[name](a.cpu(), b.cpu(), v.cpu())
    torch.testing.assert_close(out.float().cpu(), want.float(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", sorted(FP32))
def test_float32_ops_run_in_float32_even_on_bfloat16_inputs(name):
    x, t = (_r(4, 8).abs() + 0.5).to(BF16), _r(4, 8, dtype=BF16, seed=1)  # x > 0 for log1p, rsqrt
    with torch.autocast("tpu"):
        out = FP32[name](x, t)
    assert out.dtype == torch.float32
    want = FP32[name](x.cpu().float(), t.cpu().float())  # the same op on the inputs cast to float32
    # cross_entropy passes log_softmax an explicit dtype (the input's), which autocast keeps, as on CUDA: only its
    # nll_loss runs in float32.
    tol = 1e-2 if name == "cross_entropy" else 1e-4
    torch.testing.assert_close(out.cpu(), want, rtol=tol, atol=tol)


def test_promote_ops_take_the_widest_input_type():
    a32, b16 = _r(4, 3), _r(4, 3, dtype=BF16, seed=1)
    with torch.autocast("tpu"):
        assert torch.addcmul(a32, b16, b16).dtype == torch.float32
        assert torch.addcmul(b16, b16, b16).dtype == BF16
        assert torch.atan2(a32, b16).dtype == torch.float32
        assert torch.cross(a32, b16, dim=1).dtype == torch.float32
        assert torch.dot(a32[0], b16[0]).dtype == torch.float32
        assert torch.cat([a32, b16]).dtype == torch.float32  # cat and stack promote by themselves
        assert torch.stack([a32, b16]).dtype == torch.float32
        assert torch.cat([b16, b16]).dtype == BF16


def test_other_ops_pass_through_and_keep_their_dtype():
    x, h = _r(3, 3), _r(3, 3, dtype=BF16)
    with torch.autocast("tpu"):
        assert (x + x).dtype == torch.float32 and (h * 2).dtype == BF16 and torch.relu(x).dtype == torch.float32
        y = torch.mm(x, x)
        assert (y + x).dtype == torch.float32  # bf16 + f32 promotes as usual
        assert torch.mm(x.double(), x.double()).dtype == torch.float64  # float64 is never autocast


def test_float16_and_disabled_autocast():
    x = _r(4, 4)
    with torch.autocast("tpu", dtype=torch.float16):
        assert torch.mm(x, x).dtype == torch.float16
        assert torch.softmax(x, 0).dtype == torch.float32
    with torch.autocast("tpu", enabled=False):
        assert torch.mm(x, x).dtype == torch.float32
    with torch.autocast("tpu"):
        with torch.autocast("tpu", enabled=False):
            assert torch.mm(x, x).dtype == torch.float32
        assert torch.mm(x, x).dtype == BF16


def test_cpu_autocast_does_not_touch_tpu_tensors_and_vice_versa():
    x = _r(4, 4)
    with torch.autocast("cpu", dtype=BF16):
        assert torch.mm(x, x).dtype == torch.float32
    with torch.autocast("tpu"):
        assert torch.mm(x.cpu(), x.cpu()).dtype == torch.float32


def test_binary_cross_entropy_is_refused_like_cuda():
    p = torch.rand(4, device=D)
    with torch.autocast("tpu"), pytest.raises(RuntimeError, match="unsafe to autocast"):
        torch.nn.functional.binary_cross_entropy(p, p)


def test_backward_through_autocast_gives_float32_grads_for_float32_weights():
    lin = torch.nn.Linear(8, 4).to(D)
    with torch.autocast("tpu"):
        out = lin(_r(5, 8))
        assert out.dtype == BF16
        loss = out.float().pow(2).mean()
    loss.backward()
    assert lin.weight.grad.dtype == torch.float32 and lin.weight.grad.is_tpu
    assert torch.isfinite(lin.weight.grad.cpu()).all()


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def _data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 16, generator=g), torch.randn(64, 4, generator=g)


def _train(device, steps=10):
    model = _mlp().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    scaler = torch.amp.GradScaler(device, init_scale=1024.0)
    x, y = (t.to(device) for t in _data())
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast(device, dtype=BF16):
            out = model(x)
            assert out.dtype == BF16
            loss = torch.nn.functional.mse_loss(out, y)
            assert loss.dtype == torch.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return model, losses, scaler


def test_an_mlp_trains_under_autocast_and_grad_scaler_like_cpu():
    model, losses, scaler = _train("tpu")
    ref, ref_losses, ref_scaler = _train("cpu")
    assert losses[-1] < losses[0] * 0.9
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(ref_losses), rtol=2e-2, atol=2e-3)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=2e-2, atol=5e-3)
    assert scaler.get_scale() == ref_scaler.get_scale()


def test_grad_scaler_skips_a_step_with_inf_grads_and_backs_off():
    lin = torch.nn.Linear(4, 1).to(D)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("tpu", init_scale=2.0**10, growth_interval=1)
    w0 = lin.weight.detach().cpu().clone()
    with torch.autocast("tpu"):
        loss = lin(torch.full((2, 4), float("inf"), device=D)).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert torch.equal(lin.weight.detach().cpu(), w0), "a step with inf gradients was taken"
    assert scaler.get_scale() == 2.0**9
    opt.zero_grad()
    with torch.autocast("tpu"):
        loss = lin(torch.ones(2, 4, device=D)).float().sum()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.testing.assert_close(lin.weight.grad.cpu(), torch.full((1, 4), 2.0))  # unscaled
    scaler.step(opt)
    scaler.update()
    assert not torch.equal(lin.weight.detach().cpu(), w0)
    assert scaler.get_scale() == 2.0**10  # growth_interval=1: one good step grows it back


def test_amp_kernels_on_tpu_tensors_directly():
    grads = [torch.tensor([2.0, 4.0], device=D), torch.tensor([1.0, float("nan")], device=D)]
    found = torch.zeros(1, device=D)
    torch._amp_foreach_non_finite_check_and_unscale_(grads[:1], found, torch.tensor([0.5], device=D))
    assert found.item() == 0.0 and grads[0].cpu().tolist() == [1.0, 2.0]
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found, torch.tensor([0.5], device=D))
    assert found.item() == 1.0
    scale, tracker = torch.tensor([8.0], device=D), torch.zeros(1, dtype=torch.int32, device=D)
    torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
    assert scale.item() == 4.0 and tracker.item() == 0
