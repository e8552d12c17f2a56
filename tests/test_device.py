"""The tpu device as PyTorch sees it: registration, torch.tpu, torch.accelerator, RNG, memory, autoload,
name conflicts and several virtual devices."""
import warnings

import pytest
import torch
import torchtpu

MiB = 1 << 20


# ---- registration ---------------------------------------------------------------------------------------------
def test_importing_torchtpu_registers_the_tpu_device_and_module():
    assert torch._C._get_privateuse1_backend_name() == "tpu"
    assert torch.tpu.__name__ == "torchtpu.tpu"
    assert torch.device("tpu").type == "tpu"
    t = torch.ones(2, device="tpu")
    assert t.device == torch.device("tpu", 0)


def test_tensor_tpu_method_and_is_tpu_property():
    x = torch.arange(4.0)
    y = x.tpu()
    assert y.is_tpu and not x.is_tpu
    assert y.device.type == "tpu"
    assert torch.equal(y.cpu(), x)


def test_module_tpu_moves_parameters_and_buffers():
    m = torch.nn.BatchNorm1d(3)
    m.tpu()
    assert all(p.is_tpu for p in m.parameters())
    assert all(b.is_tpu for b in m.buffers())


def test_to_device_string_and_torch_device_objects_are_equivalent():
    x = torch.arange(3)
    for d in ("tpu", "tpu:0", torch.device("tpu"), torch.device("tpu", 0)):
        assert x.to(d).device == torch.device("tpu", 0)


# ---- torch.tpu API ------------------------------------------------------------------------------------------
def test_is_available_and_device_count_report_at_least_one_device():
    assert torch.tpu.is_available()
    assert torch.tpu.device_count() >= 1
    assert torch.tpu.is_initialized() in (True, False)


def test_current_device_is_zero_and_set_device_accepts_valid_indices():
    assert torch.tpu.current_device() == 0
    torch.tpu.set_device(0)
    torch.tpu.set_device("tpu:0")
    torch.tpu.set_device(torch.device("tpu", 0))
    assert torch.tpu.current_device() == 0


def test_set_device_with_a_bad_index_raises():
    n = torch.tpu.device_count()
    with pytest.raises(RuntimeError, match="Invalid device index"):
        torch.tpu.set_device(n)
    with pytest.raises(RuntimeError):
        torch.tpu.set_device(-5)
    assert torch.tpu.current_device() == 0


def test_set_device_with_a_non_tpu_device_raises():
    with pytest.raises(ValueError):
        torch.tpu.set_device(torch.device("cpu"))


def test_device_context_manager_restores_the_current_device():
    with torch.tpu.device(0):
        assert torch.tpu.current_device() == 0
        t = torch.zeros(1, device="tpu")
    assert t.device.index == 0
    assert torch.tpu.current_device() == 0


def test_synchronize_with_and_without_a_device_returns():
    x = torch.ones(64, device="tpu") * 3
    torch.tpu.synchronize()
    torch.tpu.synchronize(0)
    torch.tpu.synchronize("tpu:0")
    assert x.sum().item() == 192


def test_get_device_name_and_properties_are_sensible():
    name = torch.tpu.get_device_name()
    assert isinstance(name, str) and name
    p = torch.tpu.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count >= 1


# ---- RNG ----------------------------------------------------------------------------------------------------
def test_manual_seed_makes_rand_reproducible_on_tpu():
    torch.tpu.manual_seed(1234)
    a = torch.rand(100, device="tpu").cpu()
    torch.tpu.manual_seed(1234)
    b = torch.rand(100, device="tpu").cpu()
    assert torch.equal(a, b)
    assert torch.tpu.initial_seed() == 1234


def test_different_seeds_give_different_numbers():
    torch.tpu.manual_seed(1)
    a = torch.rand(100, device="tpu").cpu()
    torch.tpu.manual_seed(2)
    b = torch.rand(100, device="tpu").cpu()
    assert not torch.equal(a, b)


def test_consecutive_draws_differ():
    torch.tpu.manual_seed(7)
    a = torch.rand(100, device="tpu").cpu()
    b = torch.rand(100, device="tpu").cpu()
    assert not torch.equal(a, b)


def test_manual_seed_makes_randn_and_randint_reproducible_on_tpu():
    torch.tpu.manual_seed(5)
    a, ai = torch.randn(100, device="tpu").cpu(), torch.randint(0, 1000, (100,), device="tpu").cpu()
    torch.tpu.manual_seed(5)
    b, bi = torch.randn(100, device="tpu").cpu(), torch.randint(0, 1000, (100,), device="tpu").cpu()
    assert torch.equal(ai, bi)
    assert torch.equal(a, b)


def test_torch_manual_seed_also_seeds_the_tpu_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "Set seed for `tpu` device does not take effect"
        torch.manual_seed(99)
    assert torch.tpu.initial_seed() == 99
    a = torch.rand(50, device="tpu").cpu()
    torch.manual_seed(99)
    b = torch.rand(50, device="tpu").cpu()
    assert torch.equal(a, b)


def test_seed_picks_a_new_random_seed_reported_by_initial_seed():
    s = torch.tpu.seed()
    assert torch.tpu.initial_seed() == s
    s2 = torch.tpu.seed()
    assert s != s2


def test_rand_values_are_in_the_unit_interval():
    torch.tpu.manual_seed(3)
    x = torch.rand(10000, device="tpu").cpu()
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean().item() - 0.5) < 0.05


def test_get_and_set_rng_state_round_trip():
    torch.tpu.manual_seed(42)
    torch.rand(10, device="tpu")
    state = torch.tpu.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    a = torch.rand(20, device="tpu").cpu()
    torch.tpu.set_rng_state(state)
    b = torch.rand(20, device="tpu").cpu()
    assert torch.equal(a, b)
    all_states = torch.tpu.get_rng_state_all()
    assert len(all_states) == torch.tpu.device_count()
    torch.tpu.set_rng_state_all(all_states)


# ---- memory -------------------------------------------------------------------------------------------------
def test_memory_allocated_grows_by_at_least_the_tensor_size_and_falls_when_freed():
    torch.tpu.synchronize()
    before = torch.tpu.memory_allocated()
    t = torch.empty(MiB, dtype=torch.uint8, device="tpu")
    during = torch.tpu.memory_allocated()
    assert during - before >= MiB
    assert torch.tpu.max_memory_allocated() >= during
    del t
    torch.tpu.synchronize()
    assert torch.tpu.memory_allocated() <= during - MiB


def test_reset_peak_memory_stats_lowers_the_peak_to_the_current_value():
    t = torch.empty(4 * MiB, dtype=torch.uint8, device="tpu")
    del t
    torch.tpu.synchronize()
    assert torch.tpu.max_memory_allocated() >= 4 * MiB
    torch.tpu.reset_peak_memory_stats()
    assert torch.tpu.max_memory_allocated() < 4 * MiB + torch.tpu.memory_allocated()
    assert torch.tpu.max_memory_allocated() >= torch.tpu.memory_allocated()


def test_memory_reserved_covers_allocated_and_empty_cache_works():
    t = torch.empty(MiB, dtype=torch.uint8, device="tpu")
    assert torch.tpu.memory_reserved() >= torch.tpu.memory_allocated() >= MiB
    del t
    torch.tpu.empty_cache()
    assert torch.tpu.memory_reserved() >= torch.tpu.memory_allocated()


def test_memory_stats_has_the_cuda_style_keys():
    s = torch.tpu.memory_stats()
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
              "active_bytes.all.current"):
        assert k in s and s[k] >= 0


# ---- torch.accelerator --------------------------------------------------------------------------------------
def test_torch_accelerator_reports_tpu():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "tpu"
    assert torch.accelerator.device_count() == torch.tpu.device_count()
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.synchronize()


@pytest.mark.skipif(not hasattr(torch.accelerator, "memory_allocated"), reason="torch.accelerator.memory_* absent")
def test_torch_accelerator_memory_figures_follow_allocations():
    torch.tpu.synchronize()
    before = torch.accelerator.memory_allocated()
    t = torch.empty(MiB, dtype=torch.uint8, device="tpu")
    assert torch.accelerator.memory_allocated() - before >= MiB
    assert torch.accelerator.max_memory_allocated() >= torch.accelerator.memory_allocated()
    assert torch.accelerator.memory_allocated() == torch.tpu.memory_allocated()
    del t
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() >= torch.accelerator.memory_allocated()


# ---- autoload and name conflicts (fresh interpreters) -------------------------------------------------------
def test_import_torch_autoloads_torchtpu(python):
    r = python("import torch; t = torch.ones(1, device='tpu'); print(t.device, hasattr(torch, 'tpu'))")
    assert r.returncode == 0, r.stderr
    assert "tpu:0 True" in r.stdout


def test_autoload_can_be_switched_off(python):
    r = python("import torch; print(hasattr(torch, 'tpu'), torch._C._get_privateuse1_backend_name())",
               env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "privateuseone"]


def test_import_fails_naming_another_package_that_owns_torch_tpu(python):
    code = (
        "import sys, types, torch\n"
        "torch.utils.rename_privateuse1_backend('tpu')\n"
        "fake = types.ModuleType('sophgo_torch_tpu')\n"
        "torch._register_device_module('tpu', fake)\n"
        "try:\n"
        "    import torchtpu\n"
        "except RuntimeError as e:\n"
        "    print('ERR', e)\n"
        "else:\n"
        "    print('NO ERROR')\n")
    r = python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR"), r.stdout
    assert "sophgo_torch_tpu" in r.stdout


def test_import_fails_when_privateuse1_has_another_name(python):
    code = (
        "import torch\n"
        "torch.utils.rename_privateuse1_backend('npu')\n"
        "try:\n"
        "    import torchtpu\n"
        "except RuntimeError as e:\n"
        "    print('ERR', e)\n"
        "else:\n"
        "    print('NO ERROR')\n")
    r = python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR"), r.stdout
    assert "'npu'" in r.stdout


def test_reimporting_torchtpu_is_harmless():
    import importlib

    assert importlib.import_module("torchtpu") is torchtpu
    assert torch.tpu.__name__ == "torchtpu.tpu"


# ---- several virtual devices --------------------------------------------------------------------------------
MULTI = r"""
import torch, torchtpu
assert torch.tpu.device_count() == 2, torch.tpu.device_count()
x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
a = x.to('tpu:0')
b = x.to('tpu:1')
assert b.device == torch.device('tpu', 1), b.device
assert torch.equal((b * 2).cpu(), x * 2)
assert (b * 2).device.index == 1
c = a.to('tpu:1')
assert c.device.index == 1 and torch.equal(c.cpu(), x)
d = c.t().to('tpu:0')
assert d.device.index == 0 and torch.equal(d.cpu(), x.t())
e = b[:, 1::2].to('tpu:0')
assert torch.equal(e.cpu(), x[:, 1::2])
with torch.tpu.device(1):
    assert torch.tpu.current_device() == 1
    f = torch.ones(2, device='tpu')
    assert f.device.index == 1
assert torch.tpu.current_device() == 0
torch.tpu.set_device(1)
assert torch.zeros(1, device='tpu').device.index == 1
torch.tpu.set_device(0)
try:
    a + b
except RuntimeError as err:
    print('MIXED', err)
else:
    print('MIXED no error')
try:
    torch.tpu.set_device(2)
except RuntimeError:
    print('BADINDEX ok')
print('DONE')
"""


def test_two_host_devices_copy_between_each_other_and_the_cpu(python):
    r = python(MULTI, env={"TORCHTPU_HOST_DEVICES": "2"})
    assert r.returncode == 0, r.stderr
    assert "DONE" in r.stdout
    assert "BADINDEX ok" in r.stdout


def test_an_op_on_tensors_from_two_devices_raises(python):
    r = python(MULTI, env={"TORCHTPU_HOST_DEVICES": "2"})
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("MIXED")][0]
    assert "same device" in line, line


def test_a_bad_host_device_count_is_a_clear_error(python):
    r = python("import torch, torchtpu; torch.ones(1, device='tpu')", env={"TORCHTPU_HOST_DEVICES": "zero"})
    assert r.returncode != 0
    assert "TORCHTPU_HOST_DEVICES" in r.stderr
    assert "Segmentation" not in r.stderr
