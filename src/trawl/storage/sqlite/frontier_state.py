"""The SQLite frontier's in-memory state over its tables, and its reads.

``FrontierRows`` opens the tables (hosts, per-host counters, status counts, each
host's head: the key of its best queued URL, read from the queue index), brings back
the URLs a dead process held in flight, keeps the host schedule, writes the counters
in the commit hook, and answers the Frontier protocol's reads. The writes are in
``trawl.storage.sqlite.frontier``.
"""

from __future__ import annotations

from dataclasses import dataclass

from trawl.models import HostInfo, UrlRecord, UrlStatus
from trawl.storage.schedule import HostSchedule, ScheduleReads
from trawl.storage.sqlite.db import Database

_INT64 = 1 << 64


def wrap_fp(fp: int) -> int:
    """``fp`` as a signed 64-bit integer, as SQLite stores it."""
    return (fp + (1 << 63)) % _INT64 - (1 << 63)


@dataclass(slots=True)
class Host:
    id: int
    name: str
    next_at: float
    queued: int
    admitted: int
    budget: int | None
    priority: int
    demoted_reason: str | None
    head: int | None = None  # the key of its best queued URL (not stored: read on open)

    @property
    def order(self) -> int:
        """Its place among hosts ready at the same time, lower first."""
        return (self.head or 0) + self.priority


class FrontierRows(ScheduleReads):
    """A frontier's hosts and counters over a crawl's SQLite database; the reads."""

    def __init__(
        self,
        db: Database,
        *,
        max_per_host: int | None = None,
        lease_seconds: float = 600.0,
    ) -> None:
        self._db = db
        self._c = db.conn
        self._max_per_host = max_per_host
        self._lease = lease_seconds
        self._schedule = HostSchedule()
        self._hosts: dict[str, Host] = {}  # by name only (a map by id as well: 30 bytes a host)
        self._dirty: dict[int, Host] = {}  # hosts whose row the next commit writes, by id
        self._counts: dict[UrlStatus, int] = dict.fromkeys(UrlStatus, 0)
        self._counts_dirty = False
        self._load()
        db.before_commit(self._flush)

    # -- open and recover ------------------------------------------------------

    def _load(self) -> None:
        c = self._c
        for row in c.execute(
            "SELECT id, name, next_at, queued, admitted, budget, priority, demoted_reason "
            "FROM hosts"
        ):
            host = Host(*row)
            self._hosts[host.name] = host
        by_id = {host.id: host for host in self._hosts.values()}  # while opening only
        for status, n in c.execute("SELECT status, n FROM status_counts"):
            self._counts[UrlStatus(status)] = n
        # Leases held by a process that died come back now (restart = every lease expired).
        stale = c.execute("SELECT host_id, count(*) FROM urls WHERE status=1 GROUP BY host_id")
        for host_id, n in stale.fetchall():
            host = by_id[host_id]
            host.queued += n
            self._dirty[host_id] = host
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED, n)
        c.execute("UPDATE urls SET status=0, due=NULL WHERE status=1")
        heads = c.execute("SELECT host_id, min(priority) FROM urls WHERE status=0 GROUP BY host_id")
        for host_id, head in heads:
            by_id[host_id].head = head
        for host in self._hosts.values():
            if host.queued > 0:
                self._schedule.schedule(host.name, host.next_at, host.order)

    def _flush(self) -> None:
        if self._dirty:
            self._c.executemany(
                "UPDATE hosts SET next_at=?, queued=?, admitted=?, budget=?, priority=?, "
                "demoted_reason=? WHERE id=?",
                [
                    (h.next_at, h.queued, h.admitted, h.budget, h.priority, h.demoted_reason, h.id)
                    for h in self._dirty.values()
                ],
            )
            self._dirty.clear()
        if self._counts_dirty:
            self._c.executemany(
                "INSERT INTO status_counts(status, n) VALUES(?, ?) "
                "ON CONFLICT(status) DO UPDATE SET n=excluded.n",
                [(int(s), n) for s, n in self._counts.items()],
            )
            self._counts_dirty = False

    def _move(self, old: UrlStatus | None, new: UrlStatus, n: int = 1) -> None:
        if old is not None:
            self._counts[old] -= n
        self._counts[new] += n
        self._counts_dirty = True

    def _host(self, name: str) -> Host:
        host = self._hosts.get(name)
        if host is None:
            cur = self._c.execute("INSERT INTO hosts(name) VALUES(?)", (name,))
            assert cur.lastrowid is not None
            host = Host(cur.lastrowid, name, 0.0, 0, 0, None, 0, None)
            self._hosts[name] = host
        return host

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of ``url`` whose fingerprint is ``fp``, following collision probes."""
        for step in range(64):
            candidate = wrap_fp(fp + step)
            record = self.get(host, candidate)
            if record is None or record.url == url:
                return record
        return None

    def _status_of(self, host: str, fp: int) -> tuple[int, UrlStatus] | None:
        """The host id and status of a known URL."""
        h = self._hosts.get(host)
        if h is None:
            return None
        row = self._c.execute(
            "SELECT status FROM urls WHERE host_id=? AND fp=?", (h.id, fp)
        ).fetchone()
        return None if row is None else (h.id, UrlStatus(row[0]))

    def next_wake_due(self) -> float | None:
        """The earliest back-off end among waiting URLs."""
        row = self._c.execute("SELECT min(due) FROM urls WHERE status=6").fetchone()
        return None if row[0] is None else float(row[0])

    def host_info(self, host: str) -> HostInfo | None:
        h = self._hosts.get(host)
        if h is None:
            return None
        return self._host_info(h)

    # -- reading ---------------------------------------------------------------------

    def get(self, host: str, fp: int) -> UrlRecord | None:
        h = self._hosts.get(host)
        if h is None:
            return None
        row = self._c.execute(
            "SELECT fp, url, depth, priority, status, due, attempts, reason, via, hops, etag, "
            "last_modified, revisit, cash, history FROM urls WHERE host_id=? AND fp=?",
            (h.id, fp),
        ).fetchone()
        if row is None:
            return None
        fp_, url, depth, priority, status, due, attempts, reason, via, hops, etag, lm, rv = row[:13]
        return UrlRecord(
            fp=fp_,
            url=url,
            host=host,
            depth=depth,
            priority=priority,
            status=UrlStatus(status),
            due=due,
            attempts=attempts,
            reason=reason,
            via=via,
            hops=hops,
            etag=etag,
            last_modified=lm,
            revisit=rv,
            cash=row[13],
            history=row[14],
        )

    def counts(self) -> dict[UrlStatus, int]:
        return dict(self._counts)
