"""The crawl process's memory bounds (trawl.memory): the limits of its holders, the
bytes of pages held, arenas capped, trims paced."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from trawl import memory
from trawl.config_load import config_json, load_config, saved_settings
from trawl.errors import ConfigError


def test_trimmer_trims_every_period_in_its_thread_until_stopped() -> None:
    waits: list[float] = []
    trims: list[str] = []
    done = threading.Event()

    def wait(seconds: float) -> bool:  # the thread's clock: three periods, then stopped
        waits.append(seconds)
        if len(waits) > 3:
            done.set()
            return True
        return False

    def trim() -> bool:
        trims.append(threading.current_thread().name)
        return True

    t = memory.Trimmer(every=10.0, trim_heap=trim, wait=wait)
    t.start()
    assert done.wait(5)
    t.stop()
    assert waits == [10.0] * 4
    assert trims == ["trawl-trim"] * 3  # off the caller's thread (the event loop's)
    assert t.trims == 3 and t.cpu >= 0.0


def test_trimmer_stops_at_once_and_trims_nothing_more() -> None:
    trims: list[int] = []

    def trim() -> bool:
        trims.append(1)
        return True

    t = memory.Trimmer(every=3600.0, trim_heap=trim)  # the real wait: stop() ends it
    t.start()
    t.stop()
    t.stop()  # twice: harmless
    t.start()  # after stop: no thread again
    assert trims == [] and t.trims == 0
    assert not any(th.name == "trawl-trim" for th in threading.enumerate())


def test_trimmer_stopped_before_start_never_runs() -> None:
    t = memory.Trimmer(trim_heap=lambda: True)
    t.stop()
    t.start()
    assert not any(th.name == "trawl-trim" for th in threading.enumerate())


def test_default_period_is_the_documented_bound() -> None:
    waits: list[float] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        return True

    t = memory.Trimmer(trim_heap=lambda: True, wait=wait)
    t.start()
    t.stop()
    assert waits == [memory.TRIM_EVERY] and memory.MemoryLimits().trim == memory.TRIM_EVERY


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_glibc_calls_answer() -> None:
    # Returns whether glibc took them; on a glibc Linux it takes all three settings
    # (trim may free nothing).
    took = memory.limit_arenas(memory.MALLOC_ARENAS, memory.MMAP_THRESHOLD)
    assert took is (memory._libc() is not None)
    assert memory.trim() in (True, False)


def test_every_malloc_setting_is_asked_even_if_one_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[int, int]] = []

    class Libc:
        def mallopt(self, param: int, value: int) -> int:
            calls.append((param, value))
            return 0 if param == memory._M_ARENA_MAX else 1  # the arena cap refused

    monkeypatch.setattr(memory, "_libc", lambda: Libc())
    assert memory.limit_arenas(2, 1 << 20, 1 << 21) is False
    assert calls == [
        (memory._M_ARENA_MAX, 2),
        (memory._M_MMAP_THRESHOLD, 1 << 20),
        (memory._M_TRIM_THRESHOLD, 1 << 21),
    ]


def test_limits_are_checked() -> None:
    assert memory.MemoryLimits().pages > 0
    with pytest.raises(ConfigError):
        memory.MemoryLimits(pages=0)
    with pytest.raises(ConfigError, match="index_heap"):
        memory.MemoryLimits(index_heap=8 << 20)  # tantivy refuses under 15 MB a thread
    with pytest.raises(ConfigError):
        memory.MemoryLimits(trim=0)


def test_page_bytes_is_full_at_its_limit() -> None:
    held = memory.PageBytes(100)
    held.add(60)
    assert not held.full
    held.add(40)
    assert held.full
    held.add(-1)
    assert not held.full and held.held == 99


def test_a_share_follows_its_pages_size_capped_at_half_the_limit() -> None:
    pages = memory.PageBytes(100)
    one, two = pages.share(), pages.share()
    one.set(30)
    two.set(80)  # a huge page counts half the limit: alone it never fills the budget
    assert (one.n, two.n, pages.held, pages.full) == (30, 50, 80, False)
    one.set(70)
    assert pages.held == 100 and pages.full  # two large pages do
    one.set(0)
    two.set(0)
    assert pages.held == 0


def test_the_memory_table_of_a_config_file(tmp_path: Path) -> None:
    file = tmp_path / "crawl.toml"
    file.write_text(
        '[crawl]\ndata_dir = "d"\n[crawl.memory]\npages = "8M"\nlexicon_words = 1000\ntrim = 0.5\n'
    )
    config = load_config(file=file, env={})
    assert config.memory == memory.MemoryLimits(pages=8 << 20, lexicon_words=1000, trim=0.5)
    # Saved with the crawl, and read back as it was on resume.
    again = load_config(env={}, overrides={**saved_settings(config_json(config)), "data_dir": "d"})
    assert again.memory == config.memory
    file.write_text('[crawl]\ndata_dir = "d"\n[crawl.memory]\nheap = "8M"\n')
    with pytest.raises(ConfigError, match="unknown memory limits: heap"):
        load_config(file=file, env={})


def test_a_parse_worker_keeps_its_blocks_in_its_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    # The crawl process's fixed mmap threshold (256 KiB then, 512 now) cost a parse
    # worker up to a third more CPU (a mapping for every large block of every page's DOM).
    from trawl.parse import worker

    asked: list[int] = []

    def limit(*, mmap_threshold: int) -> bool:
        asked.append(mmap_threshold)
        return True

    monkeypatch.setattr(memory, "limit_arenas", limit)
    previous = signal.getsignal(signal.SIGINT)
    try:
        worker.init_worker()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert asked == [memory.WORKER_MMAP_THRESHOLD]
    assert memory.WORKER_MMAP_THRESHOLD > memory.MMAP_THRESHOLD


_FAULTS = """
import resource
from trawl import memory
memory.limit_arenas()
from trawl.archive.gz import gzip_member
data = b"hello world, " * 3300
for _ in range(10):
    gzip_member(data)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    gzip_member(data)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 200)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_a_gzip_member_reuses_the_heap_under_the_crawls_malloc_settings() -> None:
    # ISA-L's deflate state (some 300 KB a member) under the mmap threshold, and kept at
    # the heap's top by the trim threshold: no page faults a member (at 256 KiB, 18).
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", _FAULTS], capture_output=True, text=True, check=True
    ).stdout
    assert float(out) < 1.0, out
    assert memory.MMAP_THRESHOLD > 256 * 1024 and memory.TRIM_THRESHOLD >= memory.MMAP_THRESHOLD


_BLAS_THREADS = """
import os, sys
if sys.argv[1] == "cli":
    from trawl.cli import main
    main(["url", "normalize", "http://a.example/"])
import numpy
print(len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="Linux's /proc")
def test_the_cli_starts_no_blas_threads_unless_asked() -> None:
    # numpy's OpenBLAS starts a spinning thread for every core but one; trawl needs none.
    import subprocess

    def threads(how: str, **env: str) -> tuple[int, str]:
        base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        out = subprocess.run(
            [sys.executable, "-c", _BLAS_THREADS, how],
            capture_output=True,
            text=True,
            check=True,
            env={**base, **env},
        ).stdout.split()
        return int(out[-2]), out[-1]

    assert threads("cli") == (1, "1")
    assert threads("cli", OPENBLAS_NUM_THREADS="2")[1] == "2"  # the user's setting stands
    if (os.cpu_count() or 1) > 1:
        assert threads("bare")[0] > 1  # what the CLI spares: a thread per further core


def test_blas_threads_are_asked_for_before_numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setitem(sys.modules, "numpy", sys.modules.get("numpy") or object())
    assert memory.one_blas_thread() is False  # too late: numpy's threads have started
    assert "OPENBLAS_NUM_THREADS" not in os.environ
