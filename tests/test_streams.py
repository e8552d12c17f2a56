"""Streams and events: torch.tpu.Stream / Event and the generic torch.Stream("tpu") / torch.Event("tpu"), which go
through the same device guard to the runtime's events (a position in the device's in-order queue)."""
import time

import pytest
import torch
import torchtpu


def _poll(query, seconds=60.0):
    """Polls query() until it is true; False after `seconds` (so a query that never turns true fails, not hangs)."""
    t0 = time.monotonic()
    while not query():
        if time.monotonic() - t0 > seconds:
            return False
    return True


def _work(n=64, rounds=20):
    x = torch.randn(n, n, device="tpu")
    for _ in range(rounds):
        x = torch.tanh(x @ x * 0.01)
    return x


@pytest.mark.parametrize("make", ["tpu", "generic"])
def test_event_query_turns_true_by_polling_alone(make):
    torchtpu.set_eager_mode("strict")
    ev = torch.tpu.Event() if make == "tpu" else torch.Event("tpu")
    assert ev.query()  # never recorded: complete, as on CUDA
    y = _work()
    ev.record()
    assert _poll(ev.query)  # no sync anywhere: the query itself must get the queued work run
    assert torch.tpu.Stream().query()
    ref = y.cpu()
    assert torch.isfinite(ref).all()


def test_stream_query_turns_true_by_polling_alone():
    torchtpu.set_eager_mode("strict")
    y = _work()
    s = torch.tpu.current_stream()
    assert _poll(s.query)
    queued, done = torchtpu._C.stream_position(0)
    assert queued == done
    y.cpu()


def test_an_event_marks_a_position_not_the_whole_queue():
    """query is true for an event whose work is done even while later work is queued (checked through the
    runtime's queue counters: the event's position is below what is enqueued)."""
    torchtpu.set_eager_mode("strict")
    a = torch.randn(256, 256, device="tpu")
    e1 = torch.tpu.Event()
    e1.record()
    e1.synchronize()
    pos_after_e1 = torchtpu._C.stream_position(0)[0]
    b = _work(256, 40)
    assert e1.query()  # already complete; later queued work does not make it pending again
    assert torchtpu._C.stream_position(0)[0] > pos_after_e1
    e2 = torch.tpu.Event()
    e2.record()
    e2.synchronize()
    assert e2.query() and torch.tpu.current_stream().query()
    assert b.cpu().shape == (256, 256) and a.cpu().shape == (256, 256)


@pytest.mark.parametrize("mode", ["strict", "debug"])
def test_elapsed_time_between_timing_events(mode):
    torchtpu.set_eager_mode(mode)
    start = torch.tpu.Event(enable_timing=True)
    end = torch.tpu.Event(enable_timing=True)
    start.record()
    y = _work()
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    y.cpu()


def test_generic_torch_event_times_through_the_guard():
    torchtpu.set_eager_mode("strict")
    s = torch.Stream("tpu")
    a = torch.Event("tpu", enable_timing=True)
    b = torch.Event("tpu", enable_timing=True)
    a.record(s)
    y = _work()
    b.record(s)
    b.synchronize()
    assert a.elapsed_time(b) >= 0.0
    assert s.query()
    y.cpu()


def test_elapsed_time_refuses_events_without_timing_or_not_recorded():
    a = torch.tpu.Event(enable_timing=True)
    b = torch.tpu.Event(enable_timing=True)
    with pytest.raises(ValueError, match="recorded"):  # torch.Event's own checks, as for CUDA
        a.elapsed_time(b)
    c = torch.tpu.Event()
    a.record()
    c.record()
    c.synchronize()
    with pytest.raises(ValueError, match="enable_timing=True"):
        a.elapsed_time(c)


def test_event_synchronize_raises_a_queued_error_like_a_sync():
    torchtpu.set_eager_mode("strict")
    x = torch.arange(3.0, device="tpu")
    x[torch.tensor([5], device="tpu")]  # queued; fails when it runs
    ev = torch.tpu.Event()
    ev.record()
    with pytest.raises(IndexError, match=r"aten::index\.Tensor \(recorded at .*\.py:\d+\): index 5 is out of bounds"):
        ev.synchronize()
    torch.tpu.synchronize()  # the error was taken by the event's sync
    assert (x + 1).cpu().tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("what", ["event", "stream"])
def test_polling_raises_a_queued_error_once_the_work_is_done(what):
    torchtpu.set_eager_mode("strict")
    x = torch.arange(3.0, device="tpu")
    x[torch.tensor([5], device="tpu")]  # queued; fails when it runs
    ev = torch.tpu.Event()
    ev.record()
    query = ev.query if what == "event" else torch.tpu.current_stream().query
    with pytest.raises(IndexError, match=r"aten::index\.Tensor \(recorded at .*\.py:\d+\): index 5 is out of bounds"):
        assert _poll(query)
    torch.tpu.synchronize()  # taken by the query
    assert query()


def test_stream_synchronize_and_wait_and_record_event():
    torchtpu.set_eager_mode("strict")
    s = torch.tpu.Stream()
    y = _work()
    ev = s.record_event()
    s.wait_event(ev)
    s.wait_stream(torch.tpu.default_stream())
    ev.wait(s)
    s.synchronize()
    assert ev.query() and s.query()
    assert torch.isfinite(y.cpu()).all()


def test_streams_of_a_device_are_its_one_stream():
    s = torch.tpu.Stream()
    assert isinstance(s, torch.Stream)
    assert s == torch.tpu.current_stream() == torch.tpu.default_stream()
    assert s.device == torch.device("tpu", 0)
    assert torch.accelerator.current_stream() == s
    assert torch.Stream("tpu") == s
    assert torch.tpu.Stream(priority=-1) == s
    assert isinstance(torch.Stream("tpu"), torch.tpu.Stream) and not isinstance(torch.Stream("cpu"), torch.tpu.Stream)
    assert isinstance(torch.tpu.Event(), torch.tpu.Event) and isinstance(torch.Event("tpu"), torch.tpu.Event)
    assert not isinstance(s, torch.tpu.Event)


def test_stream_context_and_set_stream_select_the_device():
    n = torch.tpu.device_count()
    s = torch.tpu.current_stream(n - 1)
    with torch.tpu.stream(s) as got:
        assert got is s
        assert torch.tpu.current_device() == n - 1
        assert torch.ones(2, device="tpu").device.index == n - 1
    assert torch.tpu.current_device() == 0
    with torch.tpu.stream(None):
        pass
    torch.tpu.set_stream(torch.tpu.current_stream(0))
    torch.accelerator.set_stream(torch.tpu.current_stream(0))
    with pytest.raises(ValueError, match="tpu stream"):
        torch.tpu.set_stream(torch.Stream("cpu"))


def test_bad_stream_and_event_arguments_raise():
    with pytest.raises(RuntimeError, match="Invalid device index"):
        torch.tpu.Stream(99)
    with pytest.raises(ValueError, match="tpu device"):
        torch.tpu.Stream("cpu")
    with pytest.raises(NotImplementedError, match="interprocess"):
        torch.tpu.Event(interprocess=True)


def test_events_on_two_devices(python):
    r = python("""
import torch, torchtpu
a = torch.ones(1000, device="tpu:0")
b = torch.ones(1000, device="tpu:1")
e0 = torch.tpu.Event(enable_timing=True); e1 = torch.tpu.Event(enable_timing=True)
e0.record(torch.tpu.current_stream(0))
for _ in range(10): a = a * 1.5
e1.record(torch.tpu.current_stream(0))
s1 = torch.tpu.current_stream(1)
s1.wait_event(e1)            # another device: waits for tpu:0's work
assert e1.query()
c = b + a.to("tpu:1")
e1.synchronize()
print(round(float(c.sum().cpu()), 1), e0.elapsed_time(e1) >= 0)
""", env={"TORCHTPU_HOST_DEVICES": "2"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(round(1000 * (1 + 1.5 ** 10), 1)), "True"]
