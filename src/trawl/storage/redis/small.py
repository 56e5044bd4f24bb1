"""Robots answers, origin files, meta and counters in Redis.

Each keeps its writes in this process until the store's commit queues them in the
commit's pipeline (``flush``); reads see the buffer over what is committed. Every
write is a plain replace, except counters (``HINCRBY``): a unit of work redone after a
crash in the middle of a commit may count twice.
"""

from __future__ import annotations

from typing import Any

import orjson

from trawl.storage.base import RobotsRow
from trawl.storage.redis.conn import Conn, Pipe
from trawl.storage.redis.keys import Keys, b64, text, unb64


def encode_robots(r: RobotsRow) -> str:
    row = [r.host, r.status, b64(r.body), repr(r.fetched_at), repr(r.expires_at), r.failures]
    unreachable = None if r.unreachable_since is None else repr(r.unreachable_since)
    good_at = None if r.good_fetched_at is None else repr(r.good_fetched_at)
    return orjson.dumps([*row, unreachable, r.good_status, b64(r.good_body), good_at]).decode()


def decode_robots(data: Any) -> RobotsRow:
    r = orjson.loads(data)
    return RobotsRow(
        host=r[0],
        status=r[1],
        body=unb64(r[2]),
        fetched_at=float(r[3]),
        expires_at=float(r[4]),
        failures=int(r[5]),
        unreachable_since=None if r[6] is None else float(r[6]),
        good_status=r[7],
        good_body=unb64(r[8]),
        good_fetched_at=None if r[9] is None else float(r[9]),
    )


class RedisRobotsStore:
    def __init__(self, conn: Conn, keys: Keys) -> None:
        self._conn, self._keys = conn, keys
        self.pending: dict[str, RobotsRow] = {}

    def load(self, host: str) -> RobotsRow | None:
        row = self.pending.get(host)
        if row is not None:
            return row
        data = self._conn.call("GET", self._keys.robots(host))
        return None if data is None else decode_robots(data)

    def save(self, row: RobotsRow) -> None:
        self.pending[row.host] = row

    def flush(self, pipe: Pipe) -> None:
        for host, row in self.pending.items():
            pipe.call("SET", self._keys.robots(host), encode_robots(row))
        self.pending = {}


class RedisOriginFileStore:
    def __init__(self, conn: Conn, keys: Keys) -> None:
        self._conn, self._keys = conn, keys
        self.pending: dict[tuple[str, str], tuple[int | None, bytes | None, float]] = {}

    def load(self, kind: str, origin: str) -> tuple[int | None, bytes | None, float] | None:
        found = self.pending.get((kind, origin))
        if found is not None:
            return found
        data = self._conn.call("HGET", self._keys.origin_files(origin), kind)
        if data is None:
            return None
        status, body, expires = orjson.loads(data)
        return status, unb64(body), float(expires)

    def save(
        self,
        kind: str,
        origin: str,
        *,
        status: int | None,
        body: bytes | None,
        fetched_at: float,
        expires_at: float,
    ) -> None:
        self.pending[(kind, origin)] = (status, body, float(expires_at))

    def flush(self, pipe: Pipe) -> None:
        for (kind, origin), (status, body, expires) in self.pending.items():
            value = orjson.dumps([status, b64(body), repr(expires)]).decode()
            pipe.call("HSET", self._keys.origin_files(origin), kind, value)
        self.pending = {}


class RedisMeta:
    def __init__(self, conn: Conn, keys: Keys) -> None:
        self._conn, self._keys = conn, keys
        self.pending: dict[str, str] = {}
        self._sent: dict[str, str] = {}  # what this store last committed, per key

    def get(self, key: str) -> str | None:
        if key in self.pending:
            return self.pending[key]
        return text(self._conn.call("HGET", self._keys.meta, key))

    def set(self, key: str, value: str) -> None:
        if self._sent.get(key) == value:
            self.pending.pop(key, None)  # as committed already: nothing to write
        else:
            self.pending[key] = value

    def take(self) -> dict[str, str]:
        """The writes to commit now (the caller sends them); none pending after."""
        out, self.pending = self.pending, {}
        self._sent.update(out)
        return out

    def flush(self, pipe: Pipe) -> None:
        if self.pending:
            pipe.call("HSET", self._keys.meta, *[x for kv in self.take().items() for x in kv])


class RedisCounters:
    def __init__(self, conn: Conn, keys: Keys) -> None:
        self._conn, self._keys = conn, keys
        self.pending: dict[str, int] = {}

    def add(self, name: str, n: int = 1) -> None:
        if n:
            self.pending[name] = self.pending.get(name, 0) + n

    def get(self, name: str) -> int:
        stored = self._conn.call("HGET", self._keys.counters, name)
        return int(stored or 0) + self.pending.get(name, 0)

    def all(self) -> dict[str, int]:
        stored = self._conn.call("HGETALL", self._keys.counters)
        totals = {text(k) or "": int(v) for k, v in stored.items()}
        for name, n in self.pending.items():
            totals[name] = totals.get(name, 0) + n
        return totals

    def with_prefix(self, prefix: str) -> dict[str, int]:
        """Counters under ``prefix`` (e.g. "dropped:"), keyed by the rest of the name."""
        return {k[len(prefix) :]: v for k, v in sorted(self.all().items()) if k.startswith(prefix)}

    def flush(self, pipe: Pipe) -> None:
        for name, n in self.pending.items():
            if n:
                pipe.call("HINCRBY", self._keys.counters, name, n)
        self.pending = {}
