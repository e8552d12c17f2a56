"""Bounded dynamic sizes in fused eager mode (torchtpu.mark_dynamic; csrc/ir/bucket.c, csrc/runtime/bucket_launch.c).

What a user can count on: a marked size runs every fused window that carries it as its bucket's program (one
compile per window and bucket, not per size); results equal an unmarked run's (bit for bit except where a reduction
along the padded dim sums in another order: within rounding); results computed from a marked tensor are marked in
turn; a window the rewrite cannot pad exactly runs per size, counted and explained; errors of a padded window raise
as in an unpadded one."""
import math

import pytest
import torch
import torch.nn.functional as F

import torchtpu
from torchtpu import _C

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")

SIZES = [5, 7, 8, 11, 13, 16, 9, 12]  # buckets 8 and 16


@pytest.fixture
def fused():
    with torchtpu.eager_mode("fused"):
        torch.tpu.synchronize()
        torchtpu.reset_metrics()
        yield
        torch.tpu.synchronize()


def counts():
    m = torchtpu.metrics()
    return m["compiles"], m["bucketed_windows"], m["bucket_refused"], m["fused_windows"]


def tiny(kind):
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    if kind == "bert":
        return BertModel(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=64, max_position_embeddings=64)).eval()
    return GPT2LMHeadModel(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)).eval()


def run_lengths(model, mark):
    """The model's output for each length of SIZES (an attention mask with padding in row 1), and the counters."""
    torch.manual_seed(1)
    torch.tpu.synchronize()
    torchtpu.reset_metrics()
    outs = []
    for t in SIZES:
        ids = torch.randint(0, 100, (2, t))
        mask = torch.ones(2, t, dtype=torch.long)
        mask[1, t - 2:] = 0
        x, m = ids.to("tpu"), mask.to("tpu")
        if mark:
            torchtpu.mark_dynamic(x, 1, max=16)
            torchtpu.mark_dynamic(m, 1, max=16)
        with torch.no_grad():
            outs.append(model(input_ids=x, attention_mask=m)[0].cpu())
    torch.tpu.synchronize()
    return outs, counts()


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_hf_inference_over_eight_lengths_compiles_once_per_bucket_and_equals_the_unmarked_run(fused, kind):
    model = tiny(kind).to("tpu")
    with torch.tpu.precision(torch.tpu.Precision.EXACT):
        plain, (c_plain, b_plain, _, w_plain) = run_lengths(model, mark=False)
        padded, (c_pad, b_pad, refused, w_pad) = run_lengths(model, mark=True)
    for a, b in zip(plain, padded):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-6)
    assert b_plain == 0 and refused == 0 and b_pad == w_pad == w_plain
    windows_per_forward = w_pad // len(SIZES)
    assert c_pad == 2 * windows_per_forward < c_plain  # two buckets, every window padded


def test_a_causal_mask_sliced_from_a_buffer_is_read_padded_and_the_forward_is_one_program_per_bucket(fused):
    import os
    import sys
    from tests.conftest import ROOT
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from tiny_gpt import GPTConfig, TinyGPT
    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=32, dropout=0.0))
    model = model.eval().to("tpu")
    outs = {}
    for mark in (False, True):
        torch.manual_seed(3)
        torchtpu.reset_metrics()
        got = []
        with torch.no_grad(), torch.tpu.precision(torch.tpu.Precision.EXACT):
            for t in (5, 6, 7, 9, 12):
                x = torch.randint(0, 64, (2, t)).to("tpu")
                if mark:
                    torchtpu.mark_dynamic(x, 1, max=16)
                got.append(model(x)[0].cpu())
        outs[mark] = (got, counts())
    for a, b in zip(outs[False][0], outs[True][0]):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-6)
    compiles, padded, refused, windows = outs[True][1]
    assert refused == 0 and padded == windows and compiles == 2 * windows // 5  # buckets 8 and 16


def test_results_computed_from_a_marked_tensor_are_marked_and_stay_exact(fused):
    x = torch.randn(3, 11, 4)
    t = torchtpu.mark_dynamic(x.to("tpu"), 1, max=32)
    assert tuple(_C.marked_bucket(t)) == (11, 16)
    y = (t * 2 + 1).softmax(1)
    z = y.amax(1) / y.mean(1)
    want = (x * 2 + 1).softmax(1)
    torch.testing.assert_close(z.cpu(), want.amax(1) / want.mean(1))  # the cut: y is written, and marked
    assert counts()[1] == 1
    torch.testing.assert_close(y.cpu(), want)
    assert tuple(_C.marked_bucket(y)) == (11, 16)
    torch.testing.assert_close((y * 3).sum(1).cpu(), (want * 3).sum(1))
    assert counts()[1] == 2  # the next window reads y: padded too


def test_a_window_without_an_exact_rule_runs_per_size(fused):
    for t in (6, 7):
        x = torch.randn(2, t)
        xt = torchtpu.mark_dynamic(x.to("tpu"), 1)
        got = (xt[:, 1:] * 2).exp().cpu()  # a shift along the padded dim: no rule
        torch.testing.assert_close(got, (x[:, 1:] * 2).exp())
    compiles, bucketed, refused, _ = counts()
    assert refused >= 2 and bucketed == 0


def test_the_refusal_is_logged_under_torchtpu_log_fusion(python):
    r = python("import torch, torchtpu\n"
               "torchtpu.set_eager_mode('fused')\n"
               "x = torchtpu.mark_dynamic(torch.ones(2, 6, device='tpu'), 1)\n"
               "print(x[:, 1:].exp().sum().item())", env={"TORCHTPU_LOG": "fusion"})
    assert r.returncode == 0, r.stderr
    assert "runs per size, not padded" in r.stderr  # the reason follows (a slice, or a view no mark covers)
    assert abs(float(r.stdout) - 10 * math.e) < 1e-4


def test_gpt2_training_with_a_marked_length_matches_the_unmarked_gradients(fused):
    model = tiny("gpt2").train().to("tpu")
    grads = {}
    for mark in (False, True):
        torch.manual_seed(2)
        torchtpu.reset_metrics()
        g = []
        for t in (5, 7, 12):
            x = torch.randint(0, 100, (2, t)).to("tpu")
            if mark:
                torchtpu.mark_dynamic(x, 1, max=16)
            model.zero_grad(set_to_none=True)
            with torch.tpu.precision(torch.tpu.Precision.EXACT):
                model(input_ids=x, labels=x).loss.backward()
            g.append(model.transformer.h[0].attn.c_attn.weight.grad.cpu())
        grads[mark] = (g, counts())
    for a, b in zip(grads[False][0], grads[True][0]):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    assert grads[True][1][1] > 0  # some windows of the step ran padded


def test_an_index_error_in_a_padded_window_raises_at_the_sync_as_unpadded(fused):
    table = torch.randn(10, 4, device="tpu")
    ids = torch.tensor([[1, 2, 3], [4, 50, 6]])
    x = torchtpu.mark_dynamic(ids.to("tpu"), 1, max=8)
    out = F.embedding(x, table) * 2
    with pytest.raises(IndexError, match="index 50 is out of bounds for dimension 0 with size 10"):
        out.cpu()


@pytest.mark.parametrize("call, error", [
    (lambda: torchtpu.mark_dynamic(torch.ones(2, 3), 1), TypeError),                          # a CPU tensor
    (lambda: torchtpu.mark_dynamic(torch.ones(2, 1, device="tpu"), 1), ValueError),           # size 1
    (lambda: torchtpu.mark_dynamic(torch.ones(2, 9, device="tpu"), 1, max=8), ValueError),   # above the bound
    (lambda: torchtpu.mark_dynamic(torch.ones(2, 3, device="tpu"), 2), IndexError),
    (lambda: torchtpu.mark_dynamic(torch.ones(4, 6, device="tpu")[:, 1:], 1), RuntimeError),  # a view
])
def test_bad_marks_raise(call, error):
    with pytest.raises(error):
        call()


def test_buckets_follow_the_bound_and_options():
    t = torch.ones(2, 40, device="tpu")
    assert tuple(_C.marked_bucket(torchtpu.mark_dynamic(t, 1))) == (40, 64)
    assert tuple(_C.marked_bucket(torchtpu.mark_dynamic(t, 1, max=50))) == (40, 50)
    assert tuple(_C.marked_bucket(torchtpu.mark_dynamic(t, -1, max=512, options={"bucket_size": 16}))) == (40, 48)
