"""Training on the tpu matches training on the CPU step by step: an MLP and a small CNN with SGD (momentum) and
AdamW, and a tiny GPT whose loss goes down."""
import copy

import pytest
import torch
import torch.nn.functional as F

from tests.models import MLP, SmallCNN, TinyGPT, example_tiny_gpt, gpt_loss

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")

STEPS = 20


def make_optimizer(name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)


def train(model, data, device, opt_name, loss_fn, steps=STEPS):
    """Trains a copy of model on device; returns the per-step losses and the trained model."""
    model = copy.deepcopy(model).to(device)
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    opt = make_optimizer(opt_name, model.parameters())
    losses = []
    for step in range(steps):
        x, y = (t.to(device) for t in data[step % len(data)])
        opt.zero_grad()
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def assert_losses_close(tpu, cpu, rtol):
    assert len(tpu) == len(cpu)
    for i, (a, b) in enumerate(zip(tpu, cpu)):
        assert abs(a - b) <= rtol * abs(b) + 1e-7, f"step {i}: tpu loss {a} vs cpu {b}\ntpu {tpu}\ncpu {cpu}"


def classification_batches(shape, classes=10, n=4, batch=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, *shape, generator=g), torch.randint(0, classes, (batch,), generator=g))
            for _ in range(n)]


def ce(model, x, y):
    return F.cross_entropy(model(x), y)


@pytest.mark.parametrize("opt_name", ["sgd", "adamw"])
def test_mlp_training_matches_cpu_at_every_step(opt_name):
    torch.manual_seed(0)
    model = MLP((32, 64, 64, 10))
    data = classification_batches((32,))
    cpu_losses, cpu_model = train(model, data, "cpu", opt_name, ce)
    tpu_losses, tpu_model = train(model, data, "tpu", opt_name, ce)
    assert_losses_close(tpu_losses, cpu_losses, 1e-4)
    assert tpu_losses[-1] < tpu_losses[0]
    for (n, p), q in zip(tpu_model.named_parameters(), cpu_model.parameters()):
        assert p.device.type == "tpu"
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-3, atol=1e-4, msg=n)


@pytest.mark.parametrize("opt_name", ["sgd", "adamw"])
def test_cnn_training_matches_cpu_at_every_step(opt_name):
    torch.manual_seed(0)
    model = SmallCNN()
    data = classification_batches((1, 12, 12), batch=8)
    cpu_losses, _ = train(model, data, "cpu", opt_name, ce)
    tpu_losses, _ = train(model, data, "tpu", opt_name, ce)
    assert_losses_close(tpu_losses, cpu_losses, 1e-4)
    assert tpu_losses[-1] < tpu_losses[0]


def test_gradients_of_one_backward_match_cpu():
    torch.manual_seed(1)
    model = SmallCNN()
    x, y = classification_batches((1, 12, 12), batch=4)[0]
    grads = {}
    for device in ("cpu", "tpu"):
        m = copy.deepcopy(model).to(device)
        ce(m, x.to(device), y.to(device)).backward()
        grads[device] = [p.grad.cpu() for p in m.parameters()]
    for g_tpu, g_cpu in zip(grads["tpu"], grads["cpu"]):
        torch.testing.assert_close(g_tpu, g_cpu, rtol=1e-4, atol=1e-5)


def gpt_batches(vocab=50, seq=16, batch=4, n=2, seed=0):
    """Sequences with structure (each token = previous + 1 mod vocab, random starts) so the loss can fall fast."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        start = torch.randint(0, vocab, (batch, 1), generator=g)
        toks = (start + torch.arange(seq + 1)) % vocab
        out.append((toks[:, :-1].contiguous(), toks[:, 1:].contiguous()))
    return out


def test_tiny_gpt_trains_on_tpu_and_matches_cpu():
    torch.manual_seed(0)
    model = TinyGPT(vocab=50, dim=32, heads=2, layers=2, seq=16)
    data = gpt_batches()
    steps = 8
    cpu_losses, _ = train(model, data, "cpu", "adamw", gpt_loss, steps=steps)
    tpu_losses, _ = train(model, data, "tpu", "adamw", gpt_loss, steps=steps)
    assert_losses_close(tpu_losses, cpu_losses, 1e-3)
    assert tpu_losses[-1] < tpu_losses[0]


def test_tiny_gpt_with_sgd_matches_cpu():
    torch.manual_seed(2)
    model = TinyGPT(vocab=50, dim=32, heads=2, layers=2, seq=16)
    data = gpt_batches(seed=1)
    cpu_losses, _ = train(model, data, "cpu", "sgd", gpt_loss, steps=5)
    tpu_losses, _ = train(model, data, "tpu", "sgd", gpt_loss, steps=5)
    assert_losses_close(tpu_losses, cpu_losses, 1e-3)


def test_sdpa_and_multihead_attention_match_cpu():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 16, 8) for _ in range(3))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    got = F.scaled_dot_product_attention(q.to("tpu"), k.to("tpu"), v.to("tpu"), is_causal=True)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5)
    mha = torch.nn.MultiheadAttention(32, 2, batch_first=True)
    x = torch.randn(2, 16, 32)
    mask = torch.ones(16, 16, dtype=torch.bool).triu(1)
    want, _ = mha(x, x, x, attn_mask=mask)
    mt = copy.deepcopy(mha).to("tpu")
    got, _ = mt(x.to("tpu"), x.to("tpu"), x.to("tpu"), attn_mask=mask.to("tpu"))
    torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-4, atol=1e-5)


def test_the_demo_tiny_gpt_runs_forward_like_cpu_when_present():
    cls = example_tiny_gpt()
    if cls is None:
        pytest.skip("examples/tiny_gpt.py does not define TinyGPT (yet)")
    torch.manual_seed(0)
    try:
        model = cls()
    except TypeError:
        pytest.skip("examples/tiny_gpt.py TinyGPT needs constructor arguments")
    model.eval()
    idx = gpt_batches()[0][0]
    with torch.no_grad():
        want = model(idx)
        got = copy.deepcopy(model).to("tpu")(idx.to("tpu"))
    want = want[0] if isinstance(want, tuple) else want
    got = got[0] if isinstance(got, tuple) else got
    torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-4)


def test_module_to_tpu_keeps_tied_parameters_tied():
    model = TinyGPT()
    assert model.head.weight is model.tok.weight
    model.to("tpu")
    assert model.head.weight is model.tok.weight
