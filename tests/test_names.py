"""Google TorchTPU's public names on torchtpu: the table in torchtpu/tpu/_api.py against the modules (both ways),
the submodules and their imports, the device functions, and the refusal to load next to Google's package."""
import importlib
import json
import os
import textwrap
import threading
import types

import re

import pytest
import torch
import torchtpu
from torchtpu.tpu import _api

MODULES = {"": torch.tpu, **{name: getattr(torch.tpu, name) for name in _api.SUBMODULES}}


def rows():
    for name, origin, status in _api.TORCH_TPU:
        yield "", name, origin, status
    for mod, table in _api.SUBMODULES.items():
        for name, origin, status in table:
            yield mod, name, origin, status


def label(mod, name):
    return f"torch.tpu.{mod + '.' if mod else ''}{name}"


# ---- the table against the modules ----------------------------------------------------------------------------
def test_every_name_the_table_provides_exists():
    missing = [label(m, n) for m, n, _o, s in rows() if s == _api.HERE and not hasattr(MODULES[m], n)]
    assert not missing


def test_every_public_name_of_the_modules_is_in_the_table():
    """A name added to torch.tpu (or a submodule) without a row fails here: the table stays the whole API."""
    known = {(m, n) for m, n, _o, _s in rows()}
    unlisted = []
    for m, mod in MODULES.items():
        for n, v in vars(mod).items():
            if n.startswith("_") or isinstance(v, types.ModuleType) and m == "" and n not in _api.SUBMODULES:
                continue
            if isinstance(v, types.ModuleType) and n not in _api.SUBMODULES:
                continue
            home = getattr(v, "__module__", None) or ""
            ours = home.startswith(("torchtpu", "torch.tpu"))
            if not ours and not isinstance(v, types.ModuleType):
                continue  # imported helpers (torch, namedtuple, contextlib...) are not torch.tpu's names
            if (m, n) not in known:
                unlisted.append(label(m, n))
    for prop in ("eager_mode", "default_generators"):  # properties live on the module's class
        assert ("", prop) in known
    assert not unlisted


def test_google_names_are_here_or_say_which_issue_brings_them():
    for m, n, origin, status in rows():
        if origin != "google":
            continue
        mod = MODULES[m]
        if status == _api.HERE:
            assert hasattr(mod, n), label(m, n)
        elif m == "":
            assert not hasattr(mod, n), f"{label(m, n)} exists: mark it HERE in _api.py"
        else:
            assert _api.is_later(status), (label(m, n), status)
            with pytest.raises(NotImplementedError, match="not implemented yet") as e:
                getattr(mod, n)()
            assert status in str(e.value) and label(m, n) in str(e.value)


def test_later_reasons_name_an_issue_by_number_or_say_it_is_not_filed():
    for reason in _api.LATER:
        assert reason.startswith("issue ") or "not filed yet" in reason, reason


def test_placeholder_classes_can_be_subclassed_but_not_made():
    class Mine(torch.tpu.optimizers.AdamW):
        pass

    with pytest.raises(NotImplementedError, match="optimizers issue"):
        Mine()


# ---- submodules and imports ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(_api.SUBMODULES))
def test_import_torch_tpu_submodule_is_torchtpus_module(name):
    mod = importlib.import_module(f"torch.tpu.{name}")
    assert mod is importlib.import_module(f"torchtpu.tpu.{name}")
    assert getattr(torch.tpu, name) is mod


def test_submodule_imports_work_in_a_fresh_interpreter(python):
    code = textwrap.dedent("""
        import torch
        import torch.tpu.distributed
        from torch.tpu.profiler import TpuProfilerConfig
        from torch.tpu.compiler import custom_compiler_options
        from torch.tpu.ops import ragged_dot
        from torch.tpu.pallas import jax_op
        from torch.tpu.optimizers import SingleTraceTrainer
        import torchtpu.tpu.compiler as c
        assert custom_compiler_options is c.custom_compiler_options
        try:
            torch.tpu.distributed.set_tpu_launch_env(nnodes=1, nproc_per_node=1)
        except NotImplementedError as e:
            print("NotImplementedError", e)
    """)
    r = python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("NotImplementedError torch.tpu.distributed.set_tpu_launch_env is not implemented yet")
    assert "distributed issue" in r.stdout


# ---- profiler ------------------------------------------------------------------------------------------------------
def test_torch_profiler_with_the_tpu_activity_records_tpu_ops():
    from torch.profiler import ProfilerActivity, profile

    from torch.tpu.profiler import TpuProfilerConfig

    assert ProfilerActivity.PrivateUse1 in torch._C._autograd._supported_activities()
    x = torch.randn(32, 32, device="tpu")
    with torch.tpu.set_eager_mode("debug"):  # spans contain the device's execution
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                     experimental_config=TpuProfilerConfig(output_dir="/tmp/unused")) as prof:
            y = (x @ x).relu().sum().item()
    names = {e.name for e in prof.events()}
    assert {"aten::mm", "aten::relu", "aten::sum"} <= names, names
    assert y == pytest.approx(((x.cpu() @ x.cpu()).relu().sum()).item(), rel=1e-2)


@pytest.mark.parametrize("mode", ["debug", "strict"])
def test_torch_profiler_records_device_spans(mode, tmp_path):
    """csrc/aten/profiler.cpp: a Kineto activity profiler for the device. Each program the device runs is a
    kernel event of device tpu:N (each host write a memcpy), timed on the device's own timeline."""
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(64, 64, device="tpu")
    torch.tpu.synchronize()
    with torch.tpu.set_eager_mode(mode):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
            for _ in range(3):
                y = torch.mm(x, x).relu()
            y.cpu()
    dev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    assert sorted(e.name for e in dev) == ["aten::mm"] * 3 + ["aten::relu"] * 3, [e.name for e in dev]
    assert all(e.device_index == 0 and e.time_range.elapsed_us() > 0 for e in dev)
    by_name = {a.key: a for a in prof.key_averages()}
    assert by_name["aten::mm"].self_device_time_total > 0
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    kernels = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) == 6 and {e["args"]["device"] for e in kernels} == {"tpu:0"}
    # A profile that does not ask for the device records none of its work.
    with profile(activities=[ProfilerActivity.CPU]) as cpu_only:
        torch.mm(x, x).cpu()
    assert not [e for e in cpu_only.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]


# ---- compiler options --------------------------------------------------------------------------------------------
def test_custom_compiler_options_nest_and_restore():
    opts = torch.tpu.compiler.current_compiler_options
    assert opts() == {}
    with torch.tpu.compiler.custom_compiler_options({"xla_optimization_level": "O3", "a": 1}):
        assert opts() == {"xla_optimization_level": "O3", "a": 1}
        with torch.tpu.compiler.custom_compiler_options({"xla_optimization_level": "O0"}):
            assert opts() == {"xla_optimization_level": "O0", "a": 1}
        assert opts()["xla_optimization_level"] == "O3"
        assert threading_value(opts) == {}  # per thread
    assert opts() == {}
    with pytest.raises(KeyError):
        with torch.tpu.compiler.custom_compiler_options({"xla_optimization_level": "O2"}):
            raise KeyError("boom")
    assert opts() == {}


def threading_value(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


@pytest.mark.parametrize("bad,exc", [({"xla_optimization_level": "O4"}, ValueError),
                                     ({"xla_optimization_level": 2}, ValueError),
                                     ({"xla_optimization_level": "o1"}, ValueError),
                                     ({1: "x"}, TypeError), ({"k": [1]}, TypeError), ("O1", TypeError)])
def test_custom_compiler_options_are_validated(bad, exc):
    with pytest.raises(exc):
        with torch.tpu.compiler.custom_compiler_options(bad):
            pass
    assert torch.tpu.compiler.current_compiler_options() == {}


# ---- device functions --------------------------------------------------------------------------------------------
def test_device_name_says_which_driver_runs_it():
    if torchtpu._C.driver_name() == "host":
        assert torch.tpu.get_device_name() == "torchtpu host driver"
    else:  # the PJRT driver names its plugin: "torchtpu pjrt driver (pjrt xla_cpu_pjrt.so cpu ...)"
        assert re.fullmatch(r"torchtpu pjrt driver \(pjrt \S+\.so \w+ .*\)", torch.tpu.get_device_name())
    assert torch.tpu.get_device_name(0) == torch.tpu.get_device_name("tpu:0")
    assert torch.tpu.get_device_properties(0).name == torch.tpu.get_device_name()


@pytest.mark.parametrize("fn", [torch.tpu.set_device, torch.tpu.get_device_name, torch.tpu.get_rng_state,
                                torch.tpu.synchronize, torch.tpu.device])
def test_a_device_that_does_not_exist_is_an_error(fn):
    with pytest.raises(RuntimeError, match="Invalid device index"):
        fn(torch.tpu.device_count())
    with pytest.raises(RuntimeError, match="Invalid device index"):
        fn(-3)
    with pytest.raises(ValueError, match="tpu device"):
        fn("cpu")
    with pytest.raises(TypeError):
        fn(1.5)


def test_default_generators_are_the_devices_generators():
    gens = torch.tpu.default_generators
    assert isinstance(gens, tuple) and len(gens) == torch.tpu.device_count()
    assert all(isinstance(g, torch.Generator) for g in gens)
    assert gens[0].device == torch.device("tpu", 0)
    assert torch.tpu.default_generators is gens  # made once, as torch.cuda's
    gens[0].manual_seed(77)
    assert torch.tpu.initial_seed() == 77
    a = torch.rand(16, device="tpu").cpu()
    torch.tpu.manual_seed(77)
    assert gens[0].initial_seed() == 77
    assert torch.equal(torch.rand(16, device="tpu").cpu(), a)


def test_rng_state_round_trips_and_a_bad_state_is_an_error():
    torch.tpu.manual_seed(5)
    state = torch.tpu.get_rng_state()
    a = torch.rand(8, device="tpu").cpu()
    torch.tpu.set_rng_state(state)
    assert torch.equal(torch.rand(8, device="tpu").cpu(), a)
    torch.tpu.manual_seed_all(5)
    assert torch.equal(torch.tpu.get_rng_state(0), state)
    # errors as torch.cuda.set_rng_state gives them (the generator's own checks)
    for bad, err, match in ((torch.zeros(3, dtype=torch.uint8), RuntimeError, "16 bytes"),
                            (torch.zeros(16), TypeError, "ByteTensor"), ("state", TypeError, "ByteTensor")):
        with pytest.raises(err, match=match):
            torch.tpu.set_rng_state(bad)
    # no torch function runs: a TorchFunctionMode (PyTorch's TorchRefsMode in freeze_rng_state) sees nothing
    from torch.overrides import TorchFunctionMode

    class Refuse(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise AssertionError(f"{func} ran")

    with Refuse():
        torch.tpu.set_rng_state(torch.tpu.get_rng_state())


def test_device_and_device_of_switch_the_current_device():
    t = torch.ones(1, device="tpu:0")
    with torch.tpu.device_of(t):
        assert torch.tpu.current_device() == 0
    with torch.tpu.device(None):
        assert torch.tpu.current_device() == 0
    with torch.tpu.device_of(torch.ones(1)):  # a CPU tensor changes nothing
        assert torch.tpu.current_device() == 0
    assert torch.tpu.is_available() and torch.tpu.is_initialized() in (True, False)
    assert torch.bfloat16 in torch.tpu.get_amp_supported_dtype()


# ---- Google's package next to ours ---------------------------------------------------------------------------------
def test_import_fails_naming_googles_torch_tpu_module(python, tmp_path):
    pkg = tmp_path / "torch_tpu"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise SystemExit('the fake torch_tpu must not be imported')\n")
    r = python("import torch, torchtpu", env={"PYTHONPATH": f"{os.path.dirname(os.path.dirname(__file__))}"
                                                           f"{os.pathsep}{tmp_path}",
                                             "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode != 0
    assert "ImportError: torchtpu cannot load: Google's TorchTPU package torch_tpu is also installed" in r.stderr
    assert str(pkg) in r.stderr and "fake torch_tpu must not be imported" not in r.stderr


def test_import_fails_naming_googles_torch_backends_entry_point(python, tmp_path):
    info = tmp_path / "torch_tpu-0.2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch-tpu\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text("[torch.backends]\ntorch_tpu = torch_tpu:_autoload\n")
    r = python("import torch, torchtpu", env={"PYTHONPATH": f"{os.path.dirname(os.path.dirname(__file__))}"
                                                           f"{os.pathsep}{tmp_path}",
                                             "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode != 0
    assert "torch_tpu is also installed (torch.backends entry point 'torch_tpu'" in r.stderr
    assert "'torch-tpu'" in r.stderr


def test_torchtpu_alone_imports(python):
    r = python("import torch, torchtpu; print(torch.tpu.__name__)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "torchtpu.tpu"
