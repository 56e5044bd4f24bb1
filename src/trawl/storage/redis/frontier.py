"""The frontier over Redis: each host's state on its shard, schedule buckets as an index.

The host's hash is the truth (next contact time, lease, budget, priority); the
schedule buckets only say when to look at a host, early but never late. ``take``
peeks the buckets, claims a due host in its bucket (its score pushed past the lease,
so no other worker claims it), then the host's script checks the host's own time and
lease, leases it and pops its best URL. No worker, however many, fetches a host early.

Writes apply when made, so every worker sees them at once (a shared frontier cannot
keep admissions private). Admissions, leases, wake-ups and reclaims are safe to keep
after a crash. The ends of leases and later stages' outcomes (``finish``, ``retry``,
``requeue``, ``set_status``, ``revisit``) are acknowledgements: each keeps the URL's
record as it was before in the session's undo hash until ``commit``; a session that
dies before its commit is rolled back (its URLs in flight queued again) when it opens
again or when another worker finds its heartbeat stale (``frontier_upkeep``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from trawl.models import AddResult, Lease, NewUrl, UrlStatus
from trawl.storage.reasons import one_line
from trawl.storage.redis import lua
from trawl.storage.redis.frontier_read import PROBES, decode_record, encode_record, wrap_fp
from trawl.storage.redis.frontier_upkeep import FrontierUpkeep
from trawl.storage.redis.keys import NONE, arg, num, text

_TAKE_TRIES = 32  # hosts looked at per take before saying none is ready
_PEEK = 4  # candidates kept per bucket from one look


def _status(value: object) -> UrlStatus:
    return UrlStatus(int(text(value) or 0))


class RedisFrontier(FrontierUpkeep):
    """The Frontier protocol on Redis (standalone or cluster) for one worker session."""

    # -- adding ----------------------------------------------------------------

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        by_host: dict[str, list[tuple[NewUrl, list[int]]]] = {}
        for u in urls:
            by_host.setdefault(u.host, []).append((u, [u.fp]))
        added: list[NewUrl] = []
        seen = 0
        dropped = 0
        while by_host:
            clashes = self._add_round(by_host, added)
            seen += clashes.pop("S", 0)
            dropped += clashes.pop("D", 0)
            by_host = clashes
        return AddResult(
            tuple(added), seen=seen, dropped={"host budget": dropped} if dropped else {}
        )

    def _add_round(
        self, by_host: dict[str, list[tuple[NewUrl, list[int]]]], added: list[NewUrl]
    ) -> dict[str, Any]:
        """One pipelined pass; returns the URLs to offer again at further slots."""
        budget = arg(self._max_per_host) if self._max_per_host is not None else ""
        pipe = self._conn.pipeline()
        for host, offers in by_host.items():
            args: list[str] = [budget]
            for u, slots in offers:
                record = encode_record(u.url, u.depth, u.priority, u.via, u.hops)
                args += [str(len(slots)), *map(arg, slots), u.url, record]
            pipe.script(lua.ADD, self._host_keys(host), args)
        after = self._conn.pipeline()
        again: dict[str, Any] = {"S": 0, "D": 0}
        for (host, offers), answer in zip(by_host.items(), pipe.execute(), strict=True):
            answers, state = answer[: len(offers)], answer[len(offers) :]
            fresh = 0
            for (u, slots), got in zip(offers, answers, strict=True):
                got = text(got)
                if got == "S":
                    again["S"] += 1
                elif got == "D":
                    again["D"] += 1
                elif got == "C":
                    if len(slots) == 1:
                        probes = [wrap_fp(u.fp + step) for step in range(1, PROBES)]
                        again.setdefault(host, []).append((u, probes))
                    else:
                        again["S"] += 1  # every slot taken: as the other backends, seen
                else:
                    fp = int(got or 0)
                    added.append(u if fp == u.fp else replace(u, fp=fp))
                    fresh += 1
            if fresh:
                _queued, next_at, prio, holder = state
                after.call("HINCRBY", self._keys.counts, str(int(UrlStatus.QUEUED)), fresh)
                after.call("SADD", self._keys.hosts(self._keys.bucket_of(host)), host)
                if not text(holder):
                    b = self._keys.bucket_of(host)
                    after.call("ZADD", self._keys.schedule(b), "LT", text(next_at) or "0", host)
                    after.call("HSET", self._keys.priorities(b), host, text(prio) or "0")
        after.execute()
        return again

    # -- taking ------------------------------------------------------------------

    def _peek(self, now: float) -> tuple[str, int] | None:
        """The best due host over every bucket (priority, then time) and its bucket.

        One look at the buckets yields several candidates, kept for the next takes
        (each is claimed only if still due): a new better host may wait for the
        candidates in hand to be used up, never more than ``_PEEK`` of them per bucket.
        """
        if self._candidates and self._candidates_at <= now:
            return self._candidates.pop(0)
        pipe = self._conn.pipeline()
        for i in range(self._keys.buckets):
            keys = [self._keys.schedule(i), self._keys.priorities(i)]
            pipe.script(lua.PEEK, keys, [arg(now), str(_PEEK)])
        found: list[tuple[int, float, str, int]] = []
        for i, row in enumerate(pipe.execute()):
            for j in range(0, len(row), 3):
                host, score, prio = (text(x) or "0" for x in row[j : j + 3])
                found.append((int(float(prio)), float(score), host, i))
        found.sort()
        self._candidates = [(host, i) for _p, _s, host, i in found]
        self._candidates_at = now
        return self._candidates.pop(0) if self._candidates else None

    def take(self, now: float) -> Lease | None:
        if self.alive is not None:
            self.alive()
        expires = now + self._lease
        for _ in range(_TAKE_TRIES + self._keys.buckets * _PEEK):
            peeked = self._peek(now)
            if peeked is None:
                return None
            host, b = peeked
            sched = self._keys.schedule(b)
            if not self._conn.script(lua.CLAIM, [sched], [host, arg(now), arg(expires)]):
                continue  # another worker claimed it first
            pipe = self._conn.pipeline()
            pipe.call("SADD", self._keys.session(self._session), host)
            pipe.script(lua.TAKE, self._host_keys(host), [arg(now), arg(expires), self._session])
            _, answer = pipe.execute()
            kind = text(answer[0])
            after = self._conn.pipeline()
            if kind == "ok":
                fp = int(text(answer[1]) or 0)
                record = decode_record(host, fp, answer[2])
                lease = Lease(
                    fp=fp,
                    url=record.url,
                    host=host,
                    depth=record.depth,
                    priority=record.priority,
                    attempts=record.attempts,
                    expires=expires,
                    via=record.via,
                    hops=record.hops,
                    etag=record.etag,
                    last_modified=record.last_modified,
                    revisit=record.revisit,
                )
                self.held[host] = lease
                after.call("ZREM", sched, host)
                after.call("ZADD", self._keys.leases(b), arg(expires), host)
                self._counts(after, [(UrlStatus.QUEUED.value, UrlStatus.IN_FLIGHT.value)])
                after.execute()
                return lease
            if kind == "empty":
                after.call("ZREM", sched, host)
            else:  # busy or later: the index was early; it learns the host's true time
                after.call("ZADD", sched, "XX", text(answer[1]) or "0", host)
            if host not in self.held and host not in self.changed:
                after.call("SREM", self._keys.session(self._session), host)
            after.execute()
        return None

    # -- ends of leases --------------------------------------------------------------

    def _end(
        self,
        lease: Lease,
        kind: str,
        *,
        host_ready_at: float,
        status: UrlStatus = UrlStatus.QUEUED,
        reason: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        due: float | None = None,
    ) -> None:
        args = [
            arg(lease.fp),
            arg(lease.expires),
            kind,
            str(int(status)),
            arg(host_ready_at),
            arg(one_line(reason)),
            arg(etag),
            arg(last_modified),
            arg(due),
        ]
        answer = self._conn.script(lua.FINISH, self._host_keys(lease.host, undo=True), args)
        if text(answer[0]) == "late":
            return  # the lease expired and went to another: this answer changes nothing
        if self.held.get(lease.host) == lease:
            del self.held[lease.host]
        self.changed.add(lease.host)
        old, new, queued, prio = answer
        b = self._keys.bucket_of(lease.host)
        pipe = self._conn.pipeline()
        pipe.call("ZREM", self._keys.leases(b), lease.host)
        self._schedule(pipe, lease.host, queued, arg(host_ready_at), prio)
        if kind == "r":
            pipe.call("ZADD", self._keys.waiting(b), "LT", arg(due), lease.host)
        self._counts(pipe, [(old, new)])
        pipe.execute()

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
        self._end(
            lease,
            "f",
            host_ready_at=host_ready_at,
            status=status,
            reason=reason,
            etag=etag,
            last_modified=last_modified,
        )

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        self._end(lease, "r", host_ready_at=host_ready_at, reason=reason, due=due)

    def requeue(self, lease: Lease, *, host_ready_at: float) -> None:
        self._end(lease, "q", host_ready_at=host_ready_at)

    # -- later stages ------------------------------------------------------------------

    def _later(self, host: str, args: list[str]) -> list[Any]:
        pipe = self._conn.pipeline()
        pipe.call("SADD", self._keys.session(self._session), host)
        pipe.script(lua.SET_STATUS, self._host_keys(host, undo=True), args)
        answer: list[Any] = pipe.execute()[1]
        if len(answer) == 2 and text(answer[0]) != "active":
            self.changed.add(host)
        return answer

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        answer = self._later(
            host, [arg(fp), "s", str(int(status)), arg(one_line(reason)), NONE, NONE]
        )
        if not answer:
            return
        if text(answer[0]) == "active":
            raise ValueError(f"set_status is for finished URLs, not {_status(answer[1]).label}")
        pipe = self._conn.pipeline()
        self._counts(pipe, [(answer[0], answer[1])])
        pipe.execute()

    def revisit(self, host: str, fp: int, *, due: float, interval: float) -> None:
        answer = self._later(host, [arg(fp), "v", NONE, NONE, arg(due), arg(interval)])
        if not answer:
            return
        pipe = self._conn.pipeline()
        pipe.call("ZADD", self._keys.waiting(self._keys.bucket_of(host)), "LT", arg(due), host)
        self._counts(pipe, [(answer[0], answer[1])])
        pipe.execute()

    # -- hosts ---------------------------------------------------------------------

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        k = self._keys.host(host)
        stored = self._conn.call("HMGET", k.host, "priority", "budget")
        prio = max(int(stored[0] or 0), priority)
        fields: list[str] = ["priority", str(prio), "demoted", one_line(reason) or ""]
        if budget is not None:
            old = num(stored[1])
            fields += ["budget", str(budget if old is None else min(int(old), budget))]
        b = self._keys.bucket_of(host)
        pipe = self._conn.pipeline()
        pipe.call("HSET", k.host, *fields)
        pipe.call("SADD", self._keys.hosts(b), host)
        pipe.call("HSET", self._keys.priorities(b), host, str(prio))
        pipe.execute()
