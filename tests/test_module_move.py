"""Parameters keep their identity across model.to("tpu") and back, as on CUDA (PyTorch's own `param.data = t`
path): an optimizer made before the move trains the moved model, tied weights stay tied, grads move along."""
import copy

import pytest
import torch
import torchtpu

D = "tpu"


def _mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def _batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(16, 6, generator=g), torch.randn(16, 3, generator=g)


def _train(model, opt, x, y, steps=3):
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return loss.detach()


def test_the_wrapper_is_gone():
    assert not hasattr(torchtpu, "_module")
    assert torch.nn.Module.to.__module__ == "torch.nn.modules.module"


def test_data_assignment_moves_a_parameter_between_cpu_and_tpu():
    p = torch.nn.Parameter(torch.arange(4.0))
    p.data = p.data.to(D)
    assert p.device.type == "tpu" and isinstance(p, torch.nn.Parameter) and p.requires_grad
    (p * 2).sum().backward()
    assert p.grad.device.type == "tpu" and torch.equal(p.grad.cpu(), torch.full((4,), 2.0))
    p.data = p.data.cpu()
    assert p.device.type == "cpu" and torch.equal(p.detach(), torch.arange(4.0))
    assert torch._has_compatible_shallow_copy_type(torch.ones(1), torch.ones(1, device=D))
    assert torch._has_compatible_shallow_copy_type(torch.ones(1, device=D), torch.ones(1))


def test_incompatible_kinds_still_refuse_like_pytorch():
    p = torch.nn.Parameter(torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="incompatible tensor type"):
        p.data = torch.ones(2, 2, device="meta")
    assert not torch._has_compatible_shallow_copy_type(torch.ones(2, device=D), torch.ones(2).to_sparse())


def test_model_to_returns_the_same_module_with_the_same_parameters():
    m = _mlp()
    ids = [id(p) for p in m.parameters()]
    assert m.to(D) is m
    assert [id(p) for p in m.parameters()] == ids and all(p.is_tpu for p in m.parameters())
    assert m.cpu() is m
    assert [id(p) for p in m.parameters()] == ids and all(p.device.type == "cpu" for p in m.parameters())
    assert m.tpu() is m and [id(p) for p in m.parameters()] == ids


@pytest.mark.parametrize("make_opt", [lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
                                      lambda ps: torch.optim.Adam(ps, lr=0.01)], ids=["sgd", "adam"])
def test_an_optimizer_made_before_the_move_trains_the_moved_model(make_opt):
    x, y = _batch()
    ref = _mlp()
    ref_opt = make_opt(ref.parameters())
    want = _train(ref, ref_opt, x, y)

    m = _mlp()
    start = [p.detach().clone() for p in m.parameters()]
    opt = make_opt(m.parameters())  # accelerate's documented order: optimizer first, then the move
    m.to(D)
    got = _train(m, opt, x.to(D), y.to(D))
    for p, p0, pr in zip(m.parameters(), start, ref.parameters()):
        assert p.is_tpu
        assert not torch.equal(p.detach().cpu(), p0), "a weight did not update"
        torch.testing.assert_close(p.detach().cpu(), pr.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
    for state in opt.state.values():  # the optimizer state lives where the parameters do
        for v in state.values():
            if isinstance(v, torch.Tensor) and v.dim() > 0:
                assert v.is_tpu


def test_tied_embedding_and_head_stay_one_parameter():
    emb = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    m = torch.nn.Sequential(emb, head)
    w = emb.weight
    for move in (lambda: m.to(D), lambda: m.cpu(), lambda: m.tpu(), lambda: m.to("cpu")):
        move()
        assert m[1].weight is m[0].weight is w
    m.to(D)
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    assert len(opt.param_groups[0]["params"]) == 1
    before = w.detach().cpu().clone()
    m(torch.tensor([1, 2], device=D)).sum().backward()
    opt.step()
    assert not torch.equal(w.detach().cpu(), before)
    assert m[1].weight is m[0].weight


def test_grads_present_before_the_move_move_with_their_parameters():
    m = _mlp()
    m(torch.randn(2, 6)).sum().backward()
    grads = {id(p): (p.grad, p.grad.clone()) for p in m.parameters()}
    m.to(D)
    for p in m.parameters():
        g, g0 = grads[id(p)]
        assert p.grad is g, "the .grad object was replaced"
        assert p.grad.is_tpu and torch.equal(p.grad.cpu(), g0)
    m.cpu()
    for p in m.parameters():
        assert p.grad.device.type == "cpu" and torch.equal(p.grad, grads[id(p)][1])


def test_buffers_move_and_a_moved_copy_leaves_the_original():
    bn = torch.nn.BatchNorm1d(3)
    c = copy.deepcopy(bn).to(D)
    assert all(b.is_tpu for b in c.buffers()) and all(p.is_tpu for p in c.parameters())
    assert all(p.device.type == "cpu" for p in bn.parameters())
    c(torch.randn(4, 3, device=D))
    assert c.num_batches_tracked.item() == 1


def test_moving_under_inference_mode_and_no_grad():
    m = _mlp()
    ids = [id(p) for p in m.parameters()]
    with torch.no_grad():
        m.to(D)
    assert [id(p) for p in m.parameters()] == ids
    with torch.inference_mode():
        m.cpu()
    assert [id(p) for p in m.parameters()] == ids and all(p.device.type == "cpu" for p in m.parameters())


def test_dtype_and_device_move_together_keep_identity():
    m = _mlp()
    ids = [id(p) for p in m.parameters()]
    m.to(D, torch.float64)
    assert [id(p) for p in m.parameters()] == ids
    assert all(p.is_tpu and p.dtype == torch.float64 for p in m.parameters())
