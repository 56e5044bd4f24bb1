"""The SQLite host leases' one-statement acquire and release apply the rules of
``storage/leases.py`` exactly: the same answers as the memory leases, between
connections and between processes (real SQLite files)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from trawl.storage.memory.hostleases import MemoryHostLeases
from trawl.storage.sqlite.hostleases import SqliteHostLeases

T = 1_700_000_000.0
HOLDERS = ("machine-a:1:crawl-a", "machine-b:2:crawl-b", "machine-c:3:crawl-c")


def _statements(leases: SqliteHostLeases) -> list[str]:
    seen: list[str] = []
    leases._c.set_trace_callback(seen.append)
    return seen


def test_a_free_host_is_taken_and_given_back_in_one_statement_each(tmp_path: Path) -> None:
    leases = SqliteHostLeases(tmp_path)
    try:
        assert leases.acquire("a.example", holder=HOLDERS[0], now=T, ttl=60.0) is None
        leases.release("a.example", holder=HOLDERS[0], now=T + 1, ready_at=T + 1)  # row made
        seen = _statements(leases)
        assert leases.acquire("a.example", holder=HOLDERS[0], now=T + 1, ttl=60.0) is None
        leases.release("a.example", holder=HOLDERS[0], now=T + 2, ready_at=T + 2)
        assert [s.split()[0] for s in seen] == ["UPDATE", "UPDATE"]
        seen.clear()  # a gap asked: the row's asks change, read and written in a transaction
        assert leases.acquire("a.example", holder=HOLDERS[0], now=T + 2, ttl=60.0) is None
        leases.release("a.example", holder=HOLDERS[0], now=T + 3, ready_at=T + 4)
        assert "BEGIN IMMEDIATE" in seen
        view = leases.get("a.example", T + 3)
        assert view is not None and view.holder is None and view.next_at == T + 4
    finally:
        leases.close()


@pytest.mark.parametrize("seed", range(6))
def test_same_answers_as_the_memory_leases(tmp_path: Path, seed: int) -> None:
    """Random acquires and releases by three crawls on two connections: every answer and
    every row is the memory leases'."""
    rng = random.Random(seed)
    memory = MemoryHostLeases()
    handles = [SqliteHostLeases(tmp_path), SqliteHostLeases(tmp_path)]
    hosts = [f"h{n}.example" for n in range(3)]
    now = T
    try:
        for host in hosts:  # every row exists in both (memory makes one on any call)
            for leases in (memory, handles[0]):
                leases.release(host, holder=HOLDERS[0], now=now, ready_at=now)
        for _ in range(400):
            now += rng.choice((0.0, 0.01, 0.3, 1.0, 5.0, 70.0))
            host, holder = rng.choice(hosts), rng.choice(HOLDERS)
            sqlite = rng.choice(handles)
            if rng.random() < 0.5:
                ttl = rng.choice((0.5, 10.0, 600.0))
                expected = memory.acquire(host, holder=holder, now=now, ttl=ttl, gap=0.2)
                got = sqlite.acquire(host, holder=holder, now=now, ttl=ttl, gap=0.2)
                assert got == expected
            else:
                ready_at = now + rng.choice((-1.0, 0.0, 0.0, 0.5, 2.0))
                memory.release(host, holder=holder, now=now, ready_at=ready_at)
                sqlite.release(host, holder=holder, now=now, ready_at=ready_at)
            for h in hosts:
                assert handles[1 - handles.index(sqlite)].get(h, now) == memory.get(h, now)
    finally:
        for leases in handles:
            leases.close()


_OTHER_PROCESS = """
import sys
from pathlib import Path
from trawl.storage.sqlite.hostleases import SqliteHostLeases
leases = SqliteHostLeases(Path(sys.argv[1]))
now = float(sys.argv[3])
if sys.argv[2] == "take":
    print(leases.acquire("a.example", holder="machine-b:2:crawl-b", now=now, ttl=60.0))
else:
    leases.release("a.example", holder="machine-b:2:crawl-b", now=now, ready_at=now)
"""


def test_another_process_sees_a_one_statement_lease_at_once(tmp_path: Path) -> None:
    def other(action: str, now: float) -> str:
        run = [sys.executable, "-c", _OTHER_PROCESS, str(tmp_path), action, repr(now)]
        return subprocess.run(run, check=True, capture_output=True, text=True).stdout.strip()

    mine = SqliteHostLeases(tmp_path)
    try:
        assert mine.acquire("a.example", holder=HOLDERS[0], now=T, ttl=60.0) is None
        mine.release("a.example", holder=HOLDERS[0], now=T + 1, ready_at=T + 1)
        assert other("take", T + 1) == "None"
        later = mine.acquire("a.example", holder=HOLDERS[0], now=T + 2, ttl=60.0)
        assert later is not None and T + 2 < later <= T + 61
        other("give back", T + 3)
        assert mine.acquire("a.example", holder=HOLDERS[0], now=T + 3, ttl=60.0) is None
    finally:
        mine.close()
