"""Fused eager mode (DeferAndFuse): ops recorded into a window per device and run as one program at a cut.

What a user can count on: the same results as strict mode; intermediates no tensor still references are never
allocated; every cut has a reason that metrics count and TORCHTPU_LOG=fusion prints with the user's line; a
training loop replays cached programs; errors of deferred ops raise at the sync point as in strict mode."""
import threading

import pytest
import torch
import torchtpu

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")

MiB = 1 << 20


@pytest.fixture
def fused():
    torchtpu.set_eager_mode("fused")
    torch.tpu.synchronize()
    torchtpu.reset_metrics()
    yield
    torch.tpu.synchronize()


def in_mode(mode, fn, *args):
    """fn(*args) in `mode`, results moved to the CPU."""
    with torchtpu.eager_mode(mode):
        out = fn(*args)
        return [t.cpu() for t in out] if isinstance(out, (list, tuple)) else out.cpu()


# ---- choosing the mode ---------------------------------------------------------------------------------------
def test_fused_mode_is_chosen_by_every_name():
    before = torch.tpu.get_eager_mode()
    torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_AND_FUSE)
    assert torch.tpu.get_eager_mode() == "fused"
    assert torch.tpu.eager_mode is torch.tpu.EagerMode.DEFER_AND_FUSE
    torchtpu.set_eager_mode(before)
    torch.tpu.eager_mode = torch.tpu.EagerMode.DEFER_AND_FUSE
    assert torchtpu.get_eager_mode() == "fused"
    with torch.tpu.set_eager_mode("strict"):  # a thread override inside fused
        assert torch.tpu.get_eager_mode() == "strict"
    assert torch.tpu.get_eager_mode() == "fused"


@pytest.mark.parametrize("env", [{"TORCHTPU_EAGER_MODE": "fused"}, {"TORCH_TPU_DEFER_AND_FUSE": "1"}],
                         ids=["eager_mode=fused", "defer_and_fuse"])
def test_fused_mode_from_the_environment(python, env):
    r = python("import torch, torchtpu\n"
               "x = torch.arange(6.0, device='tpu')\n"
               "print(torch.tpu.get_eager_mode(), (x * 2 + 1).sum().item())", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["fused", "36.0"]


# ---- one window, one program ---------------------------------------------------------------------------------
def test_a_chain_with_views_runs_as_one_window_and_equals_strict(fused):
    x = torch.randn(64, 33)
    want = in_mode("strict", lambda t: ((t[:, 1:].t() + 1).relu() * 2).exp().sum(0), x.to("tpu"))
    xt = x.to("tpu")
    torch.tpu.synchronize()
    torchtpu.reset_metrics()
    got = ((xt[:, 1:].t() + 1).relu() * 2).exp().sum(0)
    m = torchtpu.metrics()
    assert m["fused_windows"] == 0 and m["ops"]["fused"] >= 5  # recorded, nothing ran yet
    got = got.cpu()
    m = torchtpu.metrics()
    assert m["fused_windows"] == 1 and m["cuts"] == {"read": 1}
    assert m["pending_dropped"] >= 3  # the intermediates
    assert torch.equal(got, want)  # same float ops in the same order: bit for bit


def test_in_place_writes_into_views_of_pending_and_real_storages(fused):
    def work(dev):
        w = torch.zeros(6, 5, device=dev)
        w[1:3] = 7
        w[:, 2].add_(torch.arange(6.0, device=dev))
        w.t()[1:4:2] *= 3
        v = torch.ones(4, 4, device=dev)
        torch.tpu.synchronize()  # v has memory now; the next writes go into it
        v.diagonal().mul_(5)
        v[::2, 1:] = w[:2, :3]
        return [w, v]

    want = [t.cpu() for t in in_mode("strict", work, "tpu")]
    got = [t.cpu() for t in work("tpu")]
    for g, e in zip(got, want):
        assert torch.equal(g, e)
    assert torchtpu.metrics()["cuts"].get("view", 0) == 0  # every view was expressed in the window


def test_intermediates_no_tensor_references_are_never_allocated(fused):
    x = torch.randn(2 * MiB // 4, device="tpu")  # 2 MiB
    torch.tpu.synchronize()
    torch.tpu.reset_peak_memory_stats()
    base = torch.tpu.memory_allocated()
    y = x
    for _ in range(8):  # eight 2 MiB intermediates, dead as soon as the next is made
        y = (y * 1.5 + 1).tanh()
    y = y.cpu()
    peak = torch.tpu.max_memory_allocated() - base
    assert peak <= 2 * MiB + 4096, peak  # the one result; strict would peak at 3 of them at least
    assert torchtpu.metrics()["pending_dropped"] >= 16


def test_a_user_torch_empty_allocates_at_once_as_on_cuda(fused):
    before = torch.tpu.memory_allocated()
    t = torch.empty(MiB, dtype=torch.uint8, device="tpu")
    assert torch.tpu.memory_allocated() - before >= MiB
    del t


# ---- cuts ----------------------------------------------------------------------------------------------------
def test_each_cut_reason_is_counted(fused):
    x = torch.ones(8, device="tpu")
    (x + 1).sum().item()
    (x * 2).cpu()
    y = x * 3
    torch.tpu.synchronize()
    y.add_(1)
    y.copy_(torch.arange(8.0))  # a host write into a storage the window holds
    z = y * 2
    torchtpu.flush()
    with torch.tpu.set_eager_mode("strict"):
        z.add_(1)  # the next op in strict: an empty window, nothing to cut
    z.mul_(2)
    with torch.tpu.set_eager_mode("strict"):
        z.add_(1)
    cuts = torchtpu.metrics()["cuts"]
    assert cuts.get("read") == 2 and cuts.get("host write") == 1 and cuts.get("flush") == 1
    assert cuts.get("synchronize") == 1 and cuts.get("other mode") == 1
    assert torch.equal(z.cpu(), (torch.arange(8.0) * 2 + 1) * 2 + 1)


def test_the_size_cap_cuts_windows_deterministically_between_calls(python):
    code = ("import torch, torchtpu\n"
            "x = torch.zeros(4, device='tpu')\n"
            "for _ in range(25):\n"
            "    x = x + 1\n"
            "    x = x * 1\n"
            "print(x.sum().item(), sorted(torchtpu.metrics()['cuts'].items()))\n"
            "torchtpu.reset_metrics()\n"
            "for _ in range(25): x = x + 1\n"  # one call (one line): whole below 16 x the cap; cut before the sum
            "print(x.sum().item(), sorted(torchtpu.metrics()['cuts'].items()))\n"
            "torchtpu.reset_metrics()\n"
            "for _ in range(170): x = x - 1\n"  # one call past 16 x the cap: cut at 160, and before the sum
            "print(x.sum().item(), sorted(torchtpu.metrics()['cuts'].items()))\n")
    r = python(code, env={"TORCHTPU_EAGER_MODE": "fused", "TORCHTPU_FUSION_MAX_OPS": "10"})
    assert r.returncode == 0, r.stderr
    # 1 + 50 + 1 ops: cut before the 11th, 21st, 31st, 41st and 51st op, then the read
    assert r.stdout.splitlines() == ["100.0 [('read', 1), ('size cap', 5)]", "200.0 [('read', 1), ('size cap', 1)]",
                                     "-480.0 [('read', 1), ('size cap', 2)]"], r.stdout


def test_fusion_log_names_the_reason_and_the_users_line(python):
    code = ("import torch, torchtpu\n"
            "x = torch.ones(4, device='tpu')\n"
            "for step in range(3):\n"
            "    y = (x * 2).sum()\n"
            "    y.item()\n")
    r = python(code, env={"TORCHTPU_EAGER_MODE": "fused", "TORCHTPU_LOG": "fusion"})
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("torchtpu fusion:")]
    reads = [ln for ln in lines if "cut (read) at <string>:5" in ln]
    assert len(reads) == 3, r.stderr
    # the first also made x; the second is the first window of its ops; the third replays it
    assert "compiled (new structure)" in reads[1] and reads[2].endswith("; replayed"), r.stderr


def test_fusion_log_says_why_a_window_compiled(python):
    code = ("import torch, torchtpu\n"
            "for n, dt in ((4, torch.float32), (8, torch.float32), (8, torch.float64), (8, torch.float64)):\n"
            "    (torch.ones(n, dtype=dt, device='tpu') * 2).sum().item()\n")
    r = python(code, env={"TORCHTPU_EAGER_MODE": "fused", "TORCHTPU_LOG": "fusion"})
    assert r.returncode == 0, r.stderr
    outcomes = [ln.rsplit("; ", 1)[1] for ln in r.stderr.splitlines() if "cut (read) at <string>:3" in ln]
    assert outcomes == ["compiled (new structure)", "compiled (new shapes)", "compiled (new dtype)", "replayed"], \
        r.stderr


def test_a_training_step_replays_cached_programs(fused):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=False)
    x, t = torch.randn(8, 16, device="tpu"), torch.randn(8, 4, device="tpu")

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), t)
        loss.backward()
        opt.step()
        return loss.item()

    step()
    step()  # AdamW's first step differs (its state is created then)
    before_windows = torchtpu.metrics()["fused_windows"]
    before, replays = torchtpu.metrics()["compiles"], torchtpu.metrics()["fused_window_replays"]
    losses = [step() for _ in range(3)]
    m = torchtpu.metrics()
    assert m["compiles"] == before  # the same cuts every step: cached programs
    # ... and the same windows: every one replays its program without building it again
    assert m["fused_window_replays"] - replays == m["fused_windows"] - before_windows
    assert losses[0] > losses[-1]


def test_training_matches_strict_mode():
    def train(mode):
        torch.manual_seed(0)
        with torchtpu.eager_mode(mode):
            model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.LayerNorm(24), torch.nn.GELU(),
                                        torch.nn.Linear(24, 3)).to("tpu")
            opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=False)
            x, t = torch.randn(16, 12).to("tpu"), torch.randint(0, 3, (16,)).to("tpu")
            losses = []
            for _ in range(4):
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), t)
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return losses, [p.detach().cpu() for p in model.parameters()]

    ls, ps = train("strict")
    lf, pf = train("fused")
    assert lf == pytest.approx(ls, rel=1e-5)
    for a, b in zip(ps, pf):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_threads_record_into_one_window_safely(fused):
    out = {}

    def work(k):
        x = torch.full((1000,), float(k), device="tpu")
        for _ in range(50):
            x = x * 1.0 + 1
        out[k] = x.sum().item()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {k: 1000.0 * (k + 50) for k in range(4)}


# ---- errors --------------------------------------------------------------------------------------------------
def test_an_error_in_a_deferred_op_raises_at_the_sync_and_the_device_stays_usable(fused):
    x = torch.arange(3.0, device="tpu")
    y = x[torch.tensor([5], device="tpu")] * 2
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        y.cpu()
    with pytest.raises(IndexError, match="index 5 is out of bounds"):  # its producer failed: raised again, not garbage
        y.cpu()
    assert torch.equal((x + 1).cpu(), torch.tensor([1.0, 2.0, 3.0]))
    y.fill_(1)  # written again: readable
    assert torch.equal(y.cpu(), torch.ones(1))


def _line_of(marker):
    """Line number of the line in this file that contains marker (after it, so not this call)."""
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if marker in text and "_line_of" not in text)


@pytest.mark.parametrize("mode", ["fused", "strict"])
def test_a_deferred_error_names_the_op_and_the_users_line(mode):
    with torchtpu.eager_mode(mode):
        x = torch.arange(3.0, device="tpu")
        y = x * 2
        z = y[torch.tensor([7], device="tpu")] + 1  # the failing op
        w = z * 3
        line = _line_of("# the failing op")
        want = rf"aten::index\.Tensor \(recorded at .*test_fused\.py:{line}\)"
        if mode == "fused":
            want += r", in fused window of \d+ ops"
        with pytest.raises(IndexError, match=want + r".*index 7 is out of bounds"):
            w.cpu()
        assert torch.equal((x + 1).cpu(), torch.tensor([1.0, 2.0, 3.0]))


def test_op_lines_can_be_turned_off(fused):
    torchtpu._C.set_op_lines(False)
    try:
        x = torch.arange(3.0, device="tpu")
        y = x[torch.tensor([4], device="tpu")] * 2
        with pytest.raises(IndexError) as e:
            y.cpu()
        assert "recorded at" not in str(e.value) and "aten::index.Tensor" in str(e.value)
    finally:
        torchtpu._C.set_op_lines(True)


def test_mode_switch_inside_a_window_runs_the_window_first(fused):
    x = torch.ones(3, device="tpu")
    y = x * 5
    torchtpu.set_eager_mode("debug")
    assert torchtpu.metrics()["cuts"].get("other mode") == 1
    assert torch.equal(y.cpu(), torch.full((3,), 5.0))
