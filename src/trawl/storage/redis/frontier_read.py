"""The reads of the Redis frontier, and the URL record's encoding.

Reads go to Redis every time: the frontier's writes are applied when they are made
(see ``trawl.storage.redis.frontier``; the index writes kept back ride ahead of every
read), so what this store wrote is always there to read, and so is what the other
workers of the crawl wrote. One exception: ``take`` looks at every bucket and learns
each index's earliest time (``Look``); ``next_wake`` and ``next_wake_due`` right after
answer from that look unless this session has scheduled something since.

URLs in flight are counted from the lease index (hosts leased, one URL each), not from
the crawl-wide counts, which may drift when a worker dies between a script and the
write of its count moves (docs/redis.md): a fleet decides it is done on them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any

import orjson

from trawl.models import HostInfo, UrlRecord, UrlStatus
from trawl.storage.redis.conn import Conn
from trawl.storage.redis.keys import Keys, arg, num, text

_INT64 = 1 << 64
PROBES = 64  # slots tried past a fingerprint collision, as the other backends do


def wrap_fp(fp: int) -> int:
    """``fp`` as a signed 64-bit integer, as SQLite stores it."""
    return (fp + (1 << 63)) % _INT64 - (1 << 63)


def encode_record(
    url: str, depth: int, priority: int, via: str | None, hops: int, cash: float
) -> str:
    """A new queued URL's record (see ``trawl.storage.redis.lua``)."""
    row = [url, str(depth), str(priority), "0", None, "0", None, via, str(hops)]
    return orjson.dumps([*row, None, None, None, "0", arg(float(cash)), "0"]).decode()


def decode_record(host: str, fp: int, data: bytes | str) -> UrlRecord:
    r: list[Any] = orjson.loads(data)
    # Records written before priorities were scores end at the version: unranked.
    cash, history = (num(r[13]), num(r[14])) if len(r) > 14 else (1.0, 0.0)
    return UrlRecord(
        fp=fp,
        url=r[0],
        host=host,
        depth=int(r[1]),
        priority=int(r[2]),
        status=UrlStatus(int(r[3])),
        due=num(r[4]),
        attempts=int(r[5]),
        reason=r[6],
        via=r[7],
        hops=int(r[8]),
        etag=r[9],
        last_modified=r[10],
        revisit=num(r[11]),
        cash=cash or 0.0,
        history=history or 0.0,
    )


@dataclass(frozen=True, slots=True)
class Look:
    """What one look at every bucket saw (times: the earliest; inf: none)."""

    at: float  # the ``now`` of the look
    scheduled: float  # the earliest host due after ``at`` (those due by then: candidates)
    waiting: float
    leased: float
    complete: bool  # every host due at ``at`` is among the candidates


def score_or_inf(value: object) -> float:
    """A score a script answered, infinity for '' (an empty index)."""
    return math.inf if value in (None, b"", "") else float(text(value) or 0)


class FrontierReads:
    """The connection, key names and session of a Redis frontier; its reads."""

    def __init__(
        self,
        conn: Conn,
        keys: Keys,
        session: str,
        *,
        max_per_host: int | None = None,
        lease_seconds: float = 600.0,
    ) -> None:
        self._conn = conn
        self._keys = keys
        self._session = session
        self._max_per_host = max_per_host
        self._lease = lease_seconds
        self._look: Look | None = None  # the last look at every bucket
        self._look_stale = False  # this session changed an index since that look
        self._now = -math.inf  # the latest ``now`` this frontier was told
        self._candidates: list[tuple[str, int]] = []  # (host, bucket), best first
        self._candidates_at = -math.inf
        self._rng = random.Random()

    def _looked(self, now: float, *, max_age: float = 0.0) -> Look | None:
        """The last look, if taken at most ``max_age`` before ``now`` and this session
        changed no index since."""
        self._now = max(self._now, now)
        look = self._look
        if look is None or self._look_stale or not now - max_age <= look.at <= now:
            return None
        return look

    def _learn(self, *, scheduled: float = math.inf, leased: float = math.inf) -> None:
        """A host the last look missed: scheduled, or leased, at that time."""
        look = self._look
        if look is not None:
            self._look = replace(
                look, scheduled=min(look.scheduled, scheduled), leased=min(look.leased, leased)
            )

    def get(self, host: str, fp: int) -> UrlRecord | None:
        data = self._conn.call("HGET", self._keys.host(host).urls, arg(fp))
        return None if data is None else decode_record(host, fp, data)

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of ``url`` whose fingerprint is ``fp``, following collision probes."""
        first = self.get(host, fp)
        if first is None or first.url == url:
            return first
        slots = [wrap_fp(fp + step) for step in range(1, PROBES)]
        rows = self._conn.call("HMGET", self._keys.host(host).urls, *map(arg, slots))
        for slot, data in zip(slots, rows, strict=True):
            if data is None:
                return None
            record = decode_record(host, slot, data)
            if record.url == url:
                return record
        return None

    def counts(self) -> dict[UrlStatus, int]:
        pipe = self._conn.pipeline()
        pipe.call("HGETALL", self._keys.counts)
        for i in range(self._keys.buckets):
            pipe.call("ZCARD", self._keys.leases(i))
        stored, *leased = pipe.execute()
        values = {int(k): int(v) for k, v in _pairs(stored)}
        values[int(UrlStatus.IN_FLIGHT)] = sum(int(n) for n in leased)
        return {status: values.get(int(status), 0) for status in UrlStatus}

    def host_info(self, host: str) -> HostInfo | None:
        k = self._keys.host(host)
        pipe = self._conn.pipeline()
        pipe.call("HMGET", k.host, "next_at", "admitted", "budget", "priority", "demoted", "holder")
        pipe.call("ZCARD", k.queue)
        (next_at, admitted, budget, priority, demoted, holder), queued = pipe.execute()
        if admitted is None and priority is None:
            return None
        return HostInfo(
            host=host,
            next_at=num(next_at) or 0.0,
            queued=int(queued),
            admitted=int(admitted or 0),
            budget=None if budget is None else int(budget),
            priority=int(priority or 0),
            demoted_reason=text(demoted),
            in_flight=bool(holder),
        )

    def _earliest(self, names: list[str]) -> float | None:
        pipe = self._conn.pipeline()
        for name in names:
            pipe.call("ZRANGE", name, 0, 0, "WITHSCORES")
        scores = [first_score(row) for row in pipe.execute() if row]
        return min(scores, default=None)

    def next_wake(self, now: float) -> float | None:
        look = self._looked(now)
        if look is not None:
            if self._candidates:  # hosts due now, unless claimed by others meanwhile
                return now
            earliest: float | None = None if look.scheduled == math.inf else look.scheduled
        else:
            earliest = self._earliest([self._keys.schedule(i) for i in range(self._keys.buckets)])
        if earliest is None:
            return None
        return now if earliest <= now else earliest

    def next_wake_due(self) -> float | None:
        look = self._looked(self._now)
        if look is not None:
            return None if look.waiting == math.inf else look.waiting
        return self._earliest([self._keys.waiting(i) for i in range(self._keys.buckets)])

    def _count_schedule(self, low: str, high: str) -> int:
        pipe = self._conn.pipeline()
        for i in range(self._keys.buckets):
            pipe.call("ZCOUNT", self._keys.schedule(i), low, high)
        return sum(int(n) for n in pipe.execute())

    def hosts_ready(self, now: float) -> int:
        return self._count_schedule("-inf", arg(now))

    def hosts_waiting(self, now: float) -> int:
        return self._count_schedule(f"({arg(now)}", "+inf")


def _pairs(stored: Any) -> list[tuple[Any, Any]]:
    """HGETALL's answer as pairs (a dict from redis-py, a flat list from a pipeline)."""
    if isinstance(stored, dict):
        return list(stored.items())
    return list(zip(stored[::2], stored[1::2], strict=True))


def first_score(row: Any) -> float:
    """The score of a ``ZRANGE ... WITHSCORES`` answer's first member."""
    head = row[0]
    return float(head[1] if isinstance(head, list | tuple) else row[1])
