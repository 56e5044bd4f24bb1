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


class FrontierUpkeep(FrontierReads):
    """The session's state, the index helpers, and the time- and crash-driven writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: dict[str, Lease] = {}  # host -> the lease this session holds on it
        self.changed: set[str] = set()  # hosts with an undo hash since the last commit
        # Rolls back the sessions of dead workers (set by the store); URLs given back.
        self.sweep: Callable[[], int] | None = None
        self.alive: Callable[[], None] | None = None  # raises if the session was lost
        self._candidates: list[tuple[str, int]] = []  # (host, bucket), best first
        self._candidates_at = float("-inf")

    def _host_keys(self, host: str, *, undo: bool = False) -> list[str]:
        k = self._keys.host(host)
        keys = [k.host, k.urls, k.queue, k.waiting]
        return [*keys, k.undo(self._session)] if undo else keys

    def _counts(self, pipe: Pipe, moves: Sequence[tuple[object, object]]) -> None:
        for old, new in moves:
            if old is not None and text(old) != text(new):
                pipe.call("HINCRBY", self._keys.counts, text(old) or "0", -1)
            if old is None or text(old) != text(new):
                pipe.call("HINCRBY", self._keys.counts, text(new) or "0", 1)

    def _schedule(self, pipe: Pipe, host: str, queued: object, at: object, prio: object) -> None:
        """Put ``host`` in its bucket at ``at`` if it has work, else take it out."""
        b = self._keys.bucket_of(host)
        if int(text(queued) or 0) > 0:
            pipe.call("ZADD", self._keys.schedule(b), text(at) or "0", host)
            pipe.call("HSET", self._keys.priorities(b), host, text(prio) or "0")
        else:
            pipe.call("ZREM", self._keys.schedule(b), host)

    # -- time-driven returns ---------------------------------------------------------

    def _due_hosts(self, index: Any, now: float) -> list[str]:
        pipe = self._conn.pipeline()
        for i in range(self._keys.buckets):
            pipe.call("ZRANGEBYSCORE", index(i), "-inf", arg(now))
        return [text(h) or "" for found in pipe.execute() for h in found]

    def wake_due(self, now: float) -> int:
        hosts = self._due_hosts(self._keys.waiting, now)
        if not hosts:
            return 0
        pipe = self._conn.pipeline()
        for host in hosts:
            pipe.script(lua.WAKE, self._host_keys(host), [arg(now)])
        woken = 0
        after = self._conn.pipeline()
        for host, (n, left, _queued, next_at, prio, holder) in zip(
            hosts, pipe.execute(), strict=True
        ):
            b = self._keys.bucket_of(host)
            woken += int(n)
            if text(left):
                after.call("ZADD", self._keys.waiting(b), text(left) or "0", host)
            else:
                after.call("ZREM", self._keys.waiting(b), host)
            if int(n) and not text(holder):
                after.call("ZADD", self._keys.schedule(b), "LT", text(next_at) or "0", host)
                after.call("HSET", self._keys.priorities(b), host, text(prio) or "0")
            if int(n):
                self._counts(after, [(UrlStatus.WAITING.value, UrlStatus.QUEUED.value)] * int(n))
        after.execute()
        return woken

    def reclaim_expired(self, now: float) -> int:
        swept = self.sweep() if self.sweep is not None else 0
        hosts = self._due_hosts(self._keys.leases, now)
        if not hosts:
            return swept
        pipe = self._conn.pipeline()
        for host in hosts:
            pipe.script(lua.RECLAIM, self._host_keys(host), [arg(now)])
        reclaimed = 0
        after = self._conn.pipeline()
        for host, answer in zip(hosts, pipe.execute(), strict=True):
            b = self._keys.bucket_of(host)
            if int(answer[0]):
                reclaimed += 1
                self.held.pop(host, None)
                after.call("ZREM", self._keys.leases(b), host)
                _, queued, next_at, prio = answer
                if int(queued):
                    after.call("ZADD", self._keys.schedule(b), "LT", text(next_at) or "0", host)
                    after.call("HSET", self._keys.priorities(b), host, text(prio) or "0")
                self._counts(after, [(UrlStatus.IN_FLIGHT.value, UrlStatus.QUEUED.value)])
            elif len(answer) > 1:
                after.call("ZADD", self._keys.leases(b), text(answer[1]) or "0", host)
            else:
                after.call("ZREM", self._keys.leases(b), host)
        after.execute()
        return reclaimed + swept

    # -- commits and crashes -----------------------------------------------------------

    def acknowledge(self, pipe: Pipe) -> None:
        """Make this session's changes final (queued in ``pipe``, sent last in a commit)."""
        for host in self.changed:
            pipe.call("DEL", self._keys.host(host).undo(self._session))
        done = [h for h in self.changed if h not in self.held]
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
        after = self._conn.pipeline()
        back = 0
        for host, answer in zip(hosts, pipe.execute(), strict=True):
            queued, next_at, prio, given = answer[:4]
            moves = list(zip(answer[4::2], answer[5::2], strict=True))
            back += int(given)
            b = self._keys.bucket_of(host)
            after.call("ZREM", self._keys.leases(b), host)
            if int(queued):
                after.call("ZADD", self._keys.schedule(b), "LT", text(next_at) or "0", host)
                after.call("HSET", self._keys.priorities(b), host, text(prio) or "0")
            self._counts(after, moves)
        after.call("DEL", self._keys.session(session))
        after.execute()
        return back
