"""Regressions found in review of the C++ shim and the package: each test names the behaviour it pins."""
import weakref

import pytest
import torch
import torchtpu

from conftest import run_python


def test_moving_a_cpu_module_with_weakrefs_is_untouched_by_torchtpu():
    m = torch.nn.Linear(2, 2)
    r = weakref.ref(m.weight)
    m.double()
    assert r() is m.weight and m.weight.dtype == torch.float64
    assert not torch.__future__.get_swap_module_params_on_conversion()


def test_moving_a_copy_to_tpu_does_not_slow_the_cpu_original():
    """A tpu move must leave global PyTorch state alone (swap mode once made later CPU matmuls 20x slower)."""
    import copy

    m = torch.nn.Linear(4, 4)
    copy.deepcopy(m).to("tpu")
    assert not torch.__future__.get_swap_module_params_on_conversion()


def test_tied_weights_stay_tied_moving_to_tpu_and_back():
    emb = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    m = torch.nn.Sequential(emb, head)
    for move in (lambda: m.to("tpu"), lambda: m.cpu(), lambda: m.tpu()):
        move()
        assert m[1].weight is m[0].weight


def test_resize_to_the_same_size_keeps_strides_like_cpu():
    for d in ("cpu", "tpu"):
        y = torch.randn(3, 4, device=d).t()
        y.resize_(4, 3)
        assert y.stride() == (1, 4), d


def test_clone_preserves_the_layout_like_cpu():
    x = torch.randn(3, 4)
    assert x.t().to("tpu").clone().stride() == x.t().clone().stride()
    c = torch.randn(2, 3, 4, 5, device="tpu").contiguous(memory_format=torch.channels_last)
    assert c.is_contiguous(memory_format=torch.channels_last)


def test_stablehlo_refuses_a_function_that_writes_part_of_a_tensor():
    def f(x):
        y = x + 1
        y[0] = 5.0
        return y * 2

    with pytest.raises(NotImplementedError, match="writes into part of a tensor"):
        torchtpu.stablehlo(f, torch.ones(3, device="tpu"))
    assert "stablehlo.multiply" in torchtpu.stablehlo(lambda x: (x + 1) * 2, torch.ones(3, device="tpu"))


def test_querying_an_event_raises_a_queued_error_instead_of_dropping_it():
    torchtpu.set_eager_mode("strict")
    x = torch.arange(3.0, device="tpu")
    x[torch.tensor([5], device="tpu")]
    e = torch.Event(device="tpu")
    e.record()
    with pytest.raises(IndexError, match="out of bounds"):
        while not e.query():  # queries never block; once the event is reached they raise, as CUDA's do
            pass
    torch.tpu.synchronize()


def test_seeding_a_private_generator_leaves_the_default_stream_alone():
    torch.manual_seed(0)
    a = torch.randn(3, device="tpu").cpu()
    torch.manual_seed(0)
    g = torch.Generator("tpu")
    g.manual_seed(123)
    b = torch.randn(3, device="tpu").cpu()
    assert torch.equal(a, b)


def test_a_failed_allocation_leaves_the_current_device_unchanged():
    out = run_python(
        "import torch, torchtpu\n"
        "try:\n    torch.empty(3, dtype=torch.complex64, device='tpu:1')\nexcept TypeError:\n    pass\n"
        "print(torch.tpu.current_device())\n",
        env={"TORCHTPU_HOST_DEVICES": "2"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0"


def test_accelerator_probes_report_unavailable_on_a_broken_configuration():
    out = run_python("import torch\nprint(torch.accelerator.is_available(), torch.tpu.is_available())\n",
                     env={"TORCHTPU_DRIVER": "nonexistent"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False False"
