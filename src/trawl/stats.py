"""Read a crawl's numbers from its data directory, also while the crawl runs.

Opens the database read-only (SQLite's WAL lets readers in beside the one writer),
so ``trawl stats`` and the API never take the crawl's lock.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from pathlib import Path
from typing import Any

from trawl.errors import StorageError
from trawl.models import UrlStatus


def connect_readonly(data_dir: Path) -> sqlite3.Connection:
    path = data_dir / "state.db"
    if not path.exists():
        raise StorageError(f"{data_dir} holds no crawl (no state.db)")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        conn.execute("PRAGMA query_only=1")
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: {exc}") from exc
    return conn


def read_meta(data_dir: Path, key: str) -> str | None:
    conn = connect_readonly(data_dir)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    except sqlite3.Error as exc:
        if "no such table" in str(exc):
            return None  # a crawl that never got as far as its schema (a full disk)
        raise StorageError(f"{data_dir}: {exc}") from exc
    finally:
        conn.close()
    return None if row is None else str(row[0])


def read_stats(data_dir: Path) -> dict[str, Any]:
    """URL counts by status, documents, hosts, and every named counter."""
    conn = connect_readonly(data_dir)
    try:
        statuses = {
            UrlStatus(s).label: n for s, n in conn.execute("SELECT status, n FROM status_counts")
        }
        counters = dict(conn.execute("SELECT name, n FROM counters ORDER BY name"))
        hosts = conn.execute("SELECT count(*), sum(queued > 0) FROM hosts").fetchone()
        documents = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
        backlog = conn.execute("SELECT count(*) FROM parse_queue").fetchone()[0]
    except sqlite3.Error as exc:
        raise StorageError(f"{data_dir}: {exc}") from exc
    finally:
        conn.close()
    for status in UrlStatus:
        statuses.setdefault(status.label, 0)
    return {
        "urls known": sum(statuses.values()),
        "urls": statuses,
        "documents": documents,
        "parse backlog": backlog,
        "hosts": hosts[0] or 0,
        "hosts with queued urls": hosts[1] or 0,
        "dropped links": {k[8:]: v for k, v in counters.items() if k.startswith("dropped:")},
        "errors": {k[6:]: v for k, v in counters.items() if k.startswith("error:")},
        "http statuses": {k[7:]: v for k, v in counters.items() if k.startswith("status:")},
        "counters": {
            k: v for k, v in counters.items() if not k.startswith(("dropped:", "error:", "status:"))
        },
    }


def url_states(data_dir: Path, *, status: str | None = None) -> dict[str, tuple[str, str | None]]:
    """URL -> (status label, reason) for every URL the crawl knows (optionally one status)."""
    wanted = None
    if status is not None:
        labels = {s.label: s for s in UrlStatus}
        if status not in labels:
            raise StorageError(f"unknown status {status!r}; one of {', '.join(labels)}")
        wanted = int(labels[status])
    conn = connect_readonly(data_dir)
    try:
        sql = "SELECT url, status, reason FROM urls"
        rows = conn.execute(
            sql + (" WHERE status=?" if wanted is not None else ""),
            (wanted,) if wanted is not None else (),
        ).fetchall()
    except sqlite3.Error as exc:
        raise StorageError(f"{data_dir}: {exc}") from exc
    finally:
        conn.close()
    return {url: (UrlStatus(s).label, reason) for url, s, reason in rows}


class RateWindow:
    """Pages per second over about the last ``span`` seconds of a running crawl.

    Times are passed in (monotonic seconds), so the arithmetic is tested without
    sleeping. ``start`` records the count at the start of the run: the first reading
    (the first progress line, one interval later) then has a base to compare with.
    """

    def __init__(self, span: float = 10.0) -> None:
        self._span = span
        self._samples: deque[tuple[float, int]] = deque()

    def start(self, now: float, count: int) -> None:
        self._samples.clear()
        self._samples.append((now, count))

    def rate(self, now: float, count: int) -> float:
        """The rate from the newest sample at least ``span`` old (or the oldest) to now."""
        samples = self._samples
        if not samples or now > samples[-1][0]:
            samples.append((now, count))
        while len(samples) > 2 and now - samples[1][0] >= self._span:
            samples.popleft()
        t0, n0 = samples[0]
        return max(0.0, (count - n0) / (now - t0)) if now > t0 else 0.0
