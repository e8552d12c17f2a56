"""The device API around the ops: memory figures through torch.accelerator and torch.tpu, device properties,
pinned host memory, and the bounded compile cache with Google TorchTPU's telemetry names."""
import shutil

import pytest
import torch
import torchtpu

from tests.conftest import DRIVER

MiB = 1 << 20


def _settle():
    torch.tpu.synchronize()


# ---- memory through torch.accelerator ----------------------------------------------------------------------
def test_accelerator_memory_allocated_follows_allocations_of_known_size():
    _settle()
    base = torch.accelerator.memory_allocated()
    t = torch.empty(3 * MiB, dtype=torch.uint8, device="tpu")
    u = torch.empty(MiB // 4, dtype=torch.float32, device="tpu")  # 1 MiB
    assert torch.accelerator.memory_allocated() - base == 4 * MiB
    assert torch.accelerator.memory_allocated("tpu:0") == torch.tpu.memory_allocated(0)
    assert torch.accelerator.max_memory_allocated() >= base + 4 * MiB
    del t
    _settle()
    assert torch.accelerator.memory_allocated() - base == MiB
    del u
    _settle()
    assert torch.accelerator.memory_allocated() == base


def test_accelerator_reset_peak_memory_stats():
    _settle()
    t = torch.empty(8 * MiB, dtype=torch.uint8, device="tpu")
    del t
    _settle()
    now = torch.accelerator.memory_allocated()
    assert torch.accelerator.max_memory_allocated() >= now + 8 * MiB
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == now
    assert torch.accelerator.max_memory_reserved() == torch.accelerator.memory_reserved()


def test_accelerator_memory_stats_keys_match_torch_tpu():
    _settle()
    t = torch.empty(2 * MiB, dtype=torch.uint8, device="tpu")
    a = torch.accelerator.memory_stats()
    b = torch.tpu.memory_stats()
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
              "reserved_bytes.all.peak", "active_bytes.all.current", "requested_bytes.all.current",
              "allocation.all.allocated"):
        assert a[k] == b[k], k
    assert a["allocated_bytes.all.current"] >= 2 * MiB
    assert torch.accelerator.memory_reserved() >= torch.accelerator.memory_allocated()
    del t


def test_accelerator_empty_cache_returns_cached_bytes():
    _settle()
    torch.accelerator.empty_cache()
    r0 = torch.accelerator.memory_reserved()
    t = torch.empty(16 * MiB, dtype=torch.uint8, device="tpu")
    assert torch.accelerator.memory_reserved() >= r0 + 16 * MiB
    del t
    _settle()
    assert torch.accelerator.memory_reserved() >= r0 + 16 * MiB  # kept by the caching allocator
    torch.accelerator.empty_cache()
    assert torch.accelerator.memory_reserved() == r0


def test_accelerator_device_index_synchronize_and_streams():
    assert torch.accelerator.current_device_index() == 0
    with torch.accelerator.device_index(0):
        assert torch.accelerator.current_device_index() == 0
    y = torch.randn(128, 128, device="tpu") @ torch.randn(128, 128, device="tpu")
    torch.accelerator.synchronize()
    torch.accelerator.synchronize(0)
    s = torch.accelerator.current_stream()
    assert s.device.type == "tpu" and s.query()
    torch.accelerator.set_stream(s)
    assert torch.isfinite(y.cpu()).all()


def test_mem_get_info_and_get_memory_info(python):
    free, total = torch.tpu.mem_get_info()
    assert 0 < free <= total
    assert torch.accelerator.get_memory_info() == pytest.approx((free, total), rel=0.2)
    r = python("""
import torch, torchtpu
f0, t = torch.tpu.mem_get_info()
x = torch.empty(1 << 20, dtype=torch.uint8, device="tpu")
f1, t1 = torch.tpu.mem_get_info()
print(t, t1, f0 - f1)
""", env={"TORCHTPU_HOST_MEMORY_LIMIT": str(64 * MiB)})
    assert r.returncode == 0, r.stderr
    t, t1, used = map(int, r.stdout.split())
    assert t == t1 == 64 * MiB and used == MiB


def test_get_device_properties():
    p = torch.tpu.get_device_properties()
    assert p.name == torch.tpu.get_device_name()
    assert p.total_memory == torch.tpu.mem_get_info()[1]
    assert p.multi_processor_count == torchtpu._C.host_num_threads() >= 1
    assert torch.tpu.get_device_properties(0) == torch.tpu.get_device_properties("tpu:0")


# ---- pinned memory ---------------------------------------------------------------------------------------------
def test_pin_memory_pins_and_round_trips():
    x = torch.randn(1000)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu"
    assert p.data_ptr() % 4096 == 0  # page-aligned
    assert torch.equal(p, x)
    assert p[500:].is_pinned()  # an address inside the block
    assert not x.is_pinned()
    t = p.to("tpu", non_blocking=True)
    assert torch.equal(t.cpu(), x)
    assert not torch.empty(0).pin_memory().is_pinned()  # no block, as CUDA


def test_dataloader_pin_memory_pins_batches():
    ds = torch.utils.data.TensorDataset(torch.arange(64.0).reshape(32, 2), torch.arange(32))
    dl = torch.utils.data.DataLoader(ds, batch_size=8, pin_memory=True)
    batches = list(dl)
    assert len(batches) == 4
    for xb, yb in batches:
        assert xb.is_pinned() and yb.is_pinned()
    assert torch.equal(torch.cat([b[0] for b in batches]), ds.tensors[0])


def test_pinning_beyond_the_lock_limit_says_why(python):
    r = python("""
import os, resource, torch, torchtpu
torch.ones(1, device="tpu").cpu()
resource.setrlimit(resource.RLIMIT_MEMLOCK, (1 << 20, resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]))
if os.geteuid() == 0:
    os.setgid(65534); os.setuid(65534)   # root may lock any amount (CAP_IPC_LOCK): drop it so the limit applies
small = torch.ones(1000).pin_memory()
assert small.is_pinned()
try:
    torch.ones(1 << 22).pin_memory()   # 16 MiB over a 1 MiB limit
    print("pinned")
except RuntimeError as e:
    print("refused:", e)
""")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    if "pinned" == out.strip():
        pytest.skip("this process may lock any amount of memory (CAP_IPC_LOCK): the limit does not apply")
    assert "refused:" in out and "RLIMIT_MEMLOCK" in out and "pin_memory=False" in out


# ---- the compile cache ---------------------------------------------------------------------------------------
def test_cache_telemetry_counts_requests_hits_and_compilations():
    torchtpu.set_eager_mode("debug")
    torch.tpu._clear_cache()
    torch.tpu._reset_cache_stats()
    x = torch.randn(17, 3, device="tpu")
    for _ in range(3):
        y = x * 2.5 + 1  # the same two programs every round
    s = torch.tpu._get_cache_stats()
    assert s.num_cache_reqs >= 6 and s.num_compilations >= 2
    assert s.num_cache_hits == s.num_cache_reqs - s.num_compilations
    assert s.peak_compilation_host_memory_bytes == 0  # not measured (documented)
    assert s.num_entries == len(s.per_entry_stats) >= 2
    e = max(s.per_entry_stats.values(), key=lambda e: e.read_count)
    assert e.read_count >= 2 and e.compilation_duration >= 0 and e.last_read > 1e9 and e.first_op.startswith("aten::")
    assert torch.equal(y.cpu(), x.cpu() * 2.5 + 1)
    torch.tpu._clear_cache()
    assert torch.tpu._get_cache_stats().per_entry_stats == {}


def test_cache_only_mode_raises_on_a_miss_naming_the_op():
    torchtpu.set_eager_mode("debug")
    x = torch.randn(5, device="tpu")
    (x + 1).cpu()
    torch.tpu._set_cache_only(True)
    try:
        assert torch.equal((x + 1).cpu(), x.cpu() + 1)  # a hit
        with pytest.raises(RuntimeError, match=r"aten::\w+.*cache-only"):
            torch.randn(3, 7, device="tpu").tanh().cpu()  # a shape never compiled
    finally:
        torch.tpu._set_cache_only(False)
    assert not torch.tpu._get_cache_only()


def test_disallowing_the_cache_compiles_every_launch():
    torchtpu.set_eager_mode("debug")
    x = torch.randn(6, device="tpu")
    torch.tpu._set_allow_cache(False)
    try:
        torch.tpu._reset_cache_stats()
        for _ in range(3):
            y = x - 4
        s = torch.tpu._get_cache_stats()
        assert s.num_cache_hits == 0 and s.num_compilations == s.num_cache_reqs >= 3
    finally:
        torch.tpu._set_allow_cache(True)
    assert torch.equal(y.cpu(), x.cpu() - 4)


def test_dump_on_cache_miss_prints_the_program(python):
    r = python("""
import torch, torchtpu
torch.tpu._set_dump_on_cache_miss(True)
print((torch.ones(3, device="tpu") * 7).cpu().tolist())
""")
    assert r.returncode == 0, r.stderr
    assert "compile cache miss" in r.stderr and "stablehlo.multiply" in r.stderr


def test_the_cache_stays_at_its_bound_and_frees_scratch(python):
    """N distinct programs with TORCHTPU_CACHE_ENTRIES=4: the cache stays at 4, repeats of the newest hit,
    evicted programs compile again, and the executables' scratch (counted in reserved memory) goes down when
    entries go."""
    r = python("""
import torch, torchtpu
torch.tpu.set_eager_mode("debug")
x = {n: torch.randn(n, 64, device="tpu") for n in range(1, 13)}
def prog(n):  # a distinct program per n, with temporaries
    return ((x[n] * 3).tanh() + x[n]).sum(1)
before = torch.tpu._get_cache_stats().num_entries
torch.tpu._reset_cache_stats()
sizes = []
for n in range(1, 13):
    prog(n).cpu()
    sizes.append(torch.tpu._get_cache_stats().num_entries)
s = torch.tpu._get_cache_stats()
print("sizes", *sizes)
print("counts", s.capacity, s.num_compilations, s.num_evictions, before)
torch.tpu._reset_cache_stats()
prog(12).cpu()                     # still cached
h = torch.tpu._get_cache_stats()
prog(1).cpu()                      # evicted long ago
m = torch.tpu._get_cache_stats()
print("again", h.num_cache_hits, h.num_compilations, m.num_compilations - h.num_compilations)
torch.tpu.synchronize()
r_full, scratch_full = torch.accelerator.memory_reserved(), torch.tpu._get_cache_stats().scratch_bytes
torch.tpu._clear_cache()
r_empty, scratch_empty = torch.accelerator.memory_reserved(), torch.tpu._get_cache_stats().scratch_bytes
print("memory", scratch_full > 0, scratch_empty, r_full - r_empty == scratch_full)
""", env={"TORCHTPU_CACHE_ENTRIES": "4"})
    assert r.returncode == 0, r.stderr
    lines = {l.split()[0]: l.split()[1:] for l in r.stdout.splitlines()}
    sizes = list(map(int, lines["sizes"]))
    assert max(sizes) == 4 and sizes[-1] == 4
    cap, comp, evict, before = map(int, lines["counts"])
    assert cap == 4 and comp >= 12 and evict == before + comp - 4
    h_hits, h_comp, recompiled = map(int, lines["again"])
    assert h_comp == 0 and h_hits >= 1 and recompiled >= 1
    # host executables keep scratch arenas, counted as reserved memory until the cache is cleared
    assert lines["memory"] == (["True", "0", "True"] if DRIVER == "host" else ["False", "0", "True"])


def test_a_bad_cache_size_is_an_error_naming_the_variable(python):
    r = python("import torch, torchtpu; torch.ones(1, device='tpu')", env={"TORCHTPU_CACHE_ENTRIES": "many"})
    assert r.returncode != 0 and "TORCHTPU_CACHE_ENTRIES" in r.stderr
    with pytest.raises(ValueError):
        torch.tpu._set_cache_capacity(-1)


def test_the_persistent_cache_is_configured_from_the_environment(python, tmp_path):
    """The directory (ours, or Google's variable as an alias), reported in the cache stats; the host driver does
    not serialize its executables, so nothing is read or written there (the C tests drive the cache itself with a
    driver that does: ctests/test_diskcache.c), the pjrt driver writes its one program; a bad bound is an error
    naming the variable."""
    code = """
import torch, torchtpu
(torch.ones(3, device="tpu") * 2).cpu()
s = torch.tpu._get_cache_stats()
print(s.disk_dir, s.disk_active, s.num_disk_hits + s.num_disk_misses + s.num_disk_writes + s.num_disk_errors)
"""
    for var in ("TORCHTPU_CACHE_DIR", "TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT"):
        r = python(code, env={var: str(tmp_path / "c")})
        assert r.returncode == 0, r.stderr
        want = ["False", "0"] if DRIVER == "host" else ["True", "2"]  # pjrt: a miss, then the write
        assert r.stdout.split() == [str(tmp_path / "c")] + want
        shutil.rmtree(tmp_path / "c", ignore_errors=True)
    r = python(code, env={"TORCHTPU_CACHE_DIR": "off"})
    assert r.returncode == 0 and r.stdout.split() == ["False", "0"], r.stdout
    r = python(code, env={"TORCHTPU_CACHE_DISK_BYTES": "lots"})
    assert r.returncode != 0 and "TORCHTPU_CACHE_DISK_BYTES" in r.stderr
