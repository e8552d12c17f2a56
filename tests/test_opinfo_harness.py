"""The OpInfo harness's own rules (tests/opinfo_harness.py), on hand-made cases: what counts as not native, when
"both raise" passes, and which samples of a random op are compared by value."""
import os

import pytest
import torch

import opinfo_harness as h
from torch.testing._internal.opinfo.core import SampleInput


def test_missing_op_reads_our_message_and_googles():
    ours = NotImplementedError("operator 'aten::foo.out' is not implemented for TPU (no native lowering) and the "
                               "CPU fallback is off")
    new = NotImplementedError("operator 'aten::foo.out' is not implemented for TPU, and the CPU fallback is off")
    google = NotImplementedError("'aten::foo.out' is not implemented for TPU")
    assert {h.missing_op(e) for e in (ours, new, google)} == {"aten::foo.out"}


def test_other_not_implemented_errors_are_no_missing_op():
    assert h.missing_op(NotImplementedError("tpu supports tensors of up to 8 dimensions, got 9")) == ""
    assert h.missing_op(NotImplementedError("host driver: unsupported precision")) == ""


def test_both_raise_needs_the_same_type_and_pytorchs_message():
    cpu = RuntimeError("index 5 is out of bounds for dimension 0 with size 3")
    assert h.same_message(cpu, RuntimeError("aten::index.Tensor: index 5 is out of bounds for dimension 0 with size 3"))
    assert not h.same_message(cpu, RuntimeError("tpu: bad index"))
    dev = RuntimeError("Expected all tensors to be on the same device, but found at least two devices, cpu and meta!")
    assert h.same_message(dev, RuntimeError("Expected all tensors to be on the same device, but found at least two "
                                            "devices, tpu:0 and meta!"))


def _dropout_sample(**kw):
    return SampleInput(torch.ones(3), kwargs=kw)


@pytest.mark.parametrize("op,kw,off", [
    ("nn.functional.dropout", {"p": 0.0, "training": True}, True),
    ("nn.functional.dropout", {"p": 0.5, "training": False}, True),
    ("nn.functional.dropout", {"p": 0.5}, False),  # F.dropout trains by default
    ("nn.functional.alpha_dropout", {"p": 0.5}, True),  # F.alpha_dropout does not
    ("nn.functional.feature_alpha_dropout", {"p": 0.5, "training": True}, False),
    ("nn.functional.rrelu", {}, True),
    ("nn.functional.rrelu", {"lower": 0.0, "upper": 1.0, "training": True}, False),
    ("bernoulli", {}, False),
])
def test_random_ops_are_compared_by_value_when_their_randomness_is_off(op, kw, off):
    assert h._randomness_off(op, _dropout_sample(**kw)) is off


def test_mha_without_dropout_is_compared_by_value():
    args = tuple(range(9))
    assert h._randomness_off("nn.functional.multi_head_attention_forward", SampleInput(torch.ones(1), args=args + (0.0,)))
    assert not h._randomness_off("nn.functional.multi_head_attention_forward",
                                 SampleInput(torch.ones(1), args=args + (0.5,), kwargs={"training": True}))


def test_defaults_run_every_sample_and_every_variant():
    capped = os.environ.get("OPINFO_MAX_SAMPLES")  # a run that caps them on purpose (CI's pjrt pass: 4)
    assert h.MAX_SAMPLES == (int(capped) if capped else None)
    assert h.MAX_SAMPLE_NUMEL >= 1 << 22
    assert set(h.VARIANTS) >= {"method", "inplace"}
