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

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from trawl.models import AddResult, Lease, NewUrl, UrlStatus
from trawl.storage.reasons import one_line
from trawl.storage.redis import lua
from trawl.storage.redis.frontier_outcomes import FrontierOutcomes
from trawl.storage.redis.frontier_read import (
    PROBES,
    Look,
    decode_record,
    encode_record,
    first_score,
    score_or_inf,
    wrap_fp,
)
from trawl.storage.redis.keys import arg, text
from trawl.storage.schedule import HOLD_RETRY

_TAKE_TRIES = 32  # hosts looked at per take before saying none is ready
_PEEK = 4  # candidates kept per bucket from one look
_REGISTERED = 100_000  # hosts remembered as listed in the bucket host sets


def _status(value: object) -> UrlStatus:
    return UrlStatus(int(text(value) or 0))


class RedisFrontier(FrontierOutcomes):
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
            if host not in self._registered:  # every host known, listed with the first offer
                if len(self._registered) >= _REGISTERED:
                    self._registered.clear()
                self._registered.add(host)
                self._conn.later("SADD", self._keys.hosts(self._keys.bucket_of(host)), host)
            args: list[str] = [budget]
            for u, slots in offers:
                record = encode_record(u.url, u.depth, u.priority, u.via, u.hops, u.cash)
                args += [str(len(slots)), *map(arg, slots), u.url, record, arg(float(u.gain))]
            pipe.script(lua.ADD, self._host_keys(host), args)
        again: dict[str, Any] = {"S": 0, "D": 0}
        for (host, offers), answer in zip(by_host.items(), pipe.execute(), strict=True):
            answers, state = answer[: len(offers)], answer[len(offers) :]
            fresh = raised = 0
            for (u, slots), got in zip(offers, answers, strict=True):
                got = text(got)
                if got in ("S", "R"):
                    again["S"] += 1
                    raised += got == "R"
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
            if fresh or raised:
                queued, next_at, prio, holder = state
                if fresh:
                    self._conn.tally(self._keys.counts, str(int(UrlStatus.QUEUED)), fresh)
                if not text(holder):
                    self._schedule(host, queued, next_at, prio, lt=True)
        return again

    # -- taking ------------------------------------------------------------------

    def _peek(self, now: float) -> tuple[str, int] | None:
        """The best due host over every bucket (order, then time) and its bucket.

        One look at the buckets yields several candidates, kept for the next takes
        (each is claimed only if still due): a new better host may wait for the
        candidates in hand to be used up, never more than ``_PEEK`` of them per bucket.
        The look also learns each index's earliest time (``next_wake``...).
        """
        if self._candidates and self._candidates_at <= now:
            return self._candidates.pop(0)
        look = self._looked(now)
        if look is not None and look.complete:
            return None  # every host due now was a candidate of this very look
        pipe = self._conn.pipeline()
        k = self._keys
        for i in range(k.buckets):
            keys = [k.schedule(i), k.priorities(i), k.waiting(i), k.leases(i)]
            pipe.script(lua.PEEK, keys, [arg(now), str(_PEEK)])
        found: list[tuple[int, float, str, int]] = []
        firsts = [math.inf, math.inf, math.inf]
        complete = True
        for i, row in enumerate(pipe.execute()):
            for j in range(3):
                firsts[j] = min(firsts[j], score_or_inf(row[j]))
            complete = complete and int(row[3]) <= _PEEK
            for j in range(4, len(row), 3):
                host, score, prio = (text(x) or "0" for x in row[j : j + 3])
                found.append((int(float(prio)), float(score), host, i))
        # Best priority first; among equals, an order of this worker's own, so that
        # workers looking at once do not all claim the same hosts first.
        found.sort(key=lambda c: (c[0], self._rng.random()))
        self._look = Look(now, firsts[0], firsts[1], firsts[2], complete)
        self._look_stale = False
        self._candidates = [(host, i) for _p, _s, host, i in found]
        self._candidates_at = now
        return self._candidates.pop(0) if self._candidates else None

    def take(self, now: float) -> Lease | None:
        if self.alive is not None:
            self.alive()
        expires = now + self._lease
        later = self._conn.later
        for _ in range(_TAKE_TRIES + self._keys.buckets * _PEEK):
            peeked = self._peek(now)
            if peeked is None:
                return None
            host, b = peeked
            sched, leases = self._keys.schedule(b), self._keys.leases(b)
            if not self._conn.script(lua.CLAIM, [sched, leases], [host, arg(now), arg(expires)]):
                continue  # another worker claimed it first
            pipe = self._conn.pipeline()
            pipe.call("SADD", self._keys.session(self._session), host)
            k = self._keys.host(host)
            keys = [k.host, k.urls, k.queue, k.waiting, k.fetches]
            pipe.script(lua.TAKE, keys, [arg(now), arg(expires), self._session])
            _, answer = pipe.execute()
            kind = text(answer[0])
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
                    cash=record.cash,
                )
                self.held[host] = lease
                # Nobody else writes this URL's fetch record while the lease is ours.
                self.fetch_records[(host, fp)] = answer[4] if len(answer) > 4 else None
                self._counts([(UrlStatus.QUEUED.value, UrlStatus.IN_FLIGHT.value)])
                return lease
            if kind == "busy":  # leased meanwhile: the lease index learns its expiry
                later("ZADD", leases, text(answer[1]) or "0", host)
                self._learn(leased=float(text(answer[1]) or 0))
            else:
                later("ZREM", leases, host)
                if kind == "later":  # the index was early: it learns the host's time
                    later("ZADD", sched, text(answer[1]) or "0", host)
                    self._learn(scheduled=float(text(answer[1]) or 0))
            if host not in self.held and host not in self.changed:
                later("SREM", self._keys.session(self._session), host)
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
            arg(float(lease.cash)),
        ]
        answer = self._conn.script(lua.FINISH, self._host_keys(lease.host, undo=True), args)
        if text(answer[0]) == "late":
            return  # the lease expired and went to another: this answer changes nothing
        if self.held.get(lease.host) == lease:
            del self.held[lease.host]
        self.fetch_records.pop((lease.host, lease.fp), None)
        self.changed.add(lease.host)
        old, new, queued, prio = answer
        b = self._keys.bucket_of(lease.host)
        self._conn.later("ZREM", self._keys.leases(b), lease.host)
        self._schedule(lease.host, queued, arg(host_ready_at), prio)
        if kind == "r":
            self._look_stale = True
            self._conn.later("ZADD", self._keys.waiting(b), "LT", arg(due), lease.host)
        self._counts([(old, new)])

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

    def requeue(self, lease: Lease, *, host_ready_at: float, defer: bool = False) -> None:
        self._end(lease, "d" if defer else "q", host_ready_at=host_ready_at)

    # -- a host's turn for another page's request ---------------------------------------

    def hold_host(self, host: str, now: float, *, until: float) -> float | None:
        expires = arg(until)
        pipe = self._conn.pipeline()
        # In the session's hosts first: a worker that dies holding it is rolled back.
        pipe.call("SADD", self._keys.session(self._session), host)
        pipe.script(lua.HOLD, self._host_keys(host), [arg(now), expires, self._session])
        _, answer = pipe.execute()
        if text(answer[0]) == "ok":
            self.holds[host] = expires
            self._conn.later("ZADD", self._keys.leases(self._keys.bucket_of(host)), expires, host)
            return None
        if host not in self.held and host not in self.changed and host not in self.holds:
            self._conn.later("SREM", self._keys.session(self._session), host)
        at = float(text(answer[1]) or 0)
        return max(at, now) if text(answer[0]) == "later" else min(at, now + HOLD_RETRY)

    def release_host(self, host: str, *, host_ready_at: float) -> None:
        expires = self.holds.pop(host, None)
        if expires is None:
            return
        args = [self._session, expires, arg(host_ready_at)]
        answer = self._conn.script(lua.RELEASE, self._host_keys(host), args)
        if answer:
            queued, prio = answer
            self._conn.later("ZREM", self._keys.leases(self._keys.bucket_of(host)), host)
            self._schedule(host, queued, arg(host_ready_at), prio)
        if host not in self.held and host not in self.changed:
            self._conn.later("SREM", self._keys.session(self._session), host)

    def set_max_per_host(self, limit: int | None) -> None:
        """Hosts without a budget of their own admit this many URLs from now on."""
        self._max_per_host = limit

    # -- hosts ---------------------------------------------------------------------

    def configure_host(self, host: str, *, budget: int | None, priority: int | None) -> None:
        fields: list[str] = []
        if budget is not None:
            fields += ["budget", str(budget)]
        if priority is not None:
            fields += ["priority", str(priority)]
        k = self._keys.host(host)
        pipe = self._conn.pipeline()
        pipe.call("HEXISTS", k.host, "demoted")
        pipe.call("ZRANGE", k.queue, 0, 0, "WITHSCORES")
        demoted, top = pipe.execute()
        if not fields or demoted:
            return
        b = self._keys.bucket_of(host)
        pipe = self._conn.pipeline()
        pipe.call("HSET", k.host, *fields)
        if priority is not None:  # the host's order: its best queued key plus its priority
            head = int(first_score(top)) if top else 0
            pipe.call("SADD", self._keys.hosts(b), host)
            pipe.call("HSET", self._keys.priorities(b), host, str(priority + head))
        pipe.execute()
