"""Bounded dynamic sizes under torch.compile on tpu (torchtpu/_buckets.py): a size marked with a bound is padded to
a bucket, one program per bucket, and every result equals the one computed at the real size (forward, backward,
losses, reductions, softmax, matmul contractions, merged dims), while graphs with ops that have no padding rule
stay one program per size and say why."""
import os
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torchtpu
from tests.conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "examples"))

from torchtpu import _buckets  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def stats():
    return torchtpu._compile.compile_stats()


def bounded(t, dim, lo, hi):
    t = t.to("tpu")
    torch._dynamo.mark_dynamic(t, dim, min=lo, max=hi)
    return t


def test_bucket_edges():
    assert _buckets.buckets_for(2, 120, {}) == [2, 4, 8, 16, 32, 64, 120]
    assert _buckets.buckets_for(1, 512, {"bucket_size": 128}) == [128, 256, 384, 512]
    assert _buckets.buckets_for(1, 100, {"num_dynamic_buckets": 3}) == [34, 67, 100]
    with pytest.raises(ValueError):
        _buckets.buckets_for(1, 100, {"bucket_size": 0})


def gpt(dropout=0.0):
    from tiny_gpt import GPTConfig, TinyGPT
    torch.manual_seed(0)
    return TinyGPT(GPTConfig(vocab_size=256, block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=dropout))


def train_step(model, f, idx):
    model.zero_grad(set_to_none=True)
    logits, loss = f(idx, idx)
    loss.backward()
    return logits.cpu(), loss.item(), [p.grad.cpu() for p in model.parameters()]


def test_gpt_training_step_is_one_program_per_bucket_and_matches_the_unpadded_graph():
    padded_model, plain_model = gpt().to("tpu"), gpt().to("tpu")
    fp = torch.compile(padded_model, backend="tpu")
    fs = torch.compile(plain_model, backend="tpu", dynamic=False)
    p0, g0 = stats()["programs"], stats()["padded_graphs"]
    for n in (17, 20, 31, 9, 12):  # buckets 32, 32, 32, 16, 16
        idx = torch.randint(0, 256, (3, n))
        got = train_step(padded_model, fp, bounded(idx, 1, 2, 63))
        want = train_step(plain_model, fs, idx.to("tpu"))
        assert got[0].shape == want[0].shape == (3, n, 256)
        torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)
        assert got[1] == pytest.approx(want[1], rel=1e-5)
        for a, b in zip(got[2], want[2]):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert stats()["padded_graphs"] - g0 == 2  # forward and backward
    # the padded graphs compiled 2 buckets x (forward, backward); the static graphs one per length x 2
    assert stats()["programs"] - p0 == 4 + 10


def test_bert_inference_with_attention_mask_matches_cpu():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    cpu = transformers.BertModel(cfg).eval()
    tpu = transformers.BertModel(cfg).eval()
    tpu.load_state_dict(cpu.state_dict())
    tpu.to("tpu")
    f = torch.compile(tpu, backend="tpu")
    g0 = stats()["padded_graphs"]
    with torch.no_grad(), torch.tpu.precision(torch.tpu.Precision.HIGHEST):
        for n in (5, 11, 7):
            ids = torch.randint(0, 128, (2, n))
            mask = torch.ones(2, n, dtype=torch.long)
            mask[1, n - 2:] = 0  # the user's own padding, inside the real length
            out = f(input_ids=bounded(ids, 1, 2, 60), attention_mask=bounded(mask, 1, 2, 60))
            ref = cpu(input_ids=ids, attention_mask=mask)
            torch.testing.assert_close(out.last_hidden_state.cpu(), ref.last_hidden_state, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(out.pooler_output.cpu(), ref.pooler_output, rtol=1e-4, atol=1e-4)
    assert stats()["padded_graphs"] - g0 == 1


class Reductions(nn.Module):
    """Every kind of combining op along the padded dim, and a reshape that merges it with the batch dim."""

    def forward(self, x, w):
        b, t, c = x.shape
        flat = x.reshape(b * t, c)                       # the padded dim merged: outer = b
        return (x.mean(1), x.sum(1), x.amax(1), x.amin(1), x.softmax(1), x.logsumexp(1), x.argmax(1),
                flat.sum(0), flat.t() @ flat, torch.bmm(x.transpose(1, 2), x), (x @ w).relu().mean(),
                F.pad(x, (0, 0, 0, 2), value=3.0).sum(1), F.pad(x, (0, 0, 1, 0), value=-1.0).cumsum(1)[:, 0])


def test_reductions_contractions_and_merged_dims_along_the_padded_dim_are_exact():
    m = Reductions()
    w = torch.randn(6, 5)
    f = torch.compile(m, backend="tpu")
    g0, p0 = stats()["padded_graphs"], stats()["programs"]
    with torch.tpu.precision(torch.tpu.Precision.HIGHEST):
        for n in (3, 5, 7, 13):
            x = torch.randn(2, n, 6) * 3
            got = f(bounded(x, 1, 2, 30), w.to("tpu"))
            for a, b in zip(got, m(x, w)):
                torch.testing.assert_close(a.cpu(), b, rtol=1e-5, atol=1e-5)
    assert stats()["padded_graphs"] - g0 == 1
    assert stats()["programs"] - p0 == 3  # buckets 4, 8, 16


def test_an_op_with_no_padding_rule_keeps_one_program_per_size_and_says_why(capfd, monkeypatch):
    monkeypatch.setenv("TORCHTPU_LOG", "compile")

    def f(x):
        return x.sort(dim=1).values * 2

    cf = torch.compile(f, backend="tpu")
    g0 = stats()["padded_graphs"]
    for n in (4, 6, 9):
        x = torch.randn(2, n)
        torch.testing.assert_close(cf(bounded(x, 1, 2, 32)).cpu(), f(x))
    assert stats()["padded_graphs"] == g0
    err = capfd.readouterr().err
    assert "one program per size (not padded to buckets:" in err and "sort" in err


def test_an_index_counted_from_the_end_is_not_padded():
    def f(x):
        return x[:, -1] + x[:, 0]

    cf = torch.compile(f, backend="tpu")
    g0 = stats()["padded_graphs"]
    for n in (4, 6, 9):
        x = torch.randn(2, n)
        torch.testing.assert_close(cf(bounded(x, 1, 2, 32)).cpu(), f(x))
    assert stats()["padded_graphs"] == g0


def test_bucket_options_set_the_edges(capfd, monkeypatch):
    monkeypatch.setenv("TORCHTPU_LOG", "compile")
    f = torch.compile(lambda x: x.sum(1), backend="tpu", options={"bucket_size": 16})
    x = torch.randn(2, 21)
    torch.testing.assert_close(f(bounded(x, 1, 2, 64)).cpu(), x.sum(1))
    assert "in [16, 32, 48, 64]" in capfd.readouterr().err


def test_a_dropout_model_trains_padded():
    model = gpt(dropout=0.1).to("tpu")
    model.train()
    f = torch.compile(model, backend="tpu")
    for n in (10, 14):
        logits, loss, grads = train_step(model, f, bounded(torch.randint(0, 256, (2, n)), 1, 2, 63))
        assert logits.shape == (2, n, 256) and torch.isfinite(torch.tensor(loss))
        assert all(torch.isfinite(g).all() for g in grads)


def test_copy_rows_pads_without_a_program():
    src = torch.arange(12, dtype=torch.float32).reshape(3, 4).to("tpu")
    dst = torch.zeros(3, 6, device="tpu")
    c0 = torchtpu.metrics()["compiles"]
    torchtpu._C.copy_rows(dst, src, 3, 4, 6, 4)
    want = torch.zeros(3, 6)
    want[:, :4] = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    assert torch.equal(dst.cpu(), want)
    assert torchtpu.metrics()["compiles"] - c0 <= 1  # the zeros' fill, nothing for the copy
    with pytest.raises(RuntimeError, match="do not fit"):
        torchtpu._C.copy_rows(dst, src, 4, 4, 6, 4)
    back = torch.empty(3, 4, device="tpu")
    torchtpu._C.copy_rows(back, dst, 3, 4, 4, 6)
    assert torch.equal(back.cpu(), src.cpu())


def test_buckets_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("TORCHTPU_BUCKETS", "0")
    f = torch.compile(lambda x: x.sum(1), backend="tpu")
    g0 = stats()["padded_graphs"]
    x = torch.randn(2, 21)
    torch.testing.assert_close(f(bounded(x, 1, 2, 64)).cpu(), x.sum(1))
    assert stats()["padded_graphs"] == g0


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_hf_causal_lm_training_matches_the_unpadded_graph(arch):
    """Labels shifted and padded with ignore_index inside the loss (constant_pad_nd after the real part), rotary
    embeddings (slice_backward), an attention mask with the user's own padding: loss, logits and every gradient
    equal the per-size graph's."""
    transformers = pytest.importorskip("transformers")
    if arch == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64, resid_pdrop=0,
                                      embd_pdrop=0, attn_pdrop=0)
        cls = transformers.GPT2LMHeadModel
    else:
        cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
        cls = transformers.LlamaForCausalLM
    torch.manual_seed(0)
    a = cls(cfg)
    b = cls(cfg)
    b.load_state_dict(a.state_dict())
    a.to("tpu"), b.to("tpu")
    fa = torch.compile(a, backend="tpu")
    fb = torch.compile(b, backend="tpu", dynamic=False)
    g0 = stats()["padded_graphs"]
    for n in (9, 13):
        ids = torch.randint(0, 128, (2, n))
        mask = torch.ones(2, n, dtype=torch.long)
        mask[1, -2:] = 0
        got = []
        for model, f, bound in ((a, fa, True), (b, fb, False)):
            model.zero_grad()
            i = bounded(ids, 1, 2, 60) if bound else ids.to("tpu")
            m = bounded(mask, 1, 2, 60) if bound else mask.to("tpu")
            with torch.tpu.precision(torch.tpu.Precision.HIGHEST):
                out = f(input_ids=i, attention_mask=m, labels=i)
                out.loss.backward()
            got.append((out.logits.cpu(), out.loss.item(), [p.grad.cpu() for p in model.parameters()]))
        (la, lossa, ga), (lb, lossb, gb) = got
        torch.testing.assert_close(la, lb, rtol=1e-5, atol=1e-5)
        assert lossa == pytest.approx(lossb, rel=1e-5)
        for x, y in zip(ga, gb):
            torch.testing.assert_close(x, y, rtol=1e-4, atol=2e-5)
    assert stats()["padded_graphs"] - g0 >= 2  # the model's forward and backward (and the loss's, if apart)
