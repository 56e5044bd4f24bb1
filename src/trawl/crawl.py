"""The composition root: builds a crawl's roles from its config and runs them.

The fetch role (``fetch/role.py``) takes leases from the frontier, one per host at a
time, and stores responses; the parse role (``parse/role.py``) turns stored pages into
text, dedup decisions and links; a group commit every ``commit_interval`` seconds
acknowledges work together with its outputs, so a kill -9 at any moment loses nothing.
A process runs both roles (the default) or one, the other's work coming through the
store; ``wire.py`` builds each stage from the config.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection

import orjson

from trawl import crawl_roles, memory, wire
from trawl.clock import Clock, SystemClock
from trawl.config import CrawlConfig
from trawl.config_load import config_json
from trawl.errors import DiskFullError, as_disk_full
from trawl.fetch.dns import DnsCache
from trawl.fetch.hostgate import HostGate
from trawl.fetch.http import Client
from trawl.fetch.robots_wait import ROBOTS_STOP
from trawl.fetch.role import FetchRole
from trawl.frontier.idle import IdleWait, local_wait
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.index.crawling import CrawlIndexing
from trawl.models import Position, UrlStatus
from trawl.parse.role import ParseRole
from trawl.records import CrawlSummary, Snapshot
from trawl.roles import ALL_ROLES, Role
from trawl.space import DiskStop, SpaceGuard
from trawl.stats import RateWindow
from trawl.storage.base import CrawlStore, Frontier, HostLeases
from trawl.storage.blobs import TEXT_LOG, WARC_LOG, BlobStore, LogWriters
from trawl.storage.gate import CommitGate
from trawl.storage.open import disk_full_of
from trawl.telemetry import Telemetry

log = logging.getLogger(__name__)


class Crawl:
    """One crawl over one data directory. ``await crawl.run()`` returns a summary."""

    def __init__(
        self,
        config: CrawlConfig,
        *,
        clock: Clock | None = None,
        telemetry: Telemetry | None = None,
        store: CrawlStore | None = None,
        blobs: BlobStore | None = None,
        client: Client | None = None,
        roles: Collection[Role] = ALL_ROLES,
        writer: str = "",
        leases: HostLeases | None = None,
        waiter: IdleWait | None = None,
    ) -> None:
        """``store``, ``blobs`` and ``client`` default to the data directory's SQLite
        store and files and a real HTTP client; tests and other deployments pass theirs.
        ``roles`` are what this process does; the others' work comes through the store.
        ``writer`` names this process's own segments of each log when many processes
        write one crawl (a fleet's workers); "" is the one writer of a data directory.
        ``leases``: the host leases shared with other crawls (default: the file in
        ``config.politeness_dir``; a fleet passes Redis's).
        ``waiter`` hears of work other processes make (``FleetWait``; its owner closes it)."""
        if not roles:
            raise ValueError("a crawl process needs at least one role")
        self.config = config
        self.clock = clock or SystemClock()
        self.roles = frozenset(roles)
        self.writer = writer
        # Latency histograms and per-host tallies for the service (None: not kept).
        self.telemetry = telemetry
        self._wake = asyncio.Event()
        self._waiter = waiter
        self._client = client
        self._leases = leases
        try:
            config.data_dir.mkdir(parents=True, exist_ok=True)
            # Too little space to start is said before anything is written.
            self._space = SpaceGuard(config.data_dir, config.min_free_space)
            if (low := self._space.check()) is not None:
                raise low
            self._disk = DiskStop(
                config.data_dir, self._space, halt=self._halt, stop=self.request_stop
            )
            self.blobs, self.store = wire.open_storage(config, store=store, blobs=blobs)
        except OSError as exc:
            full = as_disk_full(exc, config.data_dir)
            if full is None:
                raise
            raise full from exc
        self.logs = LogWriters(self.blobs, self.store.committed_logs(), writer)
        self.gate = CommitGate()
        try:
            self._build()
        except BaseException as exc:
            self.logs.abandon()
            self.store.close(commit=False)
            if (
                isinstance(exc, Exception)
                and (full := disk_full_of(exc, config.data_dir)) is not None
            ):
                raise full from exc
            raise
        self._stopping = False
        self._aborting = False
        self._paused = False
        self._started = 0.0
        self._started_at = 0.0  # on the injected clock, for max_duration
        self._rate = RateWindow()
        self._trimmer = memory.Trimmer(every=self.config.memory.trim)
        self.seed_errors: list[str] = []

    def _build(self) -> None:
        c, store, clock = self.config, self.store, self.clock
        self.frontier = store.frontier
        self.counters = store.counters
        self.pages = store.pages
        self.parse_queue = store.parse_queue
        saved_scope = orjson.loads(store.meta.get("scope.hosts") or "[]")
        self.scope = ScopeFilter(c.scope, hosts=saved_scope, allowed=c.allowed_hosts)
        shared = self.roles != ALL_ROLES or bool(self.writer)
        self.admission = wire.admission(c, store, self.scope, clock=clock, shared=shared)
        self.revisits = wire.revisits(c, store, clock, self.admission.ranker)
        self.page_bytes = memory.PageBytes(c.memory.pages)  # bodies and results held
        # The parse role first: the fetch role hands it pages when both run here.
        self.indexing: CrawlIndexing | None = None
        self.parsing: ParseRole | None = None
        self.fetching: FetchRole | None = None
        self.host_gate: HostGate | None = None
        self.fetch_frontier: Frontier = self.frontier
        self.dns: DnsCache | None = None
        deps = crawl_roles.RoleDeps(
            clock=clock,
            logs=self.logs,
            admission=self.admission,
            revisits=self.revisits,
            gate=self.gate,
            page_bytes=self.page_bytes,
            disk=self._disk,
            on_done=self._wake.set,
            telemetry=self.telemetry,
        )
        if Role.PARSE in self.roles:
            p = crawl_roles.parse_side(c, store, deps, blobs=self.blobs, writer=self.writer)
            self.parsing, self.parser, self.parse_options = p.role, p.stage, p.options
            self.texts, self.events, self.links = p.texts, p.events, p.links
            self._events_key = p.events_key
        if Role.FETCH in self.roles:
            f = crawl_roles.fetch_side(
                c,
                store,
                deps,
                client=self._client,
                leases=self._leases,
                hand_off=None if self.parsing is None else self.parsing.submit,
                fleet=self.roles != ALL_ROLES or bool(self.writer),
            )
            self.fetching, self.fetcher, self.client = f.role, f.stage, f.client
            self.host_gate, self.fetch_frontier, self.dns = f.host_gate, f.frontier, f.dns
        if Role.INDEX in self.roles and c.index:
            self.indexing = wire.indexing(c, store, self.blobs, self._disk.stop_for)
            self._space.watch(self.indexing.indexer.index_dir)
        if not self.writer:  # a fleet's workers read the config; its submitter writes it
            store.meta.set("config", config_json(c))

    def commit(self, ends: dict[str, Position] | None = None, *, indexing: bool = True) -> None:
        """One commit: the state with the logs' ends (synced first, or ``ends`` from
        ``CommitGate.flush``: no record referenced before it is on disk); then the index."""
        meta = self.store.meta
        if self.parsing is not None:
            meta.set(self._events_key, str(self.events.next_id))
            if self.links is not None:
                self.links.flush()  # the links of the pages this commit acknowledges
        meta.set("scope.hosts", orjson.dumps(sorted(self.scope.hosts)).decode())
        self.store.commit(self.logs.sync() if ends is None else ends)
        if indexing and self.indexing is not None:
            self.indexing.after_commit()

    # -- control ---------------------------------------------------------------------

    def request_stop(self) -> None:
        """Stop taking new work; finish or release what is in flight (first Ctrl-C)."""
        self._stopping = True
        self._wake.set()

    def pause(self) -> None:
        """Take no new URLs; what is in flight finishes, the process keeps running."""
        self._paused = True
        self._wake.set()

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    def abort(self) -> None:
        """Stop at once (second Ctrl-C); uncommitted work is redone on resume."""
        self._stopping = self._aborting = True
        self._wake.set()

    @property
    def disk_full(self) -> DiskFullError | None:
        """What stopped the run for want of space (a failed write, or the reserve)."""
        return self._disk.full

    def _halt(self) -> None:
        self._stopping = self._aborting = True
        self._wake.set()

    # -- seeds and steering ------------------------------------------------------------

    def add_seeds(self, seeds: list[str]) -> int:
        result, errors = self.admission.seed(seeds, now=self.clock.now())
        self.seed_errors.extend(errors)
        return len(result.added)

    def reconfigure(self, config: CrawlConfig) -> None:
        """Steer the running crawl: ``config``'s limits (max_pages, max_depth,
        max_per_host, max_duration), delay and per-host overrides hold from now on."""
        self.config = config
        self.admission.set_limits(TrapLimits.from_config(config))
        self.frontier.set_max_per_host(config.max_per_host or None)
        self.admission.set_hosts(config.hosts, max_per_host=config.max_per_host or None)
        if self.fetching is not None:
            self.fetcher.set_delay(config.delay)

    # -- the run loop ------------------------------------------------------------------

    async def run(self) -> CrawlSummary:
        self._started = time.monotonic()
        self._started_at = self.clock.now()
        self._rate.start(self._started, self.counters.get("fetch:stored"))
        self._trimmer.start()  # until close(): the shutdown's index batches are trimmed too
        stopped = "done"
        try:
            self.add_seeds(list(self.config.seeds))
            if self.parsing is not None:
                self.parsing.start(self.parse_queue.pending(limit=10**9))
            stopped = await self._run_tasks()
        except Exception as exc:
            if not self._disk.dealt_with(exc):
                raise
        finally:
            await self._shutdown()
        if self.disk_full is not None:
            stopped = "disk full" if self.disk_full.reserve is None else "low disk space"
        return self.summary(stopped)

    async def _run_tasks(self) -> str:
        """The loop and the group committer, in one task group: a commit that fails
        stops the loop at once (and its error is the run's, not an ExceptionGroup)."""
        try:
            async with asyncio.TaskGroup() as group:
                committer = group.create_task(self._commit_loop())
                try:
                    return await self._loop()
                finally:
                    committer.cancel()
        except BaseExceptionGroup as group_error:
            raise group_error.exceptions[0] from None

    def _in_flight(self) -> int:
        return 0 if self.fetching is None else self.fetching.in_flight

    def _backlog(self) -> int:
        return 0 if self.parsing is None else self.parsing.backlog

    def _pages_limit_reached(self) -> bool:
        limit = self.config.max_pages
        if limit is None:
            return False
        return self.counters.get("fetch:stored") + self._in_flight() >= limit

    def _all_done(self, now: float) -> bool:
        """Nothing left to fetch or parse, here or (through the store) anywhere."""
        f = self.frontier
        if f.next_wake(now) is not None or f.next_wake_due() is not None:
            return False
        if self.roles == ALL_ROLES and not self.writer:
            return True  # this process holds all the crawl's work in flight
        # Another process's role may still hold a lease or a queued page.
        counts = f.counts()
        return counts[UrlStatus.IN_FLIGHT] == 0 and len(self.parse_queue) == 0

    async def _loop(self) -> str:
        last_sweep = 0.0
        fetching, parsing, waiter = self.fetching, self.parsing, self._waiter
        # Another process's work comes through the store: look soon, unless it wakes us.
        polling = self.roles != ALL_ROLES or bool(self.writer)
        patience = waiter.max_wait if waiter and fetching else 0.25 if polling else 1.0
        while True:
            c = self.config  # a steered crawl's limits change as it runs (reconfigure)
            if self._stopping:
                return "aborted" if self._aborting else "interrupted"
            now = self.clock.now()
            if c.max_duration is not None and now - self._started_at >= c.max_duration:
                return "max duration"
            if now - last_sweep >= 1.0:
                self.frontier.wake_due(now)
                self.fetch_frontier.reclaim_expired(now)  # and beats the host leases
                last_sweep = now
                if parsing is not None and fetching is not None and polling:
                    parsing.take_over(self.parse_queue)  # a dead worker's pages
            if parsing is not None:
                if fetching is None:
                    parsing.poll(self.parse_queue)
                parsing.feed()
            limit = self._pages_limit_reached()
            paused = self._paused
            while (
                fetching is not None
                and not limit
                and not paused
                and fetching.has_room(c.max_in_flight)
                and (parsing is None or parsing.has_room())
            ):
                lease = self.fetch_frontier.take(now)
                if lease is None:
                    break
                fetching.start(lease)
                limit = self._pages_limit_reached()
            if not self._in_flight() and not self._backlog() and not paused:
                if limit:
                    return "max pages"
                if self._all_done(now):
                    return "done"
                if fetching is not None and fetching.robots_patience_over(now):
                    return ROBOTS_STOP
            full = bool(limit or paused or (fetching and not fetching.has_room(c.max_in_flight)))
            timeout = 1.0 if full else patience  # or until a host or a waiting URL is due:
            for at in () if full else (self.frontier.next_wake(now), self.frontier.next_wake_due()):
                if at is not None:
                    timeout = min(timeout, max(0.0, at - now))
            self._wake.clear()
            if waiter is None:
                await local_wait(self._wake, timeout)
                continue
            idle = not full and not self._in_flight() and not self._backlog()
            await waiter.wait(self._wake, timeout, idle=idle, full=full and not paused)

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.commit_interval)
            try:
                self.commit(await self.gate.flush(self.logs))  # the fsync off the loop
            except Exception as exc:
                if self._disk.dealt_with(exc):
                    return
                raise
            self._disk.check()

    async def _shutdown(self) -> None:
        try:
            if not self._disk.failed:
                try:
                    await self._finish_work()
                except Exception as exc:
                    if not self._disk.dealt_with(exc):
                        raise
            if self._disk.failed:
                await self._drop_work()
        finally:
            if self.parsing is not None:
                self.parsing.shutdown(wait=not self._aborting)
            if self.fetching is not None:
                if self.fetcher.render is not None:
                    await self.fetcher.render.pool.close()
                await self.client.close()
            if self.dns is not None:
                await self.dns.close()
            self._close_leases()

    async def _drop_work(self) -> None:
        """A full disk: cancel everything in flight, write nothing more."""
        if self.fetching is not None:
            await self.fetching.drop()
        if self.parsing is not None:
            await self.parsing.drop()
        if self.indexing is not None:
            await self.indexing.halt()

    async def _finish_work(self) -> None:
        grace = 0.0 if self._aborting else 1.0
        if self.fetching is not None:
            await self.fetching.finish(grace * min(10.0, self.config.timeouts.total))
        if self.parsing is not None:
            await self.parsing.finish(grace * 30.0)
        self.commit()
        if self.indexing is not None:
            # Pages stored but not indexed are indexed now (on abort: at the next start).
            await self.indexing.drain(index_rest=not self._aborting)
            self.commit()

    def close(self) -> None:
        """Close the files and the database (committing, unless the disk is full)."""
        try:
            self._close()
        finally:
            self._trimmer.stop()
            log.debug("heap trims: %d, %.3f CPU-s", self._trimmer.trims, self._trimmer.cpu)

    def _close(self) -> None:
        if not self._disk.failed:
            try:
                if self.indexing is not None:
                    self.indexing.close()
                self.commit(indexing=False)
                self.logs.close()
                self.store.close(commit=False)
                self._close_leases()
                return
            except Exception as exc:
                if not self._disk.dealt_with(exc):
                    with contextlib.suppress(Exception):  # the first error is the one told
                        self._abandon()  # as a crash leaves them: nothing more is kept
                    raise
        self._abandon()

    def _abandon(self) -> None:
        if self.indexing is not None:
            self.indexing.close(abandon=True)
        self.logs.abandon()
        self.store.close(commit=False)
        self._close_leases()

    def _close_leases(self) -> None:
        if self.host_gate is not None:  # what is still held given back, what it opened closed
            self.host_gate.close(self.clock.now(), delay=self.config.delay)

    # -- progress ----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        now, mono = self.clock.now(), time.monotonic()
        return Snapshot.of(
            self.frontier.counts(),
            self.counters.all(),
            elapsed=mono - self._started if self._started else 0.0,
            pages_per_second=self._rate.rate(mono, self.counters.get("fetch:stored")),
            bytes=0 if self.fetching is None else self.fetching.stage.bytes_received,
            hosts_ready=self.frontier.hosts_ready(now),
            hosts_waiting=self.frontier.hosts_waiting(now),
            parse_backlog=self._backlog() if self.parsing else len(self.parse_queue),
        )

    def summary(self, stopped: str) -> CrawlSummary:
        return CrawlSummary(
            error=None if self.disk_full is None else str(self.disk_full),
            stopped=stopped,
            snapshot=self.snapshot(),
            data_dir=str(self.config.data_dir),
            warc_files=self.logs.files(WARC_LOG),
            text_files=self.logs.files(TEXT_LOG),
            seed_errors=tuple(self.seed_errors),
            counters=self.counters.all(),
            robots_waiting=self.fetching.stage.robots_waits.left if self.fetching else (0, 0),
        )


async def run_crawl(config: CrawlConfig) -> CrawlSummary:
    """Run a crawl to its end (the Python API behind ``trawl crawl``)."""
    crawl = Crawl(config)
    try:
        return await crawl.run()
    finally:
        crawl.close()
