"""torchtpu.metrics(): the counters say what the device did."""
import pytest
import torch
import torchtpu

KEYS = ("ops", "compiles", "cache_hits", "fallbacks", "bytes_to_device", "bytes_to_host", "peak_bytes")


@pytest.fixture(autouse=True)
def _debug_mode():
    # debug mode: every launch has happened when the call returns, so counters can be read without a sync
    with torchtpu.eager_mode("debug"):
        torchtpu.reset_metrics()
        yield


def test_metrics_has_every_documented_key():
    m = torchtpu.metrics()
    for k in KEYS:
        assert k in m, k
    assert set(m["ops"]) >= {"debug", "strict"}
    assert isinstance(m["fallbacks"], dict)
    for k in ("compiles", "cache_hits", "bytes_to_device", "bytes_to_host", "peak_bytes"):
        assert isinstance(m[k], int) and m[k] >= 0


def test_reset_metrics_zeroes_the_counters():
    x = torch.ones(100, device="tpu") * 2
    x.cpu()
    assert torchtpu.metrics()["ops"]["debug"] > 0
    torchtpu.reset_metrics()
    m = torchtpu.metrics()
    assert m["ops"]["debug"] == 0 and m["ops"]["strict"] == 0
    assert m["compiles"] == 0 and m["cache_hits"] == 0
    assert m["bytes_to_device"] == 0 and m["bytes_to_host"] == 0
    assert m["fallbacks"] == {}


def test_each_launch_counts_as_one_op_in_the_current_mode():
    x = torch.ones(64, device="tpu")
    torchtpu.reset_metrics()
    y = x + 1
    z = y * y
    m = torchtpu.metrics()
    assert m["ops"]["debug"] == 2
    assert m["ops"]["strict"] == 0
    del z


def test_a_repeated_identical_op_hits_the_cache_instead_of_compiling():
    a = torch.ones(37, 5, device="tpu")
    b = torch.ones(37, 5, device="tpu")
    torch.atan2(a, b)  # make sure the program is cached
    torchtpu.reset_metrics()
    for _ in range(5):
        torch.atan2(a, b)
    m = torchtpu.metrics()
    assert m["compiles"] == 0
    assert m["cache_hits"] == 5


def test_a_new_shape_compiles_once_then_hits():
    torchtpu.reset_metrics()
    a = torch.ones(41, 3, 7, device="tpu")
    torch.hypot(a, a)
    m1 = torchtpu.metrics()
    assert m1["compiles"] >= 1
    torch.hypot(a, a)
    m2 = torchtpu.metrics()
    assert m2["compiles"] == m1["compiles"]
    assert m2["cache_hits"] == m1["cache_hits"] + 1


def test_copies_count_the_bytes_moved_each_way():
    x = torch.ones(1000, dtype=torch.float32)
    torchtpu.reset_metrics()
    t = x.to("tpu")
    assert torchtpu.metrics()["bytes_to_device"] == 4000
    assert torchtpu.metrics()["bytes_to_host"] == 0
    t.cpu()
    assert torchtpu.metrics()["bytes_to_host"] == 4000
    torch.ones(10, dtype=torch.float64).to("tpu")
    assert torchtpu.metrics()["bytes_to_device"] == 4080
    s = torch.ones(7, dtype=torch.int16).to("tpu")
    torchtpu.reset_metrics()
    s.cpu()
    assert torchtpu.metrics()["bytes_to_host"] == 14
    s.t().cpu()
    assert torchtpu.metrics()["bytes_to_host"] == 28


def test_item_counts_the_bytes_of_one_element():
    s = torch.arange(10, dtype=torch.int64, device="tpu")[3]
    torchtpu.reset_metrics()
    assert s.item() == 3
    assert torchtpu.metrics()["bytes_to_host"] == 8


def test_peak_bytes_reflects_a_large_allocation():
    torchtpu.reset_metrics()
    t = torch.empty(3 << 20, dtype=torch.uint8, device="tpu")
    assert torchtpu.metrics()["peak_bytes"] >= 3 << 20
    del t


def test_fallbacks_are_counted_by_op():
    name = "aten::_linalg_svd"
    if torchtpu._C.has_lowering(name):
        pytest.skip("svd has a lowering now")
    x = torch.randn(3, 3).to("tpu")
    with torch.tpu.cpu_fallback_mode(True):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.linalg.svd(x)
            torch.linalg.svd(x)
    fb = torchtpu.metrics()["fallbacks"]
    assert sum(v for k, v in fb.items() if k.startswith(name)) == 2, fb  # svd runs as aten::_linalg_svd.U


def test_strict_mode_ops_are_counted_under_strict():
    with torchtpu.eager_mode("strict"):
        x = torch.ones(16, device="tpu")
        torch.tpu.synchronize()
        torchtpu.reset_metrics()
        for _ in range(4):
            x = x + 1
        torch.tpu.synchronize()
        m = torchtpu.metrics()
    assert m["ops"]["strict"] == 4
    assert m["ops"]["debug"] == 0


def test_native_ops_record_no_fallback():
    x = torch.randn(8, 8).to("tpu")
    ((x @ x).relu() + 1).sum().item()
    assert torchtpu.metrics()["fallbacks"] == {}


def test_cpu_memory_tracking_counts_the_peak_of_cpu_tensors():
    # bench/models.py sets CPU eager's peak beside the tpu allocator's with it
    torchtpu._C.cpu_memory_track(True)
    a = torch.empty(1 << 20)  # 4 MiB
    b = torch.empty(1 << 19)  # 2 MiB, both alive: 6 MiB
    del a, b
    c = torch.ones(1 << 18)  # 1 MiB after they are gone: the peak stays
    peak = torchtpu._C.cpu_memory_peak()
    assert 6 << 20 <= peak < (6 << 20) + (64 << 10), peak
    torchtpu._C.cpu_memory_track(True)  # starts over from what is alive now
    assert torchtpu._C.cpu_memory_peak() == 0
    d = c + 1  # an op's output counts too
    assert torchtpu._C.cpu_memory_peak() >= 1 << 20
    del c, d
