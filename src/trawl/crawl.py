"""The composition root: builds a crawl from its config and runs it to the end.

Everything is wired here and nowhere else. The run loop hands leases from the
frontier to fetch tasks (as many as ``max_in_flight``; one per host at a time is the
frontier's guarantee), sends stored pages to the parse workers, applies their
results, and commits everything in groups every ``commit_interval`` seconds. Work is
acknowledged only in a commit that also holds its outputs, so a kill -9 at any moment
loses nothing: on the next run, leases come back, unparsed pages are parsed from
their WARC records, and files are cut back to what the last commit references.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time

import orjson

from trawl import urls
from trawl.archive.events import EventLog
from trawl.archive.textstore import TextStore
from trawl.archive.warc import WarcWriter
from trawl.clock import Clock, SystemClock
from trawl.config import CrawlConfig
from trawl.dedup.hostdups import HostDupTracker
from trawl.dedup.minhash import MinHasher
from trawl.errors import DiskFullError, UrlError, as_disk_full
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsCache
from trawl.fetch.http import HttpClient
from trawl.fetch.politeness import Politeness
from trawl.fetch.robots_cache import RobotsCache
from trawl.fetch.stage import Client, FetchPolicy, FetchStage
from trawl.fetch.tdm_cache import TdmCache
from trawl.frontier.admission import Admission, Candidate
from trawl.frontier.revisit import Revisits
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.index.crawling import CrawlIndexing
from trawl.models import Lease, UrlStatus
from trawl.parse.page import ParseOptions
from trawl.parse.role import ParseRole
from trawl.parse.stage import IndexNearCheck, KeepPolicy, ParseStage
from trawl.records import CrawlSummary, Snapshot
from trawl.space import SpaceGuard
from trawl.stats import RateWindow
from trawl.storage.base import CrawlStore
from trawl.storage.blobs import EVENT_LOG, TEXT_LOG, WARC_LOG, BlobStore, LogSpec, SegmentWriter
from trawl.storage.open import open_blobs, open_store, state_path
from trawl.telemetry import Telemetry

_EVENTS_MAX_BYTES = 64 * 1024 * 1024


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
    ) -> None:
        """``store``, ``blobs`` and ``client`` default to the data directory's SQLite
        store and files and a real HTTP client; tests and other deployments pass theirs."""
        self.config = config
        self.clock = clock or SystemClock()
        self._logs: list[SegmentWriter] = []
        self._client = client
        # What stopped the run for want of space (a failed write, or the reserve).
        self.disk_full: DiskFullError | None = None
        self._write_failed = False  # a write found the disk full: write nothing more
        try:
            config.data_dir.mkdir(parents=True, exist_ok=True)
            # Too little space to start is said before anything is written.
            self._space = SpaceGuard(config.data_dir, config.min_free_space)
            if (low := self._space.check()) is not None:
                raise low
            self.store = (
                store
                if store is not None
                else open_store(
                    config.data_dir,
                    max_per_host=config.max_per_host or None,
                    lease_seconds=config.timeouts.total * 2 + 60,
                )
            )
        except OSError as exc:
            full = as_disk_full(exc, config.data_dir)
            if full is None:
                raise
            raise full from exc
        try:
            self._build(blobs)
        except BaseException as exc:
            for log in self._logs:
                log.abandon()
            self.store.close(commit=False)
            if isinstance(exc, Exception) and (full := self._as_disk_full(exc)) is not None:
                raise full from exc
            raise
        self._space.watch(self.indexing.indexer.index_dir)
        self._stopping = False
        self._aborting = False
        self._paused = False
        # Latency histograms and per-host tallies for the service (None: not kept).
        self.telemetry = telemetry
        self._wake = asyncio.Event()
        self._fetching: dict[asyncio.Task[None], Lease] = {}
        self._started = 0.0
        self._rate = RateWindow()
        self.seed_errors: list[str] = []

    def _open_log(self, spec: LogSpec, max_bytes: int) -> SegmentWriter:
        log = self.blobs.open_writer(
            spec, committed=self.store.committed_logs().get(spec.name), max_bytes=max_bytes
        )
        self._logs.append(log)
        return log

    def _build(self, blobs: BlobStore | None) -> None:
        c, store, clock = self.config, self.store, self.clock
        self.blobs = blobs if blobs is not None else open_blobs(c.data_dir, fsync=c.fsync)
        self.frontier = store.frontier
        self.counters = store.counters
        self.pages = store.pages
        self.parse_queue = store.parse_queue
        self.warc_log = self._open_log(WARC_LOG, c.warc_max_bytes)
        self.text_log = self._open_log(TEXT_LOG, c.text_max_bytes)
        self.events_log = self._open_log(EVENT_LOG, _EVENTS_MAX_BYTES)
        self.events = EventLog(self.events_log, next_id=int(store.meta.get("events.next_id") or 1))
        self.warc = WarcWriter(self.warc_log, operator=c.contact)
        self.texts = TextStore(self.text_log)
        saved_scope = orjson.loads(store.meta.get("scope.hosts") or "[]")
        self.scope = ScopeFilter(c.scope, hosts=saved_scope, allowed=c.allowed_hosts)
        self.admission = Admission(
            frontier=self.frontier,
            scope=self.scope,
            limits=TrapLimits.from_config(c),
            counters=self.counters,
            strip_tracking=c.strip_tracking,
        )
        self.guard = AddressGuard(c.allow_networks)
        self.dns: DnsCache | None = None
        if self._client is None:
            self.dns = DnsCache(
                guard=self.guard,
                clock=clock,
                overrides=c.resolve,
                min_ttl=c.dns_min_ttl,
                max_ttl=c.dns_max_ttl,
            )
            self._client = HttpClient(
                dns=self.dns,
                user_agent=c.user_agent,
                timeouts=c.timeouts,
                max_body_bytes=c.max_body_bytes,
                clock=clock,
                max_connections=max(64, c.max_in_flight * 2),
            )
        self.client: Client = self._client
        self.politeness = Politeness(
            delay=c.delay, max_crawl_delay=c.max_crawl_delay, max_backoff=c.max_backoff_delay
        )
        self.tdm = TdmCache(store.origin_files)
        self.revisits = (
            None
            if c.recrawl is None
            else Revisits(
                frontier=self.frontier,
                clock=clock,
                counters=self.counters,
                initial=c.recrawl,
                minimum=c.recrawl_min,
                maximum=c.recrawl_max,
            )
        )
        self.robots = RobotsCache(
            store.robots, retry_base=c.robots_retry_base, retry_cap=c.robots_retry_max
        )
        self.fetcher = FetchStage(
            client=self.client,
            robots=self.robots,
            politeness=self.politeness,
            frontier=self.frontier,
            admission=self.admission,
            warc=self.warc,
            pages=self.pages,
            parse_queue=self.parse_queue,
            counters=self.counters,
            clock=clock,
            policy=FetchPolicy(
                agents=c.robots_agents,
                max_attempts=c.max_attempts,
                retry_base=c.retry_base,
                retry_max=c.retry_max,
                max_redirects=c.max_redirects,
                tdmrep=c.honour_ai_opt_outs,
            ),
            tdm=self.tdm,
            revisits=self.revisits,
        )
        hasher = MinHasher() if c.near_duplicates else None
        near = None if hasher is None else IndexNearCheck(store.near_index(hasher))
        self.parser = ParseStage(
            frontier=self.frontier,
            admission=self.admission,
            pages=self.pages,
            parse_queue=self.parse_queue,
            texts=self.texts,
            counters=self.counters,
            clock=clock,
            events=self.events,
            policy=KeepPolicy(
                training=c.honour_ai_opt_outs, agents=c.robots_agents, quality=c.quality
            ),
            near=near,
            host_dups=HostDupTracker(),
            revisits=self.revisits,
        )
        # After the parse stage: its stored-page count decides when a batch is due.
        self.indexing = CrawlIndexing(
            pages=self.pages,
            blobs=self.blobs,
            index_dir=c.data_dir / "index",
            counters=self.counters,
            stored=lambda: self.parser.documents,
            on_disk_full=self._stop_for,
        )
        self.parse_options = ParseOptions(
            agents=c.robots_agents,
            follow_nofollow_links=c.follow_nofollow_links,
            strip_tracking=c.strip_tracking,
            quality=c.purpose == "training" or c.quality.active,
            near=hasher,
            max_links=c.max_links_per_page,
        )
        self.parsing = ParseRole(
            stage=self.parser,
            options=self.parse_options,
            workers=c.parse_workers,
            warc=self.warc_log,
            max_body_bytes=c.max_body_bytes,
            counters=self.counters,
            on_done=lambda: self._wake.set(),
            on_error=self._full_disk,
            writable=lambda: not self._write_failed,
            latency=self._parse_latency,
        )
        store.meta.set("config", config_json(c))

    def _parse_latency(self, seconds: float) -> None:
        if self.telemetry is not None:
            self.telemetry.parse_latency.observe(seconds)

    def commit(self, *, indexing: bool = True) -> None:
        """Make everything done so far durable in one commit of the store: the state
        with the logs' ends (flushed first), so a record is never referenced before it
        is on disk; then let the index take the pages it made durable."""
        meta = self.store.meta
        meta.set("events.next_id", str(self.events.next_id))
        meta.set("scope.hosts", orjson.dumps(sorted(self.scope.hosts)).decode())
        logs = {
            WARC_LOG.name: self.warc_log.sync(),
            TEXT_LOG.name: self.text_log.sync(),
            EVENT_LOG.name: self.events_log.sync(),
        }
        self.store.commit(logs)
        if indexing:
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

    # -- a full disk -------------------------------------------------------------------

    def _as_disk_full(self, exc: Exception) -> DiskFullError | None:
        # A file's own error names it; SQLite's names nothing: it is the database.
        chain = (exc, exc.__cause__, exc.__context__)
        db_error = any(isinstance(e, sqlite3.Error) for e in chain)
        where = state_path(self.config.data_dir) if db_error else self.config.data_dir
        return as_disk_full(exc, where)

    def _stop_for(self, full: DiskFullError) -> None:
        """A write found the disk full: stop at once and write nothing more, not even
        a last commit. What was written since the last commit is redone on resume,
        as after kill -9 (files are cut back to the committed positions on open)."""
        if not self._write_failed:
            self.disk_full = full  # also over the reserve's earlier, gentler stop
        self._write_failed = True
        self._stopping = self._aborting = True
        self._wake.set()

    def _full_disk(self, exc: Exception) -> bool:
        """True if ``exc`` is a full disk, or comes after one: the caller gives up
        its work instead of recording anything. Other errors are the caller's."""
        full = self._as_disk_full(exc)
        if full is not None:
            self._stop_for(full)
        return self._write_failed

    def _check_space(self) -> None:
        """Below the reserve: stop cleanly (in-flight work finishes and is committed)."""
        if self.disk_full is None and (low := self._space.check()) is not None:
            self.disk_full = low
            self.request_stop()

    # -- seeds -------------------------------------------------------------------------

    def add_seeds(self, seeds: list[str]) -> int:
        candidates = []
        for raw in seeds:
            try:
                url = urls.normalize(raw.strip(), strip_tracking=self.config.strip_tracking)
            except UrlError as exc:
                self.seed_errors.append(f"{raw}: {exc.reason}")
                continue
            self.scope.add_host(urls.host_key(url))
            candidates.append(Candidate(url, depth=0))
        result = self.admission.offer(candidates, now=self.clock.now())
        return len(result.added)

    # -- the run loop ------------------------------------------------------------------

    async def run(self) -> CrawlSummary:
        self._started = time.monotonic()
        self._rate.start(self._started, self.counters.get("fetch:stored"))
        committer: asyncio.Task[None] | None = None
        stopped = "done"
        try:
            self.add_seeds(list(self.config.seeds))
            self.parsing.start(self.parse_queue.pending(limit=10**9))
            committer = asyncio.create_task(self._commit_loop())
            stopped = await self._loop()
        except Exception as exc:
            if not self._full_disk(exc):
                raise
        finally:
            if committer is not None:
                committer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await committer
            await self._shutdown()
        if self.disk_full is not None:
            stopped = "disk full" if self.disk_full.reserve is None else "low disk space"
        return self.summary(stopped)

    def _pages_limit_reached(self) -> bool:
        limit = self.config.max_pages
        if limit is None:
            return False
        return self.counters.get("fetch:stored") + len(self._fetching) >= limit

    async def _loop(self) -> str:
        c = self.config
        backlog_cap = max(64, 32 * max(1, c.parse_workers))
        last_sweep = 0.0
        while True:
            if self._stopping:
                return "aborted" if self._aborting else "interrupted"
            now = self.clock.now()
            if c.max_duration is not None and time.monotonic() - self._started >= c.max_duration:
                return "max duration"
            if now - last_sweep >= 1.0:
                self.frontier.wake_due(now)
                self.frontier.reclaim_expired(now)
                last_sweep = now
            self.parsing.feed(backlog_cap)
            limit = self._pages_limit_reached()
            paused = self._paused
            while (
                not limit
                and not paused
                and len(self._fetching) < c.max_in_flight
                and len(self.parsing.tasks) < backlog_cap
            ):
                lease = self.frontier.take(now)
                if lease is None:
                    break
                task = asyncio.create_task(self._fetch(lease))
                self._fetching[task] = lease
                limit = self._pages_limit_reached()
            if not self._fetching and not self.parsing.backlog and not paused:
                if limit:
                    return "max pages"
                if self.frontier.next_wake(now) is None and self.frontier.next_wake_due() is None:
                    return "done"
            timeout = 1.0
            wake_at = self.frontier.next_wake(now)
            due_at = self.frontier.next_wake_due()
            for at in (wake_at, due_at):
                if at is not None:
                    timeout = min(timeout, max(0.0, at - now))
            if limit or paused or len(self._fetching) >= c.max_in_flight:
                timeout = 1.0
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=max(timeout, 0.001))

    async def _fetch(self, lease: Lease) -> None:
        started = time.monotonic()
        task = None
        try:
            task = await self.fetcher.process(lease)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must not stop the crawl: record and go on
            if not self._full_disk(exc):
                self._internal_error(lease, exc)
        finally:
            current = asyncio.current_task()
            if current is not None:
                self._fetching.pop(current, None)
            self._wake.set()
            if self.telemetry is not None:
                record = self.frontier.get(lease.host, lease.fp)
                self.telemetry.fetch_done(
                    lease.host, record.status if record else None, time.monotonic() - started
                )
        if task is not None and not self._write_failed:
            self.parsing.submit(task)

    def _internal_error(self, lease: Lease, exc: Exception) -> None:
        try:
            self.counters.add("error:internal")
            self.frontier.finish(
                lease,
                UrlStatus.FAILED,
                reason=f"internal error: {type(exc).__name__}: {exc}",
                host_ready_at=self.clock.now() + self.config.delay,
            )
        except Exception as again:
            if not self._full_disk(again):
                raise

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.commit_interval)
            try:
                self.commit()
            except Exception as exc:
                if self._full_disk(exc):
                    return
                raise
            self._check_space()

    async def _shutdown(self) -> None:
        try:
            if not self._write_failed:
                try:
                    await self._finish_work()
                except Exception as exc:
                    if not self._full_disk(exc):
                        raise
            if self._write_failed:
                await self._drop_work()
        finally:
            self.parsing.shutdown(wait=not self._aborting)
            await self.client.close()
            if self.dns is not None:
                await self.dns.close()

    async def _drop_work(self) -> None:
        """A full disk: cancel everything in flight, write nothing more."""
        tasks = [*self._fetching, *self.parsing.tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._fetching.clear()
        await self.indexing.halt()

    async def _finish_work(self) -> None:
        grace = 0.0 if self._aborting else min(10.0, self.config.timeouts.total)
        if self._fetching:
            _done, pending = await asyncio.wait(list(self._fetching), timeout=grace or None)
            if grace == 0.0:
                pending = set(self._fetching)
            for task in pending:
                task.cancel()
            for task in pending:
                lease = self._fetching.pop(task, None)
                if lease is not None:
                    self.frontier.requeue(lease, host_ready_at=self.clock.now())
        if self.parsing.tasks and not self._aborting:
            await asyncio.wait(list(self.parsing.tasks), timeout=30)
        for task in list(self.parsing.tasks):
            task.cancel()
        await asyncio.gather(*self._fetching, *self.parsing.tasks, return_exceptions=True)
        self.commit()
        # Pages stored but not indexed are indexed now (on abort: at the next start).
        await self.indexing.drain(index_rest=not self._aborting)
        self.commit()

    def close(self) -> None:
        """Close the files and the database (committing, unless the disk is full)."""
        if not self._write_failed:
            try:
                self.indexing.close()
                self.commit(indexing=False)
                for log in self._logs:
                    log.close()
                self.store.close(commit=False)
                return
            except Exception as exc:
                if not self._full_disk(exc):
                    raise
        self.indexing.close(abandon=True)
        for log in self._logs:
            log.abandon()
        self.store.close(commit=False)

    # -- progress ----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        counts = self.frontier.counts()
        now = self.clock.now()
        stored = self.counters.get("fetch:stored")
        mono = time.monotonic()
        rate = self._rate.rate(mono, stored)
        errors = sum(v for k, v in self.counters.all().items() if k.startswith("error:"))
        return Snapshot(
            elapsed=mono - self._started if self._started else 0.0,
            known=sum(counts.values()),
            queued=counts[UrlStatus.QUEUED],
            in_flight=counts[UrlStatus.IN_FLIGHT],
            waiting=counts[UrlStatus.WAITING],
            fetched=counts[UrlStatus.FETCHED] + counts[UrlStatus.PARSED],
            parsed=counts[UrlStatus.PARSED],
            failed=counts[UrlStatus.FAILED],
            skipped=counts[UrlStatus.SKIPPED],
            redirected=counts[UrlStatus.REDIRECTED],
            documents=self.counters.get("parse:stored"),
            duplicates=self.counters.get("parse:duplicate"),
            pages_per_second=rate,
            bytes=self.fetcher.bytes_received,
            errors=errors,
            hosts_ready=self.frontier.hosts_ready(now),
            hosts_waiting=self.frontier.hosts_waiting(now),
            parse_backlog=self.parsing.backlog,
        )

    def summary(self, stopped: str) -> CrawlSummary:
        return CrawlSummary(
            error=None if self.disk_full is None else str(self.disk_full),
            stopped=stopped,
            snapshot=self.snapshot(),
            data_dir=str(self.config.data_dir),
            warc_files=tuple(self.blobs.locate(WARC_LOG, s) for s in self.blobs.segments(WARC_LOG)),
            text_files=tuple(self.blobs.locate(TEXT_LOG, s) for s in self.blobs.segments(TEXT_LOG)),
            seed_errors=tuple(self.seed_errors),
            counters=self.counters.all(),
        )


def config_json(config: CrawlConfig) -> str:
    """The config as JSON (stored in the data directory so ``--resume`` can reuse it)."""
    from dataclasses import asdict

    data = asdict(config)
    data["data_dir"] = str(config.data_dir)
    data["allow_networks"] = [str(n) for n in config.allow_networks]
    data["resolve"] = dict(config.resolve)
    return orjson.dumps(data).decode()


async def run_crawl(config: CrawlConfig) -> CrawlSummary:
    """Run a crawl to its end (the Python API behind ``trawl crawl``)."""
    crawl = Crawl(config)
    try:
        return await crawl.run()
    finally:
        crawl.close()
