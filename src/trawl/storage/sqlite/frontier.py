"""The frontier on SQLite: URL records on disk, the host schedule in memory.

Per-host queues are a partial index over queued URLs ``(host_id, priority)``; taking
work is one indexed seek. Per-host counters live in memory and are written in the
commit hook, so they always agree with the rows committed with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from trawl.models import AddResult, HostInfo, Lease, NewUrl, UrlRecord, UrlStatus
from trawl.storage.reasons import one_line
from trawl.storage.schedule import HostSchedule
from trawl.storage.sqlite.db import Database

_INT64 = 1 << 64
_MAX_PARAMS = 900


@dataclass(slots=True)
class _Host:
    id: int
    name: str
    next_at: float
    queued: int
    admitted: int
    budget: int | None
    priority: int
    demoted_reason: str | None


# States a URL is in while the crawl still owes it a fetch.
_ACTIVE = frozenset({UrlStatus.QUEUED, UrlStatus.IN_FLIGHT, UrlStatus.WAITING})


class SqliteFrontier:
    """The Frontier protocol over a crawl's SQLite database."""

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
        self._hosts: dict[str, _Host] = {}
        self._by_id: dict[int, _Host] = {}
        self._dirty: set[int] = set()
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
            host = _Host(*row)
            self._hosts[host.name] = host
            self._by_id[host.id] = host
        for status, n in c.execute("SELECT status, n FROM status_counts"):
            self._counts[UrlStatus(status)] = n
        # Leases held by a process that died come back now (restart = every lease expired).
        stale = c.execute("SELECT host_id, count(*) FROM urls WHERE status=1 GROUP BY host_id")
        for host_id, n in stale.fetchall():
            self._by_id[host_id].queued += n
            self._dirty.add(host_id)
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED, n)
        c.execute("UPDATE urls SET status=0, due=NULL WHERE status=1")
        for host in self._hosts.values():
            if host.queued > 0:
                self._schedule.schedule(host.name, host.next_at, host.priority)

    def _flush(self) -> None:
        if self._dirty:
            by_id = self._by_id
            self._c.executemany(
                "UPDATE hosts SET next_at=?, queued=?, admitted=?, budget=?, priority=?, "
                "demoted_reason=? WHERE id=?",
                [
                    (h.next_at, h.queued, h.admitted, h.budget, h.priority, h.demoted_reason, h.id)
                    for h in (by_id[i] for i in self._dirty)
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

    def _host(self, name: str) -> _Host:
        host = self._hosts.get(name)
        if host is None:
            cur = self._c.execute("INSERT INTO hosts(name) VALUES(?)", (name,))
            assert cur.lastrowid is not None
            host = _Host(cur.lastrowid, name, 0.0, 0, 0, None, 0, None)
            self._hosts[name] = host
            self._by_id[host.id] = host
        return host

    # -- adding ----------------------------------------------------------------

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        batch: dict[int, NewUrl] = {}
        clashes: list[NewUrl] = []  # same fingerprint as another URL of this batch
        for u in urls:
            first = batch.setdefault(u.fp, u)
            if first is not u and first.url != u.url:
                clashes.append(u)
        if not batch:
            return AddResult(())
        known = self._existing(batch.values())
        added: list[NewUrl] = []
        rows: list[tuple[object, ...]] = []
        seen = 0
        dropped: dict[str, int] = {}
        for fp, u in batch.items():
            stored = known.get(fp)
            if stored is not None:
                if stored == u.url:
                    seen += 1
                    continue
                # A 64-bit collision between two different URLs: probe for a free slot so
                # that neither URL is ever wrongly taken as seen.
                slot = self._probe(self._hosts[u.host].id, fp, u.url)
                if slot is None:
                    seen += 1
                    continue
                fp = slot
            host = self._host(u.host)
            budget = host.budget if host.budget is not None else self._max_per_host
            if budget is not None and host.admitted >= budget:
                dropped["host budget"] = dropped.get("host budget", 0) + 1
                continue
            host.admitted += 1
            host.queued += 1
            self._dirty.add(host.id)
            rows.append((host.id, fp, u.url, u.depth, u.priority, u.via, u.hops))
            added.append(u if fp == u.fp else replace(u, fp=fp))
            if host.queued == 1 and not self._schedule.is_busy(host.name):
                self._schedule.schedule(host.name, host.next_at, host.priority)
        if rows:
            self._c.executemany(
                "INSERT INTO urls(host_id, fp, url, depth, priority, status, via, hops) "
                "VALUES(?, ?, ?, ?, ?, 0, ?, ?)",
                rows,
            )
            self._move(None, UrlStatus.QUEUED, len(rows))
        if clashes:
            more = self.add(clashes, now=now)
            added.extend(more.added)
            seen += more.seen
            for reason, n in more.dropped.items():
                dropped[reason] = dropped.get(reason, 0) + n
        return AddResult(tuple(added), seen=seen, dropped=dropped)

    def _existing(self, urls: Iterable[NewUrl]) -> dict[int, str]:
        """fp -> stored URL for the offered URLs already known (same host, same fp)."""
        keys: list[int] = []
        hosts = self._hosts
        for u in urls:
            host = hosts.get(u.host)
            if host is not None:
                keys.append(host.id)
                keys.append(u.fp)
        found: dict[int, str] = {}
        step = _MAX_PARAMS - _MAX_PARAMS % 2
        for i in range(0, len(keys), step):
            chunk = keys[i : i + step]
            values = ",".join(["(?,?)"] * (len(chunk) // 2))
            found.update(
                self._c.execute(
                    f"SELECT u.fp, u.url FROM (VALUES {values}) v "
                    "CROSS JOIN urls u ON u.host_id = v.column1 AND u.fp = v.column2",
                    chunk,
                )
            )
        return found

    def _probe(self, host_id: int, fp: int, url: str) -> int | None:
        """The slot for ``url`` after a collision at ``fp``; None if ``url`` is stored there."""
        for step in range(1, 64):
            candidate = (fp + step + (1 << 63)) % _INT64 - (1 << 63)
            row = self._c.execute(
                "SELECT url FROM urls WHERE host_id=? AND fp=?", (host_id, candidate)
            ).fetchone()
            if row is None:
                return candidate
            if row[0] == url:
                return None
        return None

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of ``url`` whose fingerprint is ``fp``, following collision probes."""
        for step in range(64):
            candidate = (fp + step + (1 << 63)) % _INT64 - (1 << 63)
            record = self.get(host, candidate)
            if record is None or record.url == url:
                return record
        return None

    # -- taking and finishing ----------------------------------------------------

    def take(self, now: float) -> Lease | None:
        c = self._c
        while True:
            name = self._schedule.pop(now)
            if name is None:
                return None
            host = self._hosts[name]
            row = c.execute(
                "SELECT fp, url, depth, priority, attempts, via, hops, etag, last_modified, "
                "revisit FROM urls WHERE host_id=? AND status=0 ORDER BY priority LIMIT 1",
                (host.id,),
            ).fetchone()
            if row is None:  # counters said otherwise; trust the rows
                host.queued = 0
                self._dirty.add(host.id)
                self._schedule.release(name, host.next_at, has_work=False)
                continue
            fp, url, depth, priority, attempts, via, hops, etag, last_modified, revisit = row
            expires = now + self._lease
            c.execute(
                "UPDATE urls SET status=1, due=? WHERE host_id=? AND fp=?", (expires, host.id, fp)
            )
            host.queued -= 1
            self._dirty.add(host.id)
            self._move(UrlStatus.QUEUED, UrlStatus.IN_FLIGHT)
            return Lease(
                fp=fp,
                url=url,
                host=name,
                depth=depth,
                priority=priority,
                attempts=attempts,
                expires=expires,
                via=via,
                hops=hops,
                etag=etag,
                last_modified=last_modified,
                revisit=revisit,
            )

    def _release(self, name: str, ready_at: float) -> None:
        host = self._hosts[name]
        host.next_at = ready_at
        self._dirty.add(host.id)
        if self._schedule.is_busy(name):
            self._schedule.release(name, ready_at, has_work=host.queued > 0, priority=host.priority)

    def _end_lease(self, lease: Lease, sql: str, params: tuple[object, ...]) -> bool:
        cur = self._c.execute(
            sql + " WHERE host_id=? AND fp=? AND status=1 AND due=?",
            (*params, self._hosts[lease.host].id, lease.fp, lease.expires),
        )
        return cur.rowcount == 1

    def finish(
        self,
        lease: Lease,
        status: UrlStatus,
        *,
        host_ready_at: float,
        reason: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        if self._end_lease(
            lease,
            "UPDATE urls SET status=?, due=NULL, reason=?, attempts=attempts+1, etag=?, "
            "last_modified=?",
            (int(status), one_line(reason), etag, last_modified),
        ):
            self._move(UrlStatus.IN_FLIGHT, status)
        self._release(lease.host, host_ready_at)

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        if self._end_lease(
            lease,
            "UPDATE urls SET status=6, due=?, reason=?, attempts=attempts+1",
            (due, one_line(reason)),
        ):
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.WAITING)
        self._release(lease.host, host_ready_at)

    def requeue(self, lease: Lease, *, host_ready_at: float) -> None:
        if self._end_lease(lease, "UPDATE urls SET status=0, due=NULL", ()):
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED)
            host = self._hosts[lease.host]
            host.queued += 1
            self._dirty.add(host.id)
        self._release(lease.host, host_ready_at)

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        found = self._status_of(host, fp)
        if found is None or found[1] == status:
            return
        host_id, old = found
        if old in _ACTIVE:
            raise ValueError(f"set_status is for finished URLs, not {old.label}")
        self._c.execute(
            "UPDATE urls SET status=?, reason=? WHERE host_id=? AND fp=?",
            (int(status), one_line(reason), host_id, fp),
        )
        self._move(old, status)

    def revisit(self, host: str, fp: int, *, due: float, interval: float) -> None:
        """A finished page comes back at ``due`` to be fetched again (conditionally)."""
        found = self._status_of(host, fp)
        if found is None or found[1] in _ACTIVE:
            return
        host_id, old = found
        self._c.execute(
            "UPDATE urls SET status=6, due=?, revisit=?, attempts=0, reason='revisit' "
            "WHERE host_id=? AND fp=?",
            (due, interval, host_id, fp),
        )
        self._move(old, UrlStatus.WAITING)

    def _status_of(self, host: str, fp: int) -> tuple[int, UrlStatus] | None:
        """The host id and status of a known URL."""
        h = self._hosts.get(host)
        if h is None:
            return None
        row = self._c.execute(
            "SELECT status FROM urls WHERE host_id=? AND fp=?", (h.id, fp)
        ).fetchone()
        return None if row is None else (h.id, UrlStatus(row[0]))

    # -- time-driven returns -------------------------------------------------------

    def _requeue_rows(self, rows: list[tuple[int, int]], old: UrlStatus) -> int:
        if not rows:
            return 0
        self._c.executemany(
            "UPDATE urls SET status=0, due=NULL WHERE host_id=? AND fp=?",
            [(host_id, fp) for fp, host_id in rows],
        )
        self._move(old, UrlStatus.QUEUED, len(rows))
        for _fp, host_id in rows:
            host = self._by_id[host_id]
            host.queued += 1
            self._dirty.add(host_id)
            if host.name not in self._schedule and not self._schedule.is_busy(host.name):
                self._schedule.schedule(host.name, host.next_at, host.priority)
        return len(rows)

    def wake_due(self, now: float) -> int:
        rows = self._c.execute(
            "SELECT fp, host_id FROM urls WHERE status=6 AND due<=?", (now,)
        ).fetchall()
        return self._requeue_rows(rows, UrlStatus.WAITING)

    def reclaim_expired(self, now: float) -> int:
        rows = self._c.execute(
            "SELECT fp, host_id FROM urls WHERE status=1 AND due<=?", (now,)
        ).fetchall()
        n = self._requeue_rows(rows, UrlStatus.IN_FLIGHT)
        for _fp, host_id in rows:
            host = self._by_id[host_id]
            if self._schedule.is_busy(host.name):
                self._schedule.release(
                    host.name, host.next_at, has_work=True, priority=host.priority
                )
        return n

    def next_wake_due(self) -> float | None:
        """The earliest back-off end among waiting URLs."""
        row = self._c.execute("SELECT min(due) FROM urls WHERE status=6").fetchone()
        return None if row[0] is None else float(row[0])

    # -- hosts ---------------------------------------------------------------------

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        h = self._host(host)
        h.priority = max(h.priority, priority)
        if budget is not None:
            h.budget = budget if h.budget is None else min(h.budget, budget)
        h.demoted_reason = one_line(reason)
        self._dirty.add(h.id)
        if h.name in self._schedule:
            self._schedule.schedule(h.name, h.next_at, h.priority)

    def host_info(self, host: str) -> HostInfo | None:
        h = self._hosts.get(host)
        if h is None:
            return None
        return HostInfo(
            host=h.name,
            next_at=h.next_at,
            queued=h.queued,
            admitted=h.admitted,
            budget=h.budget,
            priority=h.priority,
            demoted_reason=h.demoted_reason,
            in_flight=self._schedule.is_busy(h.name),
        )

    # -- reading ---------------------------------------------------------------------

    def next_wake(self, now: float) -> float | None:
        return self._schedule.next_wake(now)

    def get(self, host: str, fp: int) -> UrlRecord | None:
        h = self._hosts.get(host)
        if h is None:
            return None
        row = self._c.execute(
            "SELECT fp, url, depth, priority, status, due, attempts, reason, via, hops, etag, "
            "last_modified, revisit FROM urls WHERE host_id=? AND fp=?",
            (h.id, fp),
        ).fetchone()
        if row is None:
            return None
        fp_, url, depth, priority, status, due, attempts, reason, via, hops, etag, lm, rv = row
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
        )

    def counts(self) -> dict[UrlStatus, int]:
        return dict(self._counts)

    def hosts_ready(self, now: float) -> int:
        return self._schedule.ready_count(now)

    def hosts_waiting(self, now: float) -> int:
        return len(self._schedule) - self._schedule.ready_count(now)

    def hosts_busy(self) -> int:
        return self._schedule.busy
