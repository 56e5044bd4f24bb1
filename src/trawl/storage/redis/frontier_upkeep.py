"""The Redis frontier's upkeep: index fixes, time-driven returns, commits and crashes.

``wake_due`` and ``reclaim_expired`` find their hosts in the bucket indexes and run
one script per host; ``acknowledge`` makes a session's changes final at its commit;
``recover`` rolls back a session that died before its commit (script ``ROLLBACK``:
records restored if nobody changed them since, URLs in flight queued again, its
leases released). The writes are in ``trawl.storage.redis.frontier``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from trawl.models import Lease, UrlStatus
from trawl.storage.redis import lua
from trawl.storage.redis.conn import Pipe
from trawl.storage.redis.frontier_read import FrontierReads
from trawl.storage.redis.keys import arg, text

# How old a look at the buckets may be for ``wake_due`` and ``reclaim_expired`` to skip
# their scan when it saw nothing due (others' new entries are theirs to handle, and
# any worker's next look sees them).
LOOK_AGE = 5.0


class FrontierUpkeep(FrontierReads):
    """The session's state, the index helpers, and the time- and crash-driven writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: dict[str, Lease] = {}  # host -> the lease this session holds on it
        self.holds: dict[str, str] = {}  # host -> expiry of this session's hold of its turn
        self.changed: set[str] = set()  # hosts with an undo hash since the last commit
        # (host, fp) -> the URL's fetch record as its take found it (None: none yet),
        # for the fetch stage's look at the previous fetch while the lease is held.
        self.fetch_records: dict[tuple[str, int], Any] = {}
        self._registered: set[str] = set()  # hosts this session put in the host sets
        # Rolls back the sessions of dead workers (set by the store); URLs given back.
        self.sweep: Callable[[], int] | None = None
        self.alive: Callable[[], None] | None = None  # raises if the session was lost

    def _host_keys(self, host: str, *, undo: bool = False) -> list[str]:
        k = self._keys.host(host)
        keys = [k.host, k.urls, k.queue, k.waiting]
        return [*keys, k.undo(self._session)] if undo else keys

    def _counts(self, moves: Sequence[tuple[object, object]]) -> None:
        """Move URLs between statuses in the crawl-wide counts (with the next round trip)."""
        for old, new in moves:
            if old is not None and text(old) != text(new):
                self._conn.tally(self._keys.counts, text(old) or "0", -1)
            if old is None or text(old) != text(new):
                self._conn.tally(self._keys.counts, text(new) or "0", 1)

    def _schedule(
        self, host: str, queued: object, at: object, prio: object, *, lt: bool = False
    ) -> None:
        """Put ``host`` in its bucket at ``at`` if it has work (``lt``: unless it is there
        earlier), else take it out; sent with the next round trip."""
        b = self._keys.bucket_of(host)
        later = self._conn.later
        if int(text(queued) or 0) > 0:
            self._look_stale = True
            when = ("LT", text(at) or "0") if lt else (text(at) or "0",)
            later("ZADD", self._keys.schedule(b), *when, host)
            later("HSET", self._keys.priorities(b), host, text(prio) or "0")
        elif not lt:
            later("ZREM", self._keys.schedule(b), host)

    # -- time-driven returns ---------------------------------------------------------

    def _due_hosts(self, index: Any, now: float) -> list[str]:
        pipe = self._conn.pipeline()
        for i in range(self._keys.buckets):
            pipe.call("ZRANGEBYSCORE", index(i), "-inf", arg(now))
        return [text(h) or "" for found in pipe.execute() for h in found]

    def wake_due(self, now: float) -> int:
        look = self._looked(now, max_age=LOOK_AGE)
        if look is not None and look.waiting > now:
            return 0  # nothing was due at the last look (a peer's new ones are its own)
        hosts = self._due_hosts(self._keys.waiting, now)
        if not hosts:
            return 0
        pipe = self._conn.pipeline()
        for host in hosts:
            pipe.script(lua.WAKE, self._host_keys(host), [arg(now)])
        woken = 0
        for host, (n, left, queued, next_at, prio, holder) in zip(
            hosts, pipe.execute(), strict=True
        ):
            b = self._keys.bucket_of(host)
            woken += int(n)
            if text(left):
                self._conn.later("ZADD", self._keys.waiting(b), text(left) or "0", host)
            else:
                self._conn.later("ZREM", self._keys.waiting(b), host)
            if int(n) and not text(holder):
                self._schedule(host, queued, next_at, prio, lt=True)
            if int(n):
                self._counts([(UrlStatus.WAITING.value, UrlStatus.QUEUED.value)] * int(n))
        return woken

    def reclaim_expired(self, now: float) -> int:
        swept = self.sweep() if self.sweep is not None else 0
        look = self._looked(now, max_age=LOOK_AGE)
        if look is not None and look.leased > now:
            return swept  # no lease had expired at the last look
        hosts = self._due_hosts(self._keys.leases, now)
        if not hosts:
            return swept
        pipe = self._conn.pipeline()
        for host in hosts:
            pipe.script(lua.RECLAIM, self._host_keys(host), [arg(now)])
        reclaimed = 0
        later = self._conn.later
        for host, answer in zip(hosts, pipe.execute(), strict=True):
            b = self._keys.bucket_of(host)
            kind = int(answer[0])
            if kind == 0:  # a live lease: the index learns its true expiry
                later("ZADD", self._keys.leases(b), text(answer[1]) or "0", host)
                continue
            later("ZREM", self._keys.leases(b), host)
            self.holds.pop(host, None)  # an expired hold of the host's turn (kind 2)
            _, queued, next_at, prio = answer
            self._schedule(host, queued, next_at, prio, lt=True)
            if kind == 1:
                reclaimed += 1
                self.held.pop(host, None)
                self._counts([(UrlStatus.IN_FLIGHT.value, UrlStatus.QUEUED.value)])
        return reclaimed + swept

    # -- commits and crashes -----------------------------------------------------------

    def acknowledge(self, pipe: Pipe) -> None:
        """Make this session's changes final (queued in ``pipe``, sent last in a commit)."""
        for host in self.changed:
            pipe.call("DEL", self._keys.host(host).undo(self._session))
        done = [h for h in self.changed if h not in self.held and h not in self.holds]
        if done:
            pipe.call("SREM", self._keys.session(self._session), *done)
        self.changed = set()

    def recover(self, session: str) -> int:
        """Undo what ``session`` did since its last commit and give back its leases.

        Returns how many URLs in flight went back to the queue.
        """
        hosts = [text(h) or "" for h in self._conn.call("SMEMBERS", self._keys.session(session))]
        if not hosts:
            return 0
        pipe = self._conn.pipeline()
        for host in hosts:
            k = self._keys.host(host)
            keys = [k.host, k.urls, k.queue, k.waiting, k.undo(session)]
            pipe.script(lua.ROLLBACK, keys, [session])
        back = 0
        for host, answer in zip(hosts, pipe.execute(), strict=True):
            queued, next_at, prio, given = answer[:4]
            moves = list(zip(answer[4::2], answer[5::2], strict=True))
            back += int(given)
            self._conn.later("ZREM", self._keys.leases(self._keys.bucket_of(host)), host)
            self._schedule(host, queued, next_at, prio, lt=True)
            self._counts(moves)
        self._conn.later("DEL", self._keys.session(session))
        return back
