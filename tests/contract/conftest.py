"""Backends under contract: every storage Protocol runs the same tests on each backend.

A backend opens one ``CrawlStore`` at a time over its data (a directory, a
``MemoryDisk``, a crawl id in Redis); ``restart`` ends it as a clean stop or as a
crash (kill -9: nothing since the last commit survives) and opens the next one on
what survived.

Redis differs in one rule, stated by ``Backend.shared_frontier``: many workers share
one crawl, so the frontier's admissions are written when made (every worker must see
them to dedup) and survive a crash; what a crash undoes there is the lease ends and
later-stage outcomes not committed. The sqlite and memory backends keep every write
private until the commit.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from trawl.models import Position
from trawl.storage.base import CrawlStore, Frontier
from trawl.storage.blobs import BlobStore
from trawl.storage.local import LocalBlobStore
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore, MemoryDisk
from trawl.storage.redis.store import RedisCrawlStore
from trawl.storage.s3 import S3BlobStore
from trawl.storage.sqlite.frontier_state import FRONTIER_HOSTS
from trawl.storage.sqlite.store import SqliteCrawlStore


class Backend:
    """One kind of storage: opens stores, commits them, restarts them."""

    name = "?"
    # Frontier admissions are visible to other stores and survive a crash (Redis).
    shared_frontier = False

    def __init__(self) -> None:
        self._store: CrawlStore | None = None
        self._options: tuple[int | None, float] = (None, 600.0)  # those of the last open

    def _open(self, *, max_per_host: int | None, lease_seconds: float) -> CrawlStore:
        raise NotImplementedError

    def open_another(self) -> CrawlStore:
        """A second store over the same data while the first is open (must be refused)."""
        return self._open(max_per_host=None, lease_seconds=600.0)

    def open_peer(self) -> CrawlStore | None:
        """Another worker's store on the same crawl, open beside the first (Redis), or
        None for a backend that has one writer at a time."""
        return None

    def store(self, *, max_per_host: int | None = None, lease_seconds: float = 600.0) -> CrawlStore:
        """The open store (opened with these options if none is open)."""
        if self._store is None:
            self._store = self._open(max_per_host=max_per_host, lease_seconds=lease_seconds)
            self._options = (max_per_host, lease_seconds)
        return self._store

    def frontier(
        self, *, max_per_host: int | None = None, lease_seconds: float = 600.0
    ) -> Frontier:
        return self.store(max_per_host=max_per_host, lease_seconds=lease_seconds).frontier

    def commit(self, logs: Mapping[str, Position] | None = None) -> None:
        self.store().commit(logs)

    def restart(self, *, crash: bool) -> CrawlStore:
        """Stop (committing unless ``crash``) and open the store again on what survived."""
        assert self._store is not None
        self._store.close(commit=not crash)
        self._store = None
        max_per_host, lease_seconds = self._options
        return self.store(max_per_host=max_per_host, lease_seconds=lease_seconds)

    def close(self) -> None:
        if self._store is not None:
            self._store.close(commit=False)
            self._store = None


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, path: Path, *, frontier_hosts: int = FRONTIER_HOSTS) -> None:
        super().__init__()
        self.path = path / "state.db"
        self._hosts = frontier_hosts
        if frontier_hosts != FRONTIER_HOSTS:
            self.name = "sqlite-parked"

    def _open(self, *, max_per_host: int | None, lease_seconds: float) -> CrawlStore:
        return SqliteCrawlStore(
            self.path,
            max_per_host=max_per_host,
            lease_seconds=lease_seconds,
            frontier_hosts=self._hosts,
        )


class MemoryBackend(Backend):
    name = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.disk = MemoryDisk()

    def _open(self, *, max_per_host: int | None, lease_seconds: float) -> CrawlStore:
        return MemoryCrawlStore(self.disk, max_per_host=max_per_host, lease_seconds=lease_seconds)

    def restart(self, *, crash: bool) -> CrawlStore:
        # Through the store's own ``reopen``: it keeps the options it was opened with.
        assert isinstance(self._store, MemoryCrawlStore)
        self._store = self._store.reopen(crashed=crash)
        return self._store


class RedisBackend(Backend):
    """A fresh crawl id per test on a shared server; one worker name across restarts."""

    shared_frontier = True

    def __init__(self, url: str, name: str) -> None:
        super().__init__()
        self.name = name
        self.url = url
        self.crawl = uuid.uuid4().hex[:12]

    def _open(self, *, max_per_host: int | None, lease_seconds: float) -> CrawlStore:
        # The same worker name each time: a restart after a crash rolls its session back,
        # and a second store under that name while the first is open is refused.
        return RedisCrawlStore(
            self.url,
            self.crawl,
            worker="w1",
            max_per_host=max_per_host,
            lease_seconds=lease_seconds,
            buckets=4,
        )

    def open_peer(self) -> CrawlStore:
        return RedisCrawlStore(self.url, self.crawl, worker="w2", buckets=4)


# sqlite-parked: the schedule holds 2 hosts; the others wait on disk (parked), so
# every contract holds across hosts coming into memory and leaving it.
@pytest.fixture(params=["memory", "sqlite", "sqlite-parked", "redis", "redis-cluster"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b: Backend
    if request.param == "memory":
        b = MemoryBackend()
    elif request.param == "sqlite":
        b = SqliteBackend(tmp_path)
    elif request.param == "sqlite-parked":
        b = SqliteBackend(tmp_path, frontier_hosts=2)
    elif request.param == "redis":
        b = RedisBackend(request.getfixturevalue("redis_server").url, "redis")
    else:
        b = RedisBackend(request.getfixturevalue("redis_cluster").url, "redis-cluster")
    yield b
    with contextlib.suppress(Exception):
        b.close()


@pytest.fixture(params=["memory", "local", "s3"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    """Each blob backend (tests/contract/test_blobs.py); s3: a bucket of its own on the
    session's SeaweedFS, credentials from the AWS variables."""
    if request.param == "memory":
        return MemoryBlobStore()
    if request.param == "local":
        return LocalBlobStore(tmp_path, fsync=False)
    url: str = request.getfixturevalue("s3_url")
    return S3BlobStore.from_url(url, spool=tmp_path / "spool")
