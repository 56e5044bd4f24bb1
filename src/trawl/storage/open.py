"""Opening a crawl's stores from where it lives: the one place that picks a backend.

A crawl lives in a data directory (SQLite + local files), or in Redis shared by a
fleet of workers (``open_redis_store``/``open_redis_reader``: a ``redis://`` or
``redis+cluster://`` URL and the crawl's id); its logs may live in an S3 bucket
(``open_blobs("s3://BUCKET/PREFIX")``). Every caller keeps asking this module.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from trawl.errors import DiskFullError, as_disk_full
from trawl.storage.base import CrawlReader, CrawlStore, HostLeases
from trawl.storage.blobs import BlobStore
from trawl.storage.local.blobs import LocalBlobStore
from trawl.storage.retry import never
from trawl.storage.sqlite.db import CACHE_BYTES, lock_held
from trawl.storage.sqlite.frontier_state import FRONTIER_HOSTS
from trawl.storage.sqlite.hostleases import FILE_NAME as HOST_LEASES_FILE
from trawl.storage.sqlite.hostleases import SqliteHostLeases
from trawl.storage.sqlite.reader import STATE_FILE, SqliteCrawlReader
from trawl.storage.sqlite.store import SqliteCrawlStore

__all__ = [
    "disk_full_of",
    "has_crawl",
    "has_host_leases",
    "in_use",
    "is_redis_url",
    "open_blobs",
    "open_host_leases",
    "open_reader",
    "open_redis_host_leases",
    "open_redis_reader",
    "open_redis_store",
    "open_store",
    "state_path",
]


def has_crawl(data_dir: Path) -> bool:
    """True if ``data_dir`` holds a crawl's state."""
    return (data_dir / STATE_FILE).exists()


def in_use(data_dir: Path) -> bool:
    """Whether a crawl process is writing the crawl in ``data_dir`` right now."""
    return lock_held(data_dir / STATE_FILE)


def state_path(data_dir: Path) -> Path:
    """The file that holds the crawl's state (named in messages about it)."""
    return data_dir / STATE_FILE


def open_host_leases(directory: Path, *, now: float | None = None) -> HostLeases:
    """The host leases every crawl sharing ``directory`` (the config's
    ``politeness_dir``) consults; ``now`` forgets rows a day old."""
    return SqliteHostLeases(directory, now=now)


def has_host_leases(directory: Path) -> bool:
    """Whether a crawl ever shared host leases in ``directory``."""
    return (directory / HOST_LEASES_FILE).exists()


def open_redis_host_leases(
    url: str, *, beat_ttl: float | None = None, give_up: Callable[[], bool] = never
) -> HostLeases:
    """The host leases every crawl in the Redis at ``url`` shares, whatever its id;
    a holder silent for ``beat_ttl`` seconds (at most 10) holds nothing. ``give_up``:
    as ``open_redis_store``'s."""
    from trawl.storage.redis.hostleases import BEAT_TTL, RedisHostLeases

    return RedisHostLeases(url, beat_ttl=min(BEAT_TTL, beat_ttl or BEAT_TTL), give_up=give_up)


def open_store(
    data_dir: Path,
    *,
    max_per_host: int | None = None,
    lease_seconds: float = 600.0,
    cache_bytes: int = CACHE_BYTES,
    frontier_hosts: int = FRONTIER_HOSTS,
) -> CrawlStore:
    """The crawl's state for writing; one writer at a time (DataDirInUseError)."""
    return SqliteCrawlStore(
        data_dir / STATE_FILE,
        max_per_host=max_per_host,
        lease_seconds=lease_seconds,
        cache_bytes=cache_bytes,
        frontier_hosts=frontier_hosts,
    )


def open_reader(data_dir: Path) -> CrawlReader:
    """Read-only access to the crawl in ``data_dir`` (raises StorageError if none)."""
    return SqliteCrawlReader(data_dir)


def open_blobs(where: Path | str, *, fsync: bool = True, spool: Path | None = None) -> BlobStore:
    """The crawl's WARC, text and event logs: in a data directory, or at an
    ``s3://BUCKET/PREFIX`` URL (endpoint and credentials from the standard AWS
    environment variables; writers spool segments under ``spool``, a temp dir if None)."""
    if isinstance(where, str) and where.startswith("s3://"):
        from trawl.storage.s3 import S3BlobStore  # only a crawl kept in a bucket needs it

        return S3BlobStore.from_url(where, spool=spool)
    return LocalBlobStore(Path(where), fsync=fsync)


def disk_full_of(exc: BaseException, data_dir: Path) -> DiskFullError | None:
    """The full disk that ``exc`` is, if any, named by where it struck: a file's own
    error names the file; the database's names nothing, so the state file is named."""
    chain = (exc, exc.__cause__, exc.__context__)
    db_error = any(isinstance(e, sqlite3.Error) for e in chain)
    return as_disk_full(exc, state_path(data_dir) if db_error else data_dir)


def is_redis_url(where: str) -> bool:
    """Whether ``where`` names a Redis server or cluster rather than a directory."""
    return where.split("://", 1)[0] in ("redis", "rediss", "redis+cluster", "unix")


def open_redis_store(
    url: str,
    crawl: str,
    *,
    worker: str | None = None,
    max_per_host: int | None = None,
    lease_seconds: float = 600.0,
    session_ttl: float = 300.0,
    wait_replicas: int = 0,
    give_up: Callable[[], bool] = never,
) -> CrawlStore:
    """One worker's session of the crawl ``crawl`` in Redis; many may be open at once.

    ``worker`` names the session: opening it again after a crash rolls back what it
    left uncommitted; the same name open twice at once is refused (DataDirInUseError).
    A session not heard from (it beats at every commit) for ``session_ttl`` seconds is
    dead: another worker rolls it back and its URLs and pages go to the others.
    ``wait_replicas``: a commit waits until that many replicas of every primary hold it
    (``WAIT``), so a primary's failover cannot take acknowledged work with it.
    ``give_up``: asked while Redis does not answer; True stops waiting for it (calls
    fail at once rather than after ``conn.OUTAGE`` seconds each).
    """
    from trawl.storage.redis.store import RedisCrawlStore  # the client only when asked

    return RedisCrawlStore(
        url,
        crawl,
        worker=worker,
        max_per_host=max_per_host,
        lease_seconds=lease_seconds,
        session_ttl=session_ttl,
        wait_replicas=wait_replicas,
        give_up=give_up,
    )


def open_redis_reader(url: str, crawl: str) -> CrawlReader:
    """Read-only access to the crawl ``crawl`` in Redis."""
    from trawl.storage.redis.reader import RedisCrawlReader

    return RedisCrawlReader(url, crawl)
