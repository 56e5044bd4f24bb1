"""``CrawlStore`` over Redis: one worker session of a crawl shared by many workers.

A store is a session: ``worker`` names it (random unless given). Opening refuses a
session already open elsewhere (a key set NX, expiring unless refreshed by commits),
then rolls back whatever that session left uncommitted when it last died.

``commit`` guarantees, in this order (Redis applies each command as it runs and a
cluster has no cross-shard transaction, so order and idempotence do the work):

1. the blob logs' committed ends and meta (the logs were synced before the call);
2. the outputs: pages (added only if their content hash is new), fetch records,
   robots answers, origin files, counters, parse-queue entries
   (appended once per sequence number);
3. with ``wait_replicas``, ``WAIT`` until that many replicas of every primary hold
   the outputs (else StorageError: nothing is acknowledged);
4. the acknowledgements: the frontier session's undo entries dropped (its lease ends
   and later-stage outcomes become final) and its near-index claims made final
   (claims are written when made, so every worker sees them at once), then
   parse-queue entries deleted.

A crash before 4 leaves the acknowledgements undone: the work is redone, and every
output it writes again replaces itself. Only counters (``HINCRBY``) may count such a
redone unit twice. The frontier's admissions and leases are written when they happen.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping

from trawl.dedup.minhash import MinHasher
from trawl.errors import DataDirInUseError, SessionLostError, StorageError
from trawl.models import Position
from trawl.storage.redis.conn import Conn, connect
from trawl.storage.redis.frontier import RedisFrontier
from trawl.storage.redis.keys import Keys, text
from trawl.storage.redis.near import RedisNearIndex, release_claims
from trawl.storage.redis.pages import RedisPageStore, release_page_claims
from trawl.storage.redis.queue import RedisParseQueue
from trawl.storage.redis.reader import LOG_META_PREFIX, RedisCrawlReader, committed_logs
from trawl.storage.redis.small import (
    RedisCounters,
    RedisMeta,
    RedisOriginFileStore,
    RedisRobotsStore,
)


class RedisCrawlStore:
    """The CrawlStore protocol for one worker of the crawl ``crawl`` at ``url``."""

    def __init__(
        self,
        url: str,
        crawl: str,
        *,
        worker: str | None = None,
        max_per_host: int | None = None,
        lease_seconds: float = 600.0,
        buckets: int = 16,
        session_ttl: float = 300.0,
        wait_replicas: int = 0,
        wait_ms: int = 1000,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.conn = Conn(connect(url))
        self.keys = Keys(crawl, buckets)
        self.worker = worker or uuid.uuid4().hex[:16]
        self._ttl = session_ttl
        self._wait = (wait_replicas, wait_ms)
        self._wall = wall
        self._token = uuid.uuid4().hex
        owner = self.keys.owner(self.worker)
        if not self.conn.call("SET", owner, self._token, "NX", "PX", int(session_ttl * 1000)):
            self.conn.close()
            raise DataDirInUseError(f"worker {self.worker} of crawl {crawl} is open elsewhere")
        self._open = True
        self._frontier = RedisFrontier(
            self.conn,
            self.keys,
            self.worker,
            max_per_host=max_per_host,
            lease_seconds=lease_seconds,
        )
        self._frontier.recover(self.worker)  # what this worker left when it last died
        release_claims(self.conn, self.keys, self.worker)
        release_page_claims(self.conn, self.keys, self.worker)
        self._frontier.sweep = self.recover_dead
        self._frontier.alive = self._check_alive
        self._pages = RedisPageStore(self.conn, self.keys, self.worker)
        self._parse_queue = RedisParseQueue(
            self.conn, self.keys, self.worker, claim_idle=lease_seconds
        )
        self._counters = RedisCounters(self.conn, self.keys)
        self._robots = RedisRobotsStore(self.conn, self.keys)
        self._origin_files = RedisOriginFileStore(self.conn, self.keys)
        self._meta = RedisMeta(self.conn, self.keys)
        self._near: RedisNearIndex | None = None
        self._beat()

    def _beat(self) -> None:
        """Tell the other workers this session lives (and keep its name ours)."""
        pipe = self.conn.pipeline()
        pipe.call("ZADD", self.keys.sessions, repr(self._wall() + self._ttl), self.worker)
        pipe.call("PEXPIRE", self.keys.owner(self.worker), int(self._ttl * 1000))
        pipe.execute()
        self._beat_at = self._wall()

    def _check_alive(self) -> None:
        """Before a new lease after a long silence (a pause, a stop), make sure the
        session still lives: a rolled-back worker must not fetch a host the others
        have taken over (SessionLostError)."""
        if self._wall() - self._beat_at > self._ttl / 2:
            self._still_ours()
            self._beat()

    def recover_dead(self) -> int:
        """Roll back the sessions whose heartbeat stopped (workers that died).

        Whoever removes a dead session from the registry (``ZREM`` answers 1 to one
        caller only) rolls it back and takes over its unparsed pages. Returns how
        many URLs in flight went back.
        """
        dead = self.conn.call("ZRANGEBYSCORE", self.keys.sessions, "-inf", repr(self._wall()))
        back = 0
        for name in (text(d) or "" for d in dead):
            if name != self.worker and self.conn.call("ZREM", self.keys.sessions, name):
                back += self._frontier.recover(name)
                release_claims(self.conn, self.keys, name)
                release_page_claims(self.conn, self.keys, name)
                self._parse_queue.adopt(name)
        return back

    @property
    def frontier(self) -> RedisFrontier:
        return self._frontier

    @property
    def pages(self) -> RedisPageStore:
        return self._pages

    @property
    def parse_queue(self) -> RedisParseQueue:
        return self._parse_queue

    @property
    def counters(self) -> RedisCounters:
        return self._counters

    @property
    def robots(self) -> RedisRobotsStore:
        return self._robots

    @property
    def origin_files(self) -> RedisOriginFileStore:
        return self._origin_files

    @property
    def meta(self) -> RedisMeta:
        return self._meta

    def near_index(self, hasher: MinHasher) -> RedisNearIndex:
        """The store's one near-duplicate index; asking with another layout is an error."""
        if self._near is None:
            self._near = RedisNearIndex(self.conn, self.keys, self.worker, self._meta, hasher)
        elif self._near.hasher.layout != hasher.layout:
            raise ValueError(
                f"near index open with {self._near.hasher.layout}, asked for {hasher.layout}"
            )
        return self._near

    def committed_logs(self) -> dict[str, Position]:
        return committed_logs(self.conn, self.keys)

    def _still_ours(self) -> None:
        """Refuse to commit for a session another worker rolled back (it was silent for
        ``session_ttl``: a long pause, a failover): its work went to the others, and
        committing it as well would store it twice. The worker must stop."""
        pipe = self.conn.pipeline()
        pipe.call("ZSCORE", self.keys.sessions, self.worker)
        pipe.call("GET", self.keys.owner(self.worker))
        score, owner = pipe.execute()
        if score is None or owner != self._token.encode():
            raise SessionLostError(
                f"worker {self.worker} was silent for more than {self._ttl:g} s and its "
                "session was given to the others; nothing since its last commit is kept"
            )

    def commit(self, logs: Mapping[str, Position] | None = None) -> None:
        if not self._open:
            raise ValueError("commit on a closed store")
        self._still_ours()
        for name, position in (logs or {}).items():
            self._meta.set(LOG_META_PREFIX + name, position.dump())
        outputs = self.conn.pipeline()
        self._meta.flush(outputs)
        outputs.execute()  # the logs' ends before anything that points into the logs
        self._pages.flush(outputs)
        self._robots.flush(outputs)
        self._origin_files.flush(outputs)
        self._counters.flush(outputs)
        self._parse_queue.flush_puts(outputs)
        outputs.execute()
        if self._wait[0] > 0:
            got = self.conn.wait_replicas(*self._wait)
            if got < self._wait[0]:  # not acknowledged: redo rather than trust it
                raise StorageError(f"commit reached {got} of {self._wait[0]} replicas")
        acks = self.conn.pipeline()
        self._frontier.acknowledge(acks)
        self._pages.acknowledge(acks)
        if self._near is not None:
            self._near.acknowledge(acks)
        acks.execute()
        self._parse_queue.flush_acks(acks)
        acks.execute()
        self._beat()

    def reader(self) -> RedisCrawlReader:
        return RedisCrawlReader(self.url, self.keys.crawl, buckets=self.keys.buckets)

    def close(self, *, commit: bool = True) -> None:
        """Close (committing unless told not to: ``commit=False`` drops what was not).

        Without a commit the session's uncommitted frontier changes and leases stay
        as a crash leaves them, and are rolled back when this worker opens again.
        """
        if not self._open:
            return
        if commit:
            self.commit()
        self._open = False
        if self.conn.call("GET", self.keys.owner(self.worker)) == self._token.encode():
            self.conn.call("DEL", self.keys.owner(self.worker))
        self.conn.close()

    @property
    def round_trips(self) -> int:
        return self.conn.round_trips

    @property
    def commands(self) -> int:
        return self.conn.commands
