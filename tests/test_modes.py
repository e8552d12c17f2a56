"""Eager modes: debug (synchronous) and strict (asynchronous worker; fused mode: tests/test_fused.py), how to
switch between them (for the process or for one thread), what each guarantees, and the environment variables that choose one at start-up."""
import threading

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


needs_refused_malloc = pytest.mark.skipif(
    not _overcommit_refuses_huge_allocations() or torchtpu._C.driver_name() != "host",
    reason="needs the host driver (XLA folds the broadcast into the sum and allocates nothing; test_errors.py "
           "covers queued errors on every driver) and vm.overcommit_memory != 1 (a 16 TiB malloc must fail)")


# ---- switching ---------------------------------------------------------------------------------------------
def test_default_mode_is_fused(python):
    r = python("import torch, torchtpu; print(torch.tpu.get_eager_mode(), torch.tpu.eager_mode)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["fused", "EagerMode.DEFER_AND_FUSE"]


@pytest.mark.parametrize("mode", ["debug", "strict", "DEBUG", "Strict"])
def test_set_eager_mode_by_name(mode):
    torch.tpu.set_eager_mode(mode)
    assert torch.tpu.get_eager_mode() == mode.lower()
    assert torchtpu.get_eager_mode() == mode.lower()


def test_set_eager_mode_by_google_torchtpu_names():
    torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING)
    assert torch.tpu.get_eager_mode() == "debug"
    assert torch.tpu.eager_mode is torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING
    torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_NEVER)
    assert torch.tpu.get_eager_mode() == "strict"
    assert torch.tpu.eager_mode is torch.tpu.EagerMode.DEFER_NEVER
    assert torchtpu.EagerMode is torch.tpu.EagerMode


def test_eager_mode_property_sets_the_process_mode():
    torch.tpu.eager_mode = torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING
    assert torch.tpu.eager_mode is torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING
    assert torchtpu._C.get_process_eager_mode() == "debug"
    seen = []
    t = threading.Thread(target=lambda: seen.append(torch.tpu.eager_mode))  # a thread without an override
    t.start()
    t.join()
    assert seen == [torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING]
    torch.tpu.eager_mode = "strict"
    assert torch.tpu.eager_mode is torch.tpu.EagerMode.DEFER_NEVER
    assert torchtpu._C.get_process_eager_mode() == "strict"
    with pytest.raises(ValueError, match="eager mode"):
        torch.tpu.eager_mode = "lazy"


def test_an_unknown_mode_is_a_value_error():
    with pytest.raises(ValueError, match="eager mode"):
        torch.tpu.set_eager_mode("lazy")
    with pytest.raises(ValueError):
        torch.tpu.set_eager_mode(3)
    with pytest.raises(ValueError):
        torchtpu.set_eager_mode(None)


@pytest.mark.parametrize("outer,inner", [("strict", "debug"), ("debug", "strict")])
def test_eager_mode_context_managers_restore_the_previous_mode(outer, inner):
    torchtpu.set_eager_mode(outer)
    with torchtpu.eager_mode(inner):  # torchtpu's: the whole process
        assert torch.tpu.get_eager_mode() == inner
        assert torchtpu._C.get_process_eager_mode() == inner
    assert torch.tpu.get_eager_mode() == outer
    with torch.tpu.set_eager_mode(inner):  # Google's: this thread
        assert torch.tpu.get_eager_mode() == inner
        assert torchtpu._C.get_process_eager_mode() == outer
        with torch.tpu.set_eager_mode(outer):  # nested
            assert torch.tpu.get_eager_mode() == outer
        assert torch.tpu.get_eager_mode() == inner
    assert torch.tpu.get_eager_mode() == outer
    for cm in (torchtpu.eager_mode, torch.tpu.set_eager_mode):
        with pytest.raises(KeyError):
            with cm(inner):
                raise KeyError("boom")
        assert torch.tpu.get_eager_mode() == outer


def test_a_process_switch_drops_the_calling_threads_override_only():
    torchtpu.set_eager_mode("strict")
    torch.tpu.set_eager_mode("debug")  # a plain call: this thread stays in debug
    assert torch.tpu.get_eager_mode() == "debug"
    torchtpu.set_eager_mode("strict")  # the process switch the caller asked for applies to the caller too
    assert torch.tpu.get_eager_mode() == "strict"
    assert torchtpu._C.get_thread_eager_mode() == ""


# ---- one mode per thread ----------------------------------------------------------------------------------------
def _in_thread(fn):
    """Runs fn on a new thread; re-raises what it raised."""
    out, err = [], []

    def run():
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 -- handed to the caller
            err.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    assert not t.is_alive(), "thread did not finish"
    if err:
        raise err[0]
    return out[0]


def test_two_threads_run_in_different_modes_at_once():
    torchtpu.set_eager_mode("strict")
    torchtpu.reset_metrics()
    start = threading.Barrier(2)

    def work(mode, n):
        with torch.tpu.set_eager_mode(mode):
            start.wait()
            assert torch.tpu.get_eager_mode() == mode
            x = torch.arange(64.0, device="tpu")
            for _ in range(n):
                x = x * 2 - 1
            want = torch.arange(64.0)
            for _ in range(n):
                want = want * 2 - 1
            return torch.equal(x.cpu(), want)

    results = {}
    threads = [threading.Thread(target=lambda m=m, n=n: results.__setitem__(m, work(m, n)))
               for m, n in (("debug", 7), ("strict", 11))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert results == {"debug": True, "strict": True}
    ops = torchtpu.metrics()["ops"]
    # each thread's launches ran in its own mode (22 strict ones counted as debug would make debug >= 36)
    assert 14 <= ops["debug"] < 22 and ops["strict"] >= 22, ops
    assert torch.tpu.get_eager_mode() == "strict"  # the main thread never had an override


def test_a_thread_override_does_not_leak_into_other_threads():
    torchtpu.set_eager_mode("strict")
    with torch.tpu.set_eager_mode("debug"):
        assert _in_thread(torch.tpu.get_eager_mode) == "strict"
        assert _in_thread(lambda: torch.tpu.eager_mode) is torch.tpu.EagerMode.DEFER_NEVER
    assert _in_thread(lambda: (torch.tpu.set_eager_mode("debug"), torch.tpu.get_eager_mode())[1]) == "debug"
    assert torch.tpu.get_eager_mode() == "strict"  # that thread's plain call stayed in that thread


def test_a_debug_op_waits_for_the_strict_work_queued_before_it():
    """No sync happens at the switch: the debug op itself must wait for the queued adds, or it reads x early."""
    torchtpu.set_eager_mode("strict")
    x = torch.zeros(1 << 22, device="tpu")
    for _ in range(40):
        x.add_(1)  # queued
    with torch.tpu.set_eager_mode("debug"):
        y = x * 2  # runs now, on this thread
    assert torch.equal(y.cpu(), torch.full((1 << 22,), 80.0))


def test_a_debug_op_in_one_thread_waits_for_another_threads_queued_work():
    torchtpu.set_eager_mode("strict")
    x = torch.zeros(1 << 22, device="tpu")
    queued = threading.Event()

    def producer():
        for _ in range(40):
            x.add_(1)
        queued.set()

    def consumer():
        queued.wait(60)
        with torch.tpu.set_eager_mode("debug"):
            return x * 2

    t = threading.Thread(target=producer)
    t.start()
    y = _in_thread(consumer)
    t.join()
    assert torch.equal(y.cpu(), torch.full((1 << 22,), 80.0))


def test_a_queued_error_stops_later_debug_ops_and_stays_for_the_next_sync():
    """Thread S queues a failing op (the ops queued after it are skipped, so their outputs are undefined). A debug op
    in thread D on that device then refuses to run on possibly undefined inputs, naming the failure, without taking
    the error: S's sync still raises it naming the op. After that sync, debug ops run again."""
    torchtpu.set_eager_mode("strict")
    x = torch.arange(3.0, device="tpu")
    x[torch.tensor([5], device="tpu")]  # queued; fails on the worker
    w = torch.ones(4, device="tpu")  # queued after the failure: skipped

    def debug_add():
        with torch.tpu.set_eager_mode("debug"):
            return w + 1

    with pytest.raises(IndexError, match=r"not run, because an earlier queued op on tpu:0 failed: "
                                         r"aten::index\.Tensor \(recorded at .*\.py:\d+\): index 5 is out of bounds"):
        _in_thread(debug_add)
    with pytest.raises(IndexError, match=r"aten::index\.Tensor \(recorded at .*\.py:\d+\): index 5 is out of bounds"):
        torch.tpu.synchronize()
    w = torch.ones(4, device="tpu")
    assert _in_thread(debug_add).tolist() == [2.0, 2.0, 2.0, 2.0]


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
    ({"TORCH_TPU_LAUNCH_BLOCKING": "1"}, "debug"),
    ({"TPU_LAUNCH_BLOCKING": "1"}, "debug"),
    ({}, "fused"),
    ({"TORCHTPU_EAGER_MODE": "fused"}, "fused"),
    ({"TORCH_TPU_LAUNCH_BLOCKING": "0"}, "fused"),
    ({"TPU_LAUNCH_BLOCKING": "1", "TORCHTPU_EAGER_MODE": "strict"}, "debug"),
    ({"TORCH_TPU_LAUNCH_BLOCKING": "1", "TORCH_TPU_DEFER_AND_FUSE": "1"}, "debug"),
    ({"TORCH_TPU_DEFER_AND_FUSE": "0"}, "strict"),
    ({"TORCH_TPU_DEFER_AND_FUSE": "0", "TORCHTPU_EAGER_MODE": "debug"}, "debug"),
    ({"TORCH_TPU_ENABLE_DEBUG_CHECKS": "1"}, "fused"),
], ids=["eager_mode=debug", "eager_mode=strict", "default", "eager_mode=fused", "torch_tpu_launch_blocking",
        "launch_blocking",
        "launch_blocking=0", "launch_blocking_wins", "launch_blocking_overrides_fusion", "defer_and_fuse=0",
        "eager_mode_over_defer_and_fuse=0", "debug_checks"])
def test_environment_chooses_the_start_mode(python, env, want):
    r = python(MODE, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want


def test_an_invalid_mode_in_the_environment_is_a_clear_error(python):
    r = python(MODE, env={"TORCHTPU_EAGER_MODE": "turbo"})
    assert r.returncode != 0
    assert "TORCHTPU_EAGER_MODE" in r.stderr and "turbo" in r.stderr
    assert "Traceback" in r.stderr  # a Python exception, not a crash


def test_debug_checks_variable_is_accepted_and_index_checks_are_on_without_it(python):
    code = ("import torch, torchtpu\n"
            "x = torch.arange(3.0, device='tpu')\n"
            "try:\n"
            "    x[torch.tensor([5])].cpu()\n"
            "except IndexError as e:\n"
            "    print('IndexError')\n")
    for env in ({}, {"TORCH_TPU_ENABLE_DEBUG_CHECKS": "1"}):
        r = python(code, env=env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "IndexError"
