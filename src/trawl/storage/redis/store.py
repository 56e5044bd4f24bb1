"""``CrawlStore`` over Redis: one worker session of a crawl shared by many workers.

A store is a session: ``worker`` names it (random unless given). Opening refuses a
session already open elsewhere (a key set NX, expiring unless refreshed by commits),
then rolls back whatever that session left uncommitted when it last died.

``commit`` guarantees, in this order (Redis applies each command as it runs and a
cluster has no cross-shard transaction, so order and idempotence do the work):

1. the session still ours (else SessionLostError, nothing written), the blob logs'
   committed ends and meta (the logs were synced before the call), the heartbeat;
2. the outputs: pages (added only if their content hash is new), fetch records,
   robots answers, origin files, counters, learned URL rules (a rule's state never
   goes back) and the URLs they rewrote, parse-queue entries (appended once per
   sequence number);
3. with ``wait_replicas``, ``WAIT`` until that many replicas of every primary hold
   the outputs (else StorageError: nothing is acknowledged);
4. the acknowledgements: the frontier session's undo entries dropped (its lease ends
   and later-stage outcomes become final) and its near-index claims made final
   (claims are written when made, so every worker sees them at once), then
   parse-queue entries deleted.

On one server without ``WAIT``, 2 and 4 go in one pipeline (applied in order): two
round trips a commit; a commit with nothing to write is skipped while the heartbeat
is fresh. A crash before 4 leaves the acknowledgements undone: the work is redone,
and every output it writes again replaces itself. Only counters (``HINCRBY``) may count such a
redone unit twice. The frontier's admissions and leases are written when they happen.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping

from trawl.dedup.minhash import MinHasher
from trawl.errors import DataDirInUseError, StorageError
from trawl.models import Position
from trawl.storage.redis.conn import Conn, connect
from trawl.storage.redis.frontier import RedisFrontier
from trawl.storage.redis.keys import Keys
from trawl.storage.redis.near import RedisNearIndex, release_claims
from trawl.storage.redis.pages import RedisPageStore, release_page_claims
from trawl.storage.redis.queue import RedisParseQueue
from trawl.storage.redis.reader import LOG_META_PREFIX, RedisCrawlReader, committed_logs
from trawl.storage.redis.session import Session
from trawl.storage.redis.small import (
    RedisCounters,
    RedisMeta,
    RedisOriginFileStore,
    RedisRobotsStore,
)
from trawl.storage.redis.urlrules import RedisUrlRuleStore
from trawl.storage.redis.wakeup import RedisWakeSignal
from trawl.storage.retry import never


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
        give_up: Callable[[], bool] = never,
    ) -> None:
        self.url = url
        self.conn = Conn(connect(url), give_up=give_up)
        self.keys = Keys(crawl, buckets)
        self.worker = worker or uuid.uuid4().hex[:16]
        # A session not heard from this long is dead: its leases are others' after it.
        self.session_ttl: float | None = session_ttl
        self._wait = (wait_replicas, wait_ms)
        try:
            self._session = Session(
                self.conn, self.keys, self.worker, uuid.uuid4().hex, ttl=session_ttl, wall=wall
            )
        except DataDirInUseError:
            self.conn.close()
            raise
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
        self._frontier.alive = self._session.alive
        self._pages = RedisPageStore(
            self.conn, self.keys, self.worker, known_fetches=self._frontier.fetch_records
        )
        self._parse_queue = RedisParseQueue(
            self.conn, self.keys, self.worker, claim_idle=lease_seconds
        )
        self._counters = RedisCounters(self.conn, self.keys)
        self._robots = RedisRobotsStore(self.conn, self.keys)
        self._origin_files = RedisOriginFileStore(self.conn, self.keys)
        self._meta = RedisMeta(self.conn, self.keys)
        self._url_rules = RedisUrlRuleStore(self.conn, self.keys)
        self._near: RedisNearIndex | None = None

    def recover_dead(self) -> int:
        """Roll back the sessions whose heartbeat stopped (workers that died), and take
        over their unparsed pages. Returns how many URLs in flight went back."""
        back = 0
        for name in self._session.dead():
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

    @property
    def url_rules(self) -> RedisUrlRuleStore:
        return self._url_rules

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

    def _writes(self) -> bool:
        """Anything this session has to make durable or to acknowledge."""
        near = self._near is not None and self._near.claimed
        return (
            self.conn.pending
            or bool(self._meta.pending)
            or self._pages.has_writes
            or bool(self._robots.pending or self._origin_files.pending)
            or any(self._counters.pending.values())
            or self._parse_queue.has_writes
            or self._url_rules.has_writes
            or bool(self._frontier.changed)
            or near
        )

    def commit(self, logs: Mapping[str, Position] | None = None) -> None:
        if not self._open:
            raise ValueError("commit on a closed store")
        for name, position in (logs or {}).items():
            self._meta.set(LOG_META_PREFIX + name, position.dump())
        if not self._writes() and self._session.fresh():
            return  # nothing to make durable, and the others know this worker lives
        # Still ours? Then the logs' ends before anything that points into the logs.
        self._session.begin_commit(self._meta.take())
        # One server applies a pipeline in order (a crash cuts it, never reorders it):
        # outputs, then acknowledgements, go in one round trip. A Cluster's nodes each
        # keep only their own order, and WAIT must come between: separate round trips.
        apart = self.conn.cluster or self._wait[0] > 0
        pipe = self.conn.pipeline()
        self._pages.flush(pipe)
        self._robots.flush(pipe)
        self._origin_files.flush(pipe)
        self._counters.flush(pipe)
        self._url_rules.flush(pipe)
        self._parse_queue.flush_puts(pipe)
        if apart:
            pipe.execute()
        if self._wait[0] > 0:
            got = self.conn.wait_replicas(*self._wait)  # waits out a failover's window
            if got < self._wait[0]:  # not acknowledged: redo rather than trust it
                raise StorageError(f"commit reached {got} of {self._wait[0]} replicas")
        self._frontier.acknowledge(pipe)
        self._pages.acknowledge(pipe)
        if self._near is not None:
            self._near.acknowledge(pipe)
        if apart:  # lease ends and outcomes final before their pages leave the queue
            pipe.execute()
        self._parse_queue.flush_acks(pipe)
        pipe.execute()

    def wake_signal(self) -> RedisWakeSignal:
        """How this worker wakes idle peers and waits for them (``frontier.idle``)."""
        return RedisWakeSignal(self.conn, self.keys, token=self.worker)

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
        else:
            self.conn.drop_pending()  # as a crash leaves them
        self._open = False
        self._session.close()
        self.conn.close()

    @property
    def round_trips(self) -> int:
        return self.conn.round_trips

    @property
    def commands(self) -> int:
        return self.conn.commands
