"""Eager modes: debug (synchronous) and strict (asynchronous worker), how to switch between them, what each
guarantees, and the environment variables that choose one at start-up."""
import pytest
import torch
import torchtpu

from conftest import assert_same

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")


def _overcommit_refuses_huge_allocations():
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() != "1"
    except OSError:
        return False


def huge_broadcast_sum():
    """An op whose failure only shows when it executes: the host driver gathers the 2^21 x 2^21 broadcast view
    into a temporary (16 TiB) when it runs, and that allocation fails. Launching it allocates nothing big."""
    x = torch.ones(1, device="tpu").expand(2 ** 21, 2 ** 21)
    return x.sum()


needs_refused_malloc = pytest.mark.skipif(not _overcommit_refuses_huge_allocations(),
                                          reason="vm.overcommit_memory=1 would let a 16 TiB malloc succeed")


# ---- switching ---------------------------------------------------------------------------------------------
def test_default_mode_is_strict(python):
    r = python("import torch, torchtpu; print(torch.tpu.get_eager_mode())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "strict"


@pytest.mark.parametrize("mode", ["debug", "strict", "DEBUG", "Strict"])
def test_set_eager_mode_by_name(mode):
    torch.tpu.set_eager_mode(mode)
    assert torch.tpu.get_eager_mode() == mode.lower()
    assert torchtpu.get_eager_mode() == mode.lower()


def test_set_eager_mode_by_google_torchtpu_names():
    torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING)
    assert torch.tpu.get_eager_mode() == "debug"
    torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER)
    assert torch.tpu.get_eager_mode() == "strict"
    assert torchtpu.EagerMode is torch.tpu.EagerMode


def test_an_unknown_mode_is_a_value_error():
    with pytest.raises(ValueError, match="eager mode"):
        torch.tpu.set_eager_mode("lazy")
    with pytest.raises(ValueError):
        torch.tpu.set_eager_mode(3)


def test_fused_mode_is_not_implemented_yet():
    before = torch.tpu.get_eager_mode()
    with pytest.raises(NotImplementedError, match="fused"):
        torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_AND_FUSE)
    assert torch.tpu.get_eager_mode() == before
    with pytest.raises(NotImplementedError):
        torch.tpu.set_eager_mode("fused")


@pytest.mark.parametrize("outer,inner", [("strict", "debug"), ("debug", "strict")])
def test_eager_mode_context_manager_restores_the_previous_mode(outer, inner):
    torch.tpu.set_eager_mode(outer)
    with torchtpu.eager_mode(inner):
        assert torch.tpu.get_eager_mode() == inner
    assert torch.tpu.get_eager_mode() == outer
    with pytest.raises(KeyError):
        with torch.tpu.eager_mode(inner):
            raise KeyError("boom")
    assert torch.tpu.get_eager_mode() == outer


def test_switching_modes_keeps_queued_work():
    torch.tpu.set_eager_mode("strict")
    x = torch.arange(1000.0, device="tpu")
    for _ in range(20):
        x = x * 1.5 - 1
    torch.tpu.set_eager_mode("debug")
    want = torch.arange(1000.0)
    for _ in range(20):
        want = want * 1.5 - 1
    assert_same(x, want)


# ---- results identical in both modes --------------------------------------------------------------------------
def _workload():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(33, 17, generator=g).to("tpu")
    b = torch.randn(17, 9, generator=g).to("tpu")
    c = (a @ b).relu().softmax(-1)
    d = c.t().contiguous()[::2].sum(1) + torch.arange(5, device="tpu")
    e = torch.cat([c.flatten(), d]).sort().values
    m = c.clone()
    m[m > 0.1] = 0
    m.add_(1).mul_(d.mean())
    return [c, d, e, m, (a > 0).sum(), a.argmax(1)]


def test_results_are_identical_in_debug_and_strict_modes():
    with torchtpu.eager_mode("debug"):
        r_debug = [t.cpu() for t in _workload()]
    with torchtpu.eager_mode("strict"):
        r_strict = [t.cpu() for t in _workload()]
    for x, y in zip(r_debug, r_strict):
        assert x.dtype == y.dtype
        assert torch.equal(x, y)


def test_metrics_count_launches_by_mode():
    torch.tpu.set_eager_mode("strict")
    torchtpu.reset_metrics()
    x = torch.ones(8, device="tpu")
    for _ in range(5):
        x = x + 1
    torch.tpu.synchronize()
    m = torchtpu.metrics()
    assert m["ops"]["strict"] >= 5
    assert m["ops"]["debug"] == 0
    torch.tpu.set_eager_mode("debug")
    torchtpu.reset_metrics()
    for _ in range(3):
        x = x * 2
    m = torchtpu.metrics()
    assert m["ops"]["debug"] >= 3
    assert m["ops"]["strict"] == 0
    assert x.cpu()[0].item() == 48


def test_strict_mode_results_are_ready_at_every_sync_point():
    torch.tpu.set_eager_mode("strict")
    x = torch.arange(10.0, device="tpu")
    y = (x * 2).sum()
    assert y.item() == 90
    z = x + 1
    assert z.tolist() == [float(i + 1) for i in range(10)]
    w = x * 3
    assert "27." in repr(w)
    v = x - 1
    torch.tpu.synchronize()
    assert torch.equal(v.cpu(), torch.arange(10.0) - 1)


def test_writes_then_reads_of_one_buffer_stay_in_order_in_strict_mode():
    torch.tpu.set_eager_mode("strict")
    x = torch.zeros(100, device="tpu")
    for i in range(50):
        x.add_(i)
        x[i] = -1.0
    want = torch.zeros(100)
    for i in range(50):
        want.add_(i)
        want[i] = -1.0
    assert_same(x, want)


# ---- errors in queued work ------------------------------------------------------------------------------------
@needs_refused_malloc
def test_strict_mode_raises_a_queued_ops_error_at_the_next_sync_and_names_the_op():
    torch.tpu.set_eager_mode("strict")
    y = huge_broadcast_sum()  # returns at once: the failure happens on the worker
    with pytest.raises(torch.OutOfMemoryError, match=r"aten::sum"):
        torch.tpu.synchronize()
    # the error was taken by that sync: the device works again
    assert (torch.ones(2, device="tpu") * 3).tolist() == [3.0, 3.0]
    del y


@needs_refused_malloc
def test_strict_mode_raises_a_queued_ops_error_at_item():
    torch.tpu.set_eager_mode("strict")
    y = huge_broadcast_sum()
    with pytest.raises(torch.OutOfMemoryError, match=r"aten::sum"):
        y.item()


@needs_refused_malloc
def test_strict_mode_raises_a_queued_ops_error_at_cpu_copy_of_a_later_tensor():
    torch.tpu.set_eager_mode("strict")
    huge_broadcast_sum()
    z = torch.ones(3, device="tpu") + 1
    with pytest.raises(RuntimeError, match=r"aten::sum"):
        z.cpu()


@needs_refused_malloc
def test_debug_mode_raises_the_error_at_the_op_itself():
    torch.tpu.set_eager_mode("debug")
    with pytest.raises(torch.OutOfMemoryError, match=r"aten::sum"):
        huge_broadcast_sum()
    torch.tpu.synchronize()  # nothing left over


# ---- environment variables (fresh interpreters) -------------------------------------------------------------
MODE = "import torch, torchtpu; torch.ones(1, device='tpu'); print(torch.tpu.get_eager_mode())"


@pytest.mark.parametrize("env,want", [
    ({"TORCHTPU_EAGER_MODE": "debug"}, "debug"),
    ({"TORCHTPU_EAGER_MODE": "strict"}, "strict"),
    ({"TPU_LAUNCH_BLOCKING": "1"}, "debug"),
    ({"TPU_LAUNCH_BLOCKING": "1", "TORCHTPU_EAGER_MODE": "strict"}, "debug"),
], ids=["eager_mode=debug", "eager_mode=strict", "launch_blocking", "launch_blocking_wins"])
def test_environment_chooses_the_start_mode(python, env, want):
    r = python(MODE, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want


def test_an_invalid_mode_in_the_environment_is_a_clear_error(python):
    r = python(MODE, env={"TORCHTPU_EAGER_MODE": "turbo"})
    assert r.returncode != 0
    assert "TORCHTPU_EAGER_MODE" in r.stderr and "turbo" in r.stderr
    assert "Traceback" in r.stderr  # a Python exception, not a crash


def test_fused_mode_in_the_environment_says_not_implemented(python):
    r = python(MODE, env={"TORCHTPU_EAGER_MODE": "fused"})
    assert r.returncode != 0
    assert "fused" in r.stderr and "not implemented" in r.stderr
