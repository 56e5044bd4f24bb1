"""The SQLite frontier's in-memory state over its tables, and its reads.

``FrontierRows`` opens the tables (hosts, per-host counters, status counts, each
host's head: the key of its best queued URL, read from the queue index), brings back
the URLs a dead process held in flight, keeps the host schedule, writes the counters
in the commit hook, and answers the Frontier protocol's reads. The writes are in
``trawl.storage.sqlite.frontier``.

Memory holds a bounded number of hosts (``active_hosts``: ``memory.frontier_hosts``)
in the schedule, and those in flight beside them. Links name hosts without end, so the
others with queued work are *parked*: their row's ``parked_order`` holds their order, and the best
of them come into the schedule as hosts leave it (their queue ran dry, or they had
``TURNS`` fetches while others waited). Host records out of the schedule are a cache,
read from their row when wanted and dropped after a commit when it has grown.
"""

from __future__ import annotations

from dataclasses import dataclass

from trawl.memory import MemoryLimits
from trawl.models import HostInfo, UrlRecord, UrlStatus
from trawl.storage.schedule import HostSchedule, ScheduleReads
from trawl.storage.sqlite.db import Database

_INT64 = 1 << 64
# Fetches a host has in a row, while others wait on disk, before it waits in turn.
TURNS = 100
FRONTIER_HOSTS = MemoryLimits().frontier_hosts
_COLUMNS = "id, name, next_at, queued, admitted, budget, priority, demoted_reason, parked_order"


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
    head: int | None = None  # the key of its best queued URL (not stored: read on load)
    parked: bool = False  # queued work, waiting on disk rather than in the schedule
    turns: int = 0  # URLs taken since it last came in from parked (counted from 0 then)

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
        active_hosts: int = FRONTIER_HOSTS,
    ) -> None:
        self._db = db
        self._c = db.conn
        self._max_per_host = max_per_host
        self._lease = lease_seconds
        self._schedule = HostSchedule()
        self._active = max(1, active_hosts)
        self._parked = 0  # hosts parked (rows with a parked_order)
        # By name only (a map by id as well: 30 bytes a host). Every host in the schedule
        # or in flight, every host whose row the next commit writes, and others lately
        # read (dropped after a commit once they are many).
        self._hosts: dict[str, Host] = {}
        self._dirty: dict[int, Host] = {}  # hosts whose row the next commit writes, by id
        self._counts: dict[UrlStatus, int] = dict.fromkeys(UrlStatus, 0)
        self._counts_dirty = False
        self._load()
        db.before_commit(self._flush)

    # -- open and recover ------------------------------------------------------

    def _load(self) -> None:
        c = self._c
        for status, n in c.execute("SELECT status, n FROM status_counts"):
            self._counts[UrlStatus(status)] = n
        # Leases held by a process that died come back now (restart = every lease expired).
        stale = c.execute(
            "SELECT host_id, count(*) FROM urls WHERE status=1 GROUP BY host_id"
        ).fetchall()
        if stale:
            c.executemany("UPDATE hosts SET queued=queued+? WHERE id=?", [(n, h) for h, n in stale])
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED, sum(n for _h, n in stale))
            c.execute("UPDATE urls SET status=0, due=NULL WHERE status=1")
        # Every host with queued work is parked in its order (head + priority), and the
        # best come into the schedule: the same order whatever was in memory before.
        c.execute("UPDATE hosts SET parked_order=NULL WHERE parked_order IS NOT NULL")
        c.execute(
            "UPDATE hosts SET parked_order = priority + coalesce((SELECT min(u.priority) "
            "FROM urls AS u WHERE u.host_id=hosts.id AND u.status=0), 0) WHERE queued>0"
        )
        self._parked = c.execute(
            "SELECT count(*) FROM hosts WHERE parked_order IS NOT NULL"
        ).fetchone()[0]
        self._refill()

    def _flush(self) -> None:
        self._flush_hosts()
        if self._counts_dirty:
            self._c.executemany(
                "INSERT INTO status_counts(status, n) VALUES(?, ?) "
                "ON CONFLICT(status) DO UPDATE SET n=excluded.n",
                [(int(s), n) for s, n in self._counts.items()],
            )
            self._counts_dirty = False
        if len(self._hosts) > self._active + self._active // 4:
            # The rows now say what the records do: keep those the schedule holds.
            schedule = self._schedule
            self._hosts = {
                name: h
                for name, h in self._hosts.items()
                if name in schedule or schedule.is_busy(name)
            }

    def _flush_hosts(self) -> None:
        if self._dirty:
            self._c.executemany(
                "UPDATE hosts SET next_at=?, queued=?, admitted=?, budget=?, priority=?, "
                "demoted_reason=?, parked_order=? WHERE id=?",
                [
                    (
                        h.next_at,
                        h.queued,
                        h.admitted,
                        h.budget,
                        h.priority,
                        h.demoted_reason,
                        h.order if h.parked else None,
                        h.id,
                    )
                    for h in self._dirty.values()
                ],
            )
            self._dirty.clear()

    # -- hosts in memory and on disk -----------------------------------------------

    def _known(self, name: str) -> Host | None:
        """The record of host ``name``: held, else read from its row; None if unknown."""
        host = self._hosts.get(name)
        if host is None:
            row = self._c.execute(f"SELECT {_COLUMNS} FROM hosts WHERE name=?", (name,)).fetchone()
            if row is not None:
                host = self._held(row)
        return host

    def _held(self, row: tuple[object, ...]) -> Host:
        """A host record from its row (``_COLUMNS``), now held."""
        host = Host(*row[:8])  # type: ignore[arg-type]
        parked_order = row[8]
        # Out of memory, a host with queued work is parked: its order was written from
        # its head (or read from its queue on open), so the queue is not read.
        if isinstance(parked_order, int):
            host.parked = True
            host.head = parked_order - host.priority
        self._hosts[host.name] = host
        return host

    def _place(self, host: Host) -> None:
        """``host`` has queued work and is not in flight: into the schedule if it is
        there already or there is room, else parked (its order written at the commit)."""
        # Hosts in flight are bounded apart (the fetches under way), so not counted.
        if host.name in self._schedule or len(self._schedule) < self._active:
            if host.parked:
                self._unpark(host)
            self._schedule.schedule(host.name, host.next_at, host.order)
        else:
            self._park(host)

    def _park(self, host: Host) -> None:
        if not host.parked:
            host.parked = True
            self._parked += 1
        self._dirty[host.id] = host

    def _unpark(self, host: Host) -> None:
        host.parked = False
        host.turns = 0
        self._parked -= 1
        self._dirty[host.id] = host

    def _set_free(self, host: Host, ready_at: float) -> None:
        """The fetch on ``host`` (or a hold of it) ended: back into the schedule if it
        has work, unless it is parked or has had its turns while others wait."""
        work = host.queued > 0
        if work and self._parked and host.turns >= TURNS:
            # The best parked host comes in before this one is parked: not it again.
            self._schedule.release(host.name, ready_at, has_work=False)
            self._refill()
            self._park(host)
            return
        self._schedule.release(
            host.name, ready_at, has_work=work and not host.parked, priority=host.order
        )

    def _refill(self) -> None:
        """Bring the best parked hosts into the schedule while it has room (cheap when
        not: every take and wake asks)."""
        room = self._active - len(self._schedule)
        if room <= 0 or not self._parked:
            return
        self._flush_hosts()  # the rows say what the records do (parked orders)
        rows = self._c.execute(
            f"SELECT {_COLUMNS} FROM hosts WHERE parked_order IS NOT NULL "
            "ORDER BY parked_order LIMIT ?",
            (room,),
        ).fetchall()
        if not rows:
            self._parked = 0  # the count said otherwise; trust the rows
        for row in rows:
            host = self._hosts.get(row[1]) or self._held(row)
            self._unpark(host)
            if host.queued > 0 and not self._schedule.is_busy(host.name):
                self._schedule.schedule(host.name, host.next_at, host.order)

    def _move(self, old: UrlStatus | None, new: UrlStatus, n: int = 1) -> None:
        if old is not None:
            self._counts[old] -= n
        self._counts[new] += n
        self._counts_dirty = True

    def _host(self, name: str, *, new: bool = False) -> Host:
        """The record of host ``name``, its row made if it has none (``new``: known to
        have none, so not looked for)."""
        host = self._hosts.get(name) if new else self._known(name)
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
        h = self._known(host)
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
        h = self._known(host)
        if h is None:
            return None
        return self._host_info(h)

    # -- reading ---------------------------------------------------------------------

    def get(self, host: str, fp: int) -> UrlRecord | None:
        h = self._known(host)
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

    def next_wake(self, now: float) -> float | None:
        self._refill()
        return super().next_wake(now)

    def hosts_waiting(self, now: float) -> int:
        return super().hosts_waiting(now) + self._parked
