"""Redis stores as a fleet uses them: dead workers rolled back, a primary killed.

Real servers (tests/redis_servers.py); the sessions' heartbeats read an injected
wall clock, so a worker's death is simulated by moving that clock, not by sleeping.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from tests.contract.test_frontier import T0, url
from tests.contract.test_near import _sig, _text
from tests.contract.test_pages import page
from tests.contract.test_parse_queue import job
from tests.redis_servers import RedisCluster, RedisServer
from trawl.archive.textstore import TextStore
from trawl.dedup.minhash import MinHasher
from trawl.errors import SessionLostError, StorageError
from trawl.export import committed_ends, export
from trawl.models import Position, UrlStatus
from trawl.storage.blobs import TEXT_LOG, SegmentWriter
from trawl.storage.open import open_blobs
from trawl.storage.place import CrawlPlace
from trawl.storage.redis.reader import LOG_META_PREFIX
from trawl.storage.redis.store import RedisCrawlStore


class WallClock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def test_a_dead_workers_uncommitted_work_is_rolled_back_by_another(
    redis_server: RedisServer,
) -> None:
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    dead = RedisCrawlStore(redis_server.url, crawl, worker="dead", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    try:
        dead.frontier.add([url("a.example", "/1"), url("b.example", "/1")], now=T0)
        first, second = dead.frontier.take(T0), dead.frontier.take(T0)
        assert first is not None and second is not None
        dead.parse_queue.put(job(1))
        dead.commit()  # a fetched page waits for its parse
        dead.frontier.finish(first, UrlStatus.FETCHED, host_ready_at=T0 + 1)
        dead.parse_queue.put(job(2))
        dead.conn.close()  # kill -9: no commit, no goodbye
        assert alive.parse_queue.pending() == []  # the dead worker's page is not ours yet
        assert alive.frontier.reclaim_expired(T0 + 1) == 0  # its heartbeat is still fresh
        assert alive.frontier.take(T0 + 1) is None
        wall.t += 61
        alive.commit()  # the living worker's heartbeat goes on
        assert alive.frontier.reclaim_expired(T0 + 1) == 2  # both URLs it had out
        assert alive.frontier.counts()[UrlStatus.QUEUED] == 2
        taken = {
            lease.url
            for lease in (alive.frontier.take(T0 + 1), alive.frontier.take(T0 + 1))
            if lease is not None
        }
        assert taken == {first.url, second.url}
        assert alive.frontier.reclaim_expired(T0 + 1) == 0  # rolled back once
        assert [j.fp for _seq, j in alive.parse_queue.pending()] == [1]  # taken over
    finally:
        alive.close(commit=False)


def test_a_dead_workers_near_claims_are_given_back_unless_its_page_is_stored(
    redis_server: RedisServer,
) -> None:
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    dead = RedisCrawlStore(redis_server.url, crawl, worker="dead", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    hasher = MinHasher()
    stored_text, lost_text = _text(1), _text(2)
    try:
        index = dead.near_index(hasher)
        assert index.claim(_sig(stored_text), "h001", "h001") is None
        assert index.claim(_sig(lost_text), "h002", "h002") is None
        dead.pages.add(page(1))
        outputs = dead.conn.pipeline()
        dead.pages.flush(outputs)
        outputs.execute()  # the commit's outputs went out; kill -9 before its acks
        dead.conn.close()
        theirs = alive.near_index(hasher)
        assert theirs.claim(_sig(lost_text + " Comments: 2"), "h003", "h003") is not None
        wall.t += 61
        alive.commit()  # the living worker's heartbeat goes on
        alive.frontier.reclaim_expired(T0)  # which rolls the dead session back
        kept = theirs.find(_sig(stored_text))
        assert kept is not None and kept.doc_key == "h001"  # its page is stored: final
        assert theirs.find(_sig(lost_text)) is None  # its page was never stored
        assert theirs.claim(_sig(lost_text + " Comments: 2"), "h003", "h003") is None
        assert theirs.count() == 2
    finally:
        alive.close(commit=False)


def test_pages_taken_over_from_a_dead_worker_reach_a_poller_that_is_past_them(
    redis_server: RedisServer,
) -> None:
    # A parse role polls pending(after=the last seq it took): pages adopted from a dead
    # worker have older seqs, and must reach it all the same (once).
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    dead = RedisCrawlStore(redis_server.url, crawl, worker="dead", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    try:
        older = dead.parse_queue.put(job(1))
        dead.commit()
        dead.conn.close()  # kill -9
        newer = alive.parse_queue.put(job(2))
        alive.commit()
        assert older < newer
        assert [seq for seq, _j in alive.parse_queue.pending()] == [newer]
        wall.t += 61
        alive.commit()
        alive.frontier.reclaim_expired(T0)  # rolls the dead session back, adopts its page
        assert [j.fp for _seq, j in alive.parse_queue.pending(after=newer)] == [1]
        assert alive.parse_queue.pending(after=newer) == []  # handed over once
        assert [j.fp for _seq, j in alive.parse_queue.pending()] == [1, 2]  # still pending
    finally:
        alive.close(commit=False)


def test_pages_taken_over_from_a_dead_worker_reach_a_worker_that_fetches_too(
    redis_server: RedisServer,
) -> None:
    # A worker that fetches and parses never polls pending(): it takes up its own pages
    # as it fetches them. A dead worker's pages it adopted come through taken_over(),
    # once, and never its own (found by the kill drill: the crawl waited for ever).
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    dead = RedisCrawlStore(redis_server.url, crawl, worker="dead", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    try:
        dead.parse_queue.put(job(1))
        dead.commit()
        dead.conn.close()  # kill -9
        alive.parse_queue.put(job(2))
        alive.commit()
        assert alive.parse_queue.taken_over() == []  # its own page is not taken over
        wall.t += 61
        alive.commit()
        alive.frontier.reclaim_expired(T0)  # rolls the dead session back, adopts its page
        assert [j.fp for _seq, j in alive.parse_queue.taken_over(limit=5)] == [1]
        assert alive.parse_queue.taken_over() == []  # handed over once
        # and not again through pending() past it
        assert [j.fp for _seq, j in alive.parse_queue.pending(after=10**9)] == []
        assert len(alive.parse_queue) == 2  # both wait for their parse's ack
    finally:
        alive.close(commit=False)


def test_a_worker_rolled_back_while_alive_cannot_commit(redis_server: RedisServer) -> None:
    """A worker silent past its session's life (a long pause, a failover) whose work was
    given to the others must not commit it as well: it would be stored twice."""
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    zombie = RedisCrawlStore(redis_server.url, crawl, worker="slow", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    try:
        zombie.frontier.add([url("a.example", "/1")], now=T0)
        lease = zombie.frontier.take(T0)
        assert lease is not None
        zombie.commit()
        zombie.parse_queue.put(job(1))
        zombie.pages.add(page(1))
        wall.t += 61  # the zombie says nothing for a minute
        alive.commit()
        assert alive.frontier.reclaim_expired(T0 + 1) == 1
        with pytest.raises(SessionLostError, match="silent"):
            zombie.commit()
        assert alive.pages.find("h001") is None  # nothing of the zombie's was kept
        assert alive.parse_queue.pending() == []
        assert alive.frontier.take(T0 + 1) is not None  # its URL is the others' now
    finally:
        alive.close(commit=False)
        zombie.conn.close()


def test_a_worker_silent_for_long_checks_its_session_before_a_new_lease(
    redis_server: RedisServer,
) -> None:
    """Woken after a long stop, a worker must not fetch a host the others took over:
    ``take`` after half a session's life without a heartbeat asks whether it lives."""
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    sleeper = RedisCrawlStore(redis_server.url, crawl, worker="slow", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    try:
        sleeper.frontier.add([url("a.example", "/1"), url("b.example", "/1")], now=T0)
        assert sleeper.frontier.take(T0) is not None
        wall.t += 40  # silent, but its session still lives: it beats and goes on
        assert sleeper.frontier.take(T0) is not None
        wall.t += 61
        alive.commit()
        assert alive.frontier.reclaim_expired(T0 + 1) == 2  # rolled back, hosts given back
        with pytest.raises(SessionLostError, match="silent"):
            sleeper.frontier.take(T0 + 1)
    finally:
        alive.close(commit=False)
        sleeper.conn.close()


def test_committed_work_survives_a_primary_killed(tmp_path: Path) -> None:
    """The fault drills' helper: kill -9 a primary, its replica takes over, the crawl goes on."""
    cluster = RedisCluster(tmp_path)
    try:
        crawl = uuid.uuid4().hex[:12]
        # Replication is asynchronous: the commit waits for a replica of every primary.
        store = RedisCrawlStore(cluster.url, crawl, worker="w1", wait_replicas=1, wait_ms=5000)
        store.frontier.add([url(f"h{i}.example", "/") for i in range(30)], now=T0)
        for n in range(1, 21):
            store.pages.add(page(n, host=f"h{n}.example"))
        store.counters.add("status:200", 20)
        store.commit()
        victim = cluster.kill_primary(0)
        store.close(commit=False)
        store = RedisCrawlStore(cluster.url, crawl, worker="w1", wait_replicas=1, wait_ms=100)
        # The promoted replica has no replica of its own (redis-py's WAIT to every
        # primary answers their sum, which would hide it).
        assert store.conn.wait_replicas(1, 100) == 0
        assert store.pages.count() == 20
        assert store.counters.get("status:200") == 20
        assert store.frontier.counts()[UrlStatus.QUEUED] == 30
        leases = []
        while (lease := store.frontier.take(T0)) is not None:
            leases.append(lease)
        assert len({lease.host for lease in leases}) == 30
        # A commit waits for the shard's replica (up to the outage patience), then fails
        # with nothing acknowledged; once the old primary is back as a replica, it lands.
        store.conn.outage = 0.5
        with pytest.raises(StorageError, match="reached 0 of 1 replicas"):
            store.commit()
        cluster.rejoin(victim)
        store.commit()
        assert store.frontier.counts()[UrlStatus.IN_FLIGHT] == 30
        store.close()
    finally:
        cluster.stop()


def test_scripts_forgotten_by_the_server_are_loaded_again(redis_server: RedisServer) -> None:
    """A failed-over replica starts with no scripts (Redis 7 does not replicate them)."""
    store = RedisCrawlStore(redis_server.url, uuid.uuid4().hex[:12], worker="w1")
    try:
        store.frontier.add([url("a.example", "/1")], now=T0)
        store.conn.client.script_flush()
        store.frontier.add([url("a.example", "/2"), url("b.example", "/1")], now=T0)  # pipeline
        store.conn.client.script_flush()
        lease = store.frontier.take(T0)  # scripts sent alone
        assert lease is not None
        store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
        store.commit()
        assert store.frontier.counts()[UrlStatus.QUEUED] == 2
        assert store.frontier.counts()[UrlStatus.FETCHED] == 1
    finally:
        store.close()


def test_a_fleet_ends_on_its_indexes_whatever_a_killed_worker_left_in_the_counts(
    redis_server: RedisServer,
) -> None:
    """A worker killed before it sent its count moves leaves the counts wrong for good
    (they are statistics); the fleet still knows when it is done (from the indexes)."""
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    dead = RedisCrawlStore(redis_server.url, crawl, worker="dead", session_ttl=60, wall=wall)
    alive = RedisCrawlStore(redis_server.url, crawl, worker="alive", session_ttl=60, wall=wall)
    reader = alive.reader()
    try:
        dead.frontier.add([url("a.example", "/1")], now=T0)
        dead.commit()
        lease = dead.frontier.take(T0)
        assert lease is not None
        assert dead.conn.pending  # its count moves ride with its next round trip...
        dead.conn.close()  # ...which never comes: kill -9
        assert not reader.finished()  # leased
        wall.t += 61
        alive.commit()
        assert alive.frontier.reclaim_expired(T0) == 1  # rolled back: queued again
        again = alive.frontier.take(T0)
        assert again is not None and again.url == lease.url
        alive.frontier.finish(again, UrlStatus.FETCHED, host_ready_at=T0)
        alive.frontier.set_status(again.host, again.fp, UrlStatus.PARSED)
        told = alive.frontier.host_info(again.host)  # answered by the outcome's script
        assert told is not None and told == alive.frontier.host_info(again.host)  # as read
        assert (told.admitted, told.queued, told.in_flight) == (1, 0, False)
        alive.commit()
        raw = alive.conn.client.hgetall(alive.keys.counts)
        assert int(raw[str(int(UrlStatus.QUEUED)).encode()]) == 1  # drifted: 0 are queued
        assert alive.frontier.counts()[UrlStatus.IN_FLIGHT] == 0  # from the lease index
        assert reader.finished()
    finally:
        reader.close()
        alive.close(commit=False)


@pytest.mark.parametrize("zombie_first", [True, False])
def test_a_commit_cut_after_its_logs_ends_leaves_each_text_stored_once(
    redis_server: RedisServer, tmp_path: Path, zombie_first: bool
) -> None:
    """A worker stopped (SIGSTOP, kill -9) between the first step of its commit (its
    logs' ends, durable) and its pages is rolled back, and another worker stores the
    same text again; the stopped one, woken, may still write its pages. Both records
    lie in committed logs; the text is one document: the one its page names."""
    crawl, wall = uuid.uuid4().hex[:12], WallClock()
    blobs = open_blobs(tmp_path / "blobs")
    record = {"url": "https://a.example/1", "content_hash": "h001", "text": "Once."}

    logs: list[SegmentWriter] = []

    def write(store: RedisCrawlStore, writer: str) -> tuple[str, Position]:
        spec = TEXT_LOG.for_writer(writer)
        logs.append(blobs.open_writer(spec, committed=None, max_bytes=1 << 20))
        store.pages.claim("h001", record["url"])
        where = TextStore(logs[-1]).append(record)
        store.pages.add(replace(page(1), content_hash="h001", text=where))
        return spec.key, logs[-1].sync()

    zombie = RedisCrawlStore(redis_server.url, crawl, worker="zombie", session_ttl=60, wall=wall)
    other = RedisCrawlStore(redis_server.url, crawl, worker="other", session_ttl=60, wall=wall)
    try:
        key, end = write(zombie, "zombie")
        # The commit's first step only: the logs' ends, then the stop.
        zombie.meta.set(LOG_META_PREFIX + key, end.dump())
        zombie._session.begin_commit(zombie.meta.take())

        def wake() -> None:  # the rest of the cut commit: pages, acknowledgements
            pipe = zombie.conn.pipeline()
            zombie.pages.flush(pipe)
            zombie.pages.acknowledge(pipe)
            pipe.execute()

        wall.t += 61
        other.commit()  # rolls the silent session back (its claim on the text ends)
        if zombie_first:
            wake()
        key, end = write(other, "other")
        other.commit({key: end})
        if not zombie_first:
            wake()
        place = CrawlPlace(redis=redis_server.url, crawl=crawl, blobs=str(tmp_path / "blobs"))
        assert len(committed_ends(place)) == 2  # the record is in both workers' logs
        summary = export(place, tmp_path / "out", format="jsonl")
        assert (summary.documents, summary.superseded) == (1, 1)
        kept = zombie if zombie_first else other  # whichever page was written first
        reader = place.reader()
        try:
            stored = reader.page("h001")
        finally:
            reader.close()
        assert stored is not None and f"-{kept.worker}-" in stored.text.file
    finally:
        for log in logs:
            log.close()
        zombie.close(commit=False)
        other.close(commit=False)
