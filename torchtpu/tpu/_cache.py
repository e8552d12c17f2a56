"""Compile-cache telemetry and switches, under Google TorchTPU's private names.

The cache (csrc/runtime/cache.c) maps a program's structure to its compiled executable and is shared by every
eager mode and torch.compile. It keeps at most TORCHTPU_CACHE_ENTRIES entries (default 4096; 0 = no caching),
dropping the least recently used; a dropped executable is freed, with its scratch memory, once no queued launch
needs it. Behind it, for drivers that serialize executables, is the persistent cache (csrc/runtime/diskcache.c):
TORCHTPU_CACHE_DIR (Google's TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT as an alias; "off" turns it off; default
~/.cache/torchtpu), bounded by TORCHTPU_CACHE_DISK_BYTES (default 2 GiB). The host driver does not serialize: its
compile is a plan made in well under a millisecond, so `disk_active` is False there.
"""
import dataclasses

from .. import _C


@dataclasses.dataclass(frozen=True)
class CacheEntryStats:
    compilation_duration: float  # seconds the driver took to compile the program
    last_read: float             # wall-clock time (time.time() seconds) of its last lookup, or of its insert
    read_count: int              # lookups that found it (hits)
    scratch_bytes: int           # host scratch its executable holds now
    first_op: str                # the op whose launch compiled it


@dataclasses.dataclass(frozen=True)
class CacheStats:
    num_cache_reqs: int
    num_cache_hits: int
    num_compilations: int
    # Not measured: the host driver's compiler allocates through malloc, and this runtime does not track the
    # peak of that. Reported as 0 rather than a guess.
    peak_compilation_host_memory_bytes: int
    per_entry_stats: dict  # "0x<key>" -> CacheEntryStats, most recently used first
    num_evictions: int
    num_entries: int
    capacity: int
    scratch_bytes: int
    # The persistent cache: lookups that found an entry on disk / did not, entries written, entries found damaged
    # or truncated (removed and rebuilt), removed to stay under the bound, disk errors (counted, never fatal).
    num_disk_hits: int = 0
    num_disk_misses: int = 0
    num_disk_writes: int = 0
    num_disk_corrupt: int = 0
    num_disk_evictions: int = 0
    num_disk_errors: int = 0
    disk_dir: str = ""
    disk_active: bool = False


def _get_cache_stats():
    """A snapshot of the compile cache's counters (since start or `_reset_cache_stats`) and of its entries."""
    s = _C.cache_stats()
    entries = {
        f"0x{e['key']:016x}": CacheEntryStats(e["compilation_duration"], e["last_read"], e["read_count"],
                                              e["scratch_bytes"], e["first_op"])
        for e in s["per_entry"]
    }
    d = s["disk"]
    return CacheStats(s["requests"], s["hits"], s["compilations"], 0, entries, s["evictions"], s["entries"],
                      s["capacity"], s["scratch_bytes"], d["hits"], d["misses"], d["writes"], d["corrupt"],
                      d["evictions"], d["errors"], d["dir"], d["active"])


def _reset_cache_stats():
    _C.cache_reset_stats()


def _clear_cache():
    """Drops every cached executable (those queued launches still hold are freed when they are done)."""
    _C.cache_clear()


def _set_cache_only(enabled=True):
    """With True, a launch whose program is not cached raises (naming the op) instead of compiling."""
    _C.cache_set_only(bool(enabled))


def _get_cache_only():
    return _C.cache_get_only()


def _set_allow_cache(allowed=True):
    """With False, every launch compiles a fresh executable that is used once and never cached."""
    _C.cache_set_allow(bool(allowed))


def _get_allow_cache():
    return _C.cache_get_allow()


def _set_dump_on_cache_miss(enabled=True):
    """With True, each cache miss prints the program (StableHLO text) to stderr before compiling it."""
    _C.cache_set_dump_on_miss(bool(enabled))


def _set_cache_capacity(n):
    """Keeps at most n entries from now on (evicting least recently used ones at once); 0 turns caching off."""
    n = int(n)
    if n < 0:
        raise ValueError(f"cache capacity must be >= 0, got {n}")
    _C.cache_set_capacity(n)
