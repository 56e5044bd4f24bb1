"""The frontier on SQLite: URL records on disk, the host schedule in memory.

Per-host queues are a partial index over queued URLs ``(host_id, priority)``; taking
work is one indexed seek, which also reads the next URL's key (the host's new head).
Per-host counters and heads live in memory; the counters are written in the commit
hook, so they always agree with the rows committed with them, and the heads are read
back from the index on open. Among ready hosts the schedule prefers the lowest head
key plus host priority (``storage/schedule.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from trawl.models import AddResult, Lease, NewUrl, UrlStatus
from trawl.ranking import DEFERRED, deferred_key, raised_key
from trawl.storage.reasons import one_line
from trawl.storage.sqlite.frontier_state import FrontierRows, Host, wrap_fp

_MAX_PARAMS = 900
# States a URL is in while the crawl still owes it a fetch.
_ACTIVE = frozenset({UrlStatus.QUEUED, UrlStatus.IN_FLIGHT, UrlStatus.WAITING})
# Statuses whose lease end passes the URL's cash on to what it leads to.
_PASSES_CASH = frozenset({UrlStatus.FETCHED, UrlStatus.REDIRECTED})
# A key into the deferred band (ranking.deferred_key), in SQL: (border, DEFERRED).
_BORDER = DEFERRED // 2
_TO_BAND = ", priority=priority+(CASE WHEN priority<? THEN ? ELSE 0 END)"


class SqliteFrontier(FrontierRows):
    """The Frontier protocol over a crawl's SQLite database."""

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
        known, unknown = self._existing(batch.values())
        added: list[NewUrl] = []
        rows: list[tuple[object, ...]] = []
        raises: list[tuple[object, ...]] = []
        before: dict[str, int | None] = {}  # hosts whose queue changed -> order before
        seen = 0
        dropped: dict[str, int] = {}
        for fp, u in batch.items():
            stored = known.get(fp)
            if stored is not None:
                url, status, key, cash, history = stored
                if url == u.url:
                    seen += 1
                    if u.gain > 0 and status in _ACTIVE:
                        host = self._hosts[u.host]
                        key = raised_key(key, cash + history, u.gain)
                        raises.append((cash + u.gain, key, host.id, fp))
                        if status == UrlStatus.QUEUED:
                            self._improve(host, key, before)
                    continue
                # A 64-bit collision between two different URLs: probe for a free slot so
                # that neither URL is ever wrongly taken as seen.
                slot = self._probe(self._hosts[u.host].id, fp, u.url)
                if slot is None:
                    seen += 1
                    continue
                fp = slot
            host = self._host(u.host, new=u.host in unknown)
            budget = host.budget if host.budget is not None else self._max_per_host
            if budget is not None and host.admitted >= budget:
                dropped["host budget"] = dropped.get("host budget", 0) + 1
                continue
            host.admitted += 1
            host.queued += 1
            self._dirty[host.id] = host
            rows.append((host.id, fp, u.url, u.depth, u.priority, u.via, u.hops, u.cash))
            added.append(u if fp == u.fp else replace(u, fp=fp))
            self._improve(host, u.priority, before)
        if rows:
            self._c.executemany(
                "INSERT INTO urls(host_id, fp, url, depth, priority, status, via, hops, cash) "
                "VALUES(?, ?, ?, ?, ?, 0, ?, ?, ?)",
                rows,
            )
            self._move(None, UrlStatus.QUEUED, len(rows))
        if raises:
            self._c.executemany(
                "UPDATE urls SET cash=?, priority=? WHERE host_id=? AND fp=?", raises
            )
        for name, order in before.items():
            host = self._hosts[name]
            if host.order != order and not self._schedule.is_busy(name):
                self._place(host)
        if clashes:
            more = self.add(clashes, now=now)
            added.extend(more.added)
            seen += more.seen
            for reason, n in more.dropped.items():
                dropped[reason] = dropped.get(reason, 0) + n
        return AddResult(tuple(added), seen=seen, dropped=dropped)

    @staticmethod
    def _improve(host: Host, key: int, before: dict[str, int | None]) -> None:
        """A URL with ``key`` is queued on ``host`` (new, or raised): its head may move."""
        if host.name not in before:
            before[host.name] = host.order if host.head is not None else None
        if host.head is None or key < host.head:
            host.head = key

    def _existing(
        self, urls: Iterable[NewUrl]
    ) -> tuple[dict[int, tuple[str, int, int, float, float]], set[str]]:
        """fp -> (stored URL, status, key, cash, history) for the offered URLs already
        known (same host, same fp); and the hosts not known at all."""
        keys: list[int] = []
        hosts = self._hosts
        unknown: set[str] = set()
        for u in urls:
            host = hosts.get(u.host)
            if host is None and u.host not in unknown:
                host = self._known(u.host)  # a host out of memory: held from here on
                if host is None:
                    unknown.add(u.host)
            if host is not None:
                keys.append(host.id)
                keys.append(u.fp)
        found: dict[int, tuple[str, int, int, float, float]] = {}
        step = _MAX_PARAMS - _MAX_PARAMS % 2
        for i in range(0, len(keys), step):
            chunk = keys[i : i + step]
            values = ",".join(["(?,?)"] * (len(chunk) // 2))
            for fp, url, status, key, cash, history in self._c.execute(
                f"SELECT u.fp, u.url, u.status, u.priority, u.cash, u.history FROM "
                f"(VALUES {values}) v CROSS JOIN urls u ON u.host_id = v.column1 "
                "AND u.fp = v.column2",
                chunk,
            ):
                found[fp] = (url, status, key, cash, history)
        return found, unknown

    def _probe(self, host_id: int, fp: int, url: str) -> int | None:
        """The slot for ``url`` after a collision at ``fp``; None if ``url`` is stored there."""
        for step in range(1, 64):
            candidate = wrap_fp(fp + step)
            row = self._c.execute(
                "SELECT url FROM urls WHERE host_id=? AND fp=?", (host_id, candidate)
            ).fetchone()
            if row is None:
                return candidate
            if row[0] == url:
                return None
        return None

    # -- taking and finishing ----------------------------------------------------

    def take(self, now: float) -> Lease | None:
        c = self._c
        self._refill()
        while True:
            name = self._schedule.pop(now)
            if name is None:
                return None
            host = self._hosts[name]
            rows = c.execute(
                "SELECT fp, url, depth, priority, attempts, via, hops, etag, last_modified, "
                "revisit, cash FROM urls WHERE host_id=? AND status=0 ORDER BY priority LIMIT 2",
                (host.id,),
            ).fetchall()
            if not rows:  # counters said otherwise; trust the rows
                host.queued = 0
                host.head = None
                self._dirty[host.id] = host
                self._schedule.release(name, host.next_at, has_work=False)
                continue
            fp, url, depth, priority, attempts, via, hops, etag, last_modified, revisit, cash = (
                rows[0]
            )
            host.head = rows[1][3] if len(rows) > 1 else None
            expires = now + self._lease
            c.execute(
                "UPDATE urls SET status=1, due=? WHERE host_id=? AND fp=?", (expires, host.id, fp)
            )
            host.queued -= 1
            host.turns += 1
            self._dirty[host.id] = host
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
                cash=cash,
            )

    def _release(self, name: str, ready_at: float) -> None:
        host = self._known(name)
        if host is None:
            return
        host.next_at = ready_at
        self._dirty[host.id] = host
        if self._schedule.is_busy(name):
            self._set_free(host, ready_at)

    def _end_lease(self, lease: Lease, sql: str, params: tuple[object, ...]) -> bool:
        host = self._known(lease.host)
        if host is None:
            return False
        cur = self._c.execute(
            sql + " WHERE host_id=? AND fp=? AND status=1 AND due=?",
            (*params, host.id, lease.fp, lease.expires),
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
        passed = lease.cash if status in _PASSES_CASH else 0.0
        if self._end_lease(
            lease,
            "UPDATE urls SET status=?, due=NULL, reason=?, attempts=attempts+1, etag=?, "
            "last_modified=?, cash=max(0, cash-?), history=history+?",
            (int(status), one_line(reason), etag, last_modified, passed, passed),
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

    def requeue(self, lease: Lease, *, host_ready_at: float, defer: bool = False) -> None:
        sql, params = "UPDATE urls SET status=0, due=NULL", tuple[object, ...]()
        if defer:
            sql += _TO_BAND
            params = (_BORDER, DEFERRED)
        if self._end_lease(lease, sql, params):
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED)
            host = self._hosts[lease.host]  # held by _end_lease
            host.queued += 1
            # Its key may have improved while it was out (an in-link): the head is then
            # a little pessimistic until the next take reads the queue again.
            key = deferred_key(lease.priority) if defer else lease.priority
            self._improve(host, key, {})
            self._dirty[host.id] = host
        self._release(lease.host, host_ready_at)

    def hold_host(self, host: str, now: float, *, until: float) -> float | None:
        # In-process holds end with the process (the schedule is rebuilt on open).
        return self._schedule.hold(host, self._host(host).next_at, now)

    def release_host(self, host: str, *, host_ready_at: float) -> None:
        self._release(host, host_ready_at)

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        # The common case in one statement: a fetched page's parse sets its outcome.
        h = self._known(host)
        if (
            h is not None
            and status != UrlStatus.FETCHED
            and self._c.execute(
                "UPDATE urls SET status=?, reason=? WHERE host_id=? AND fp=? AND status=?",
                (int(status), one_line(reason), h.id, fp, int(UrlStatus.FETCHED)),
            ).rowcount
        ):
            self._move(UrlStatus.FETCHED, status)
            return
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

    def revisit(self, host: str, fp: int, *, due: float, interval: float, shift: int = 0) -> None:
        """A finished page comes back at ``due`` to be fetched again (conditionally)."""
        found = self._status_of(host, fp)
        if found is None:
            return
        host_id, old = found
        if old is UrlStatus.WAITING:
            self._c.execute(
                "UPDATE urls SET due=? WHERE host_id=? AND fp=? AND status=6 "
                "AND reason='revisit' AND due>?",
                (due, host_id, fp, due),
            )
            return
        if old in _ACTIVE:
            return
        self._c.execute(
            "UPDATE urls SET status=6, due=?, revisit=?, attempts=0, reason='revisit', "
            "priority=priority-(CASE WHEN priority>=? THEN ? ELSE 0 END)+? "
            "WHERE host_id=? AND fp=?",
            (due, interval, _BORDER, DEFERRED, shift, host_id, fp),
        )
        self._move(old, UrlStatus.WAITING)

    # -- time-driven returns -------------------------------------------------------

    def _requeue_rows(self, rows: list[tuple[int, int, str, int]], old: UrlStatus) -> int:
        """Queue again ``(fp, host id, host name, key)`` rows that were in status ``old``."""
        if not rows:
            return 0
        self._c.executemany(
            "UPDATE urls SET status=0, due=NULL WHERE host_id=? AND fp=?",
            [(host_id, fp) for fp, host_id, _name, _key in rows],
        )
        self._move(old, UrlStatus.QUEUED, len(rows))
        before: dict[str, int | None] = {}
        for _fp, _id, name, key in rows:
            host = self._known(name)
            assert host is not None  # its URLs are rows
            host.queued += 1
            self._dirty[host.id] = host
            self._improve(host, key, before)
        for name, order in before.items():
            host = self._hosts[name]
            if self._schedule.is_busy(name):
                continue
            if name not in self._schedule or host.order != order:
                self._place(host)
        return len(rows)

    def wake_due(self, now: float) -> int:
        rows = self._c.execute(
            "SELECT u.fp, u.host_id, h.name, u.priority FROM urls AS u "
            "JOIN hosts AS h ON h.id=u.host_id WHERE u.status=6 AND u.due<=?",
            (now,),
        ).fetchall()
        return self._requeue_rows(rows, UrlStatus.WAITING)

    def reclaim_expired(self, now: float) -> int:
        rows = self._c.execute(
            "SELECT u.fp, u.host_id, h.name, u.priority FROM urls AS u "
            "JOIN hosts AS h ON h.id=u.host_id WHERE u.status=1 AND u.due<=?",
            (now,),
        ).fetchall()
        n = self._requeue_rows(rows, UrlStatus.IN_FLIGHT)
        for _fp, _id, name, _key in rows:
            if self._schedule.is_busy(name):
                host = self._hosts[name]  # held by _requeue_rows
                self._set_free(host, host.next_at)
        return n

    # -- hosts ---------------------------------------------------------------------

    def set_max_per_host(self, limit: int | None) -> None:
        """Hosts without a budget of their own admit this many URLs from now on."""
        self._max_per_host = limit

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        h = self._host(host)
        h.priority = max(h.priority, priority)
        if budget is not None:
            h.budget = budget if h.budget is None else min(h.budget, budget)
        h.demoted_reason = one_line(reason)
        self._dirty[h.id] = h
        if h.name in self._schedule:
            self._schedule.schedule(h.name, h.next_at, h.order)

    def configure_host(self, host: str, *, budget: int | None, priority: int | None) -> None:
        h = self._host(host)
        if h.demoted_reason is not None:
            return
        if budget is not None:
            h.budget = budget
        if priority is not None and priority != h.priority:
            h.priority = priority
            if h.name in self._schedule:
                self._schedule.schedule(h.name, h.next_at, h.order)
        self._dirty[h.id] = h
