"""The signature cache: a repeated op reuses its program, and never when something the lowering reads differs."""
import torch

import torchtpu


def counts():
    m = torchtpu.metrics()
    return m["signature_hits"], m["signature_misses"]


def test_repeated_op_hits_and_results_match():
    a, b = torch.randn(8, 5), torch.randn(8, 5)
    ta, tb = a.to("tpu"), b.to("tpu")
    torch.add(ta, tb)
    h0, _ = counts()
    for k in range(3):
        got = torch.add(ta, tb, alpha=2)  # a new alpha value: a new signature, then hits
    assert counts()[0] >= h0 + 2
    torch.testing.assert_close(got.cpu(), torch.add(a, b, alpha=2))


def test_python_numbers_are_bound_per_call():
    # x * c with a Python number: the number is a scalar parameter, so one signature serves every value
    x = torch.randn(6)
    tx = x.to("tpu")
    outs = [(tx * c).cpu() for c in (1.5, -2.0, 3.25, 0.0)]
    for c, o in zip((1.5, -2.0, 3.25, 0.0), outs):
        torch.testing.assert_close(o, x * c)


def test_layout_dtype_and_shape_are_part_of_the_signature():
    x = torch.randn(4, 6)
    tx = x.to("tpu")
    r1 = tx + 1
    r2 = tx.t() + 1  # a transposed input gives a transposed result, as on the CPU
    assert r2.stride() == (x.t() + 1).stride()
    assert r1.stride() == (x + 1).stride()
    r3 = tx.double() + 1
    assert r3.dtype == torch.float64
    torch.testing.assert_close(r2.cpu(), x.t() + 1)
    torch.testing.assert_close(torch.sum(tx, 1).cpu(), x.sum(1))
    torch.testing.assert_close(torch.sum(tx, 0).cpu(), x.sum(0))  # dim is in the key


def test_inplace_and_out_forms():
    x = torch.randn(5)
    tx = x.to("tpu")
    for _ in range(3):
        tx.mul_(2)
        x.mul_(2)
    torch.testing.assert_close(tx.cpu(), x)
    out = torch.empty(5, device="tpu")
    for _ in range(2):
        torch.neg(tx, out=out)
    torch.testing.assert_close(out.cpu(), -x)


def test_random_ops_are_never_reused():
    torch.manual_seed(0)
    t = torch.empty(64, device="tpu")
    a = t.uniform_().cpu().clone()
    b = t.uniform_().cpu().clone()
    assert not torch.equal(a, b)


def test_switch_off_gives_the_same_results():
    x = torch.randn(3, 4)
    tx = x.to("tpu")
    on = (torch.relu(tx) * 2 - 1).cpu()
    torchtpu._C.set_signature_cache(False)
    try:
        h = counts()
        off = (torch.relu(tx) * 2 - 1).cpu()
        assert counts() == h  # nothing looked up
    finally:
        torchtpu._C.set_signature_cache(True)
    assert torch.equal(on, off)


def test_factory_dtype_none_and_int8_differ():
    # dtype=None and dtype=torch.int8 once shared key bytes (None's tag equalled int8's enum value)
    assert torch.ones(3, device="tpu").dtype == torch.float32
    assert torch.ones(3, dtype=torch.int8, device="tpu").dtype == torch.int8
    assert torch.ones(3, device="tpu").dtype == torch.float32
