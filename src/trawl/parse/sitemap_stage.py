"""What a parsed sitemap file leads to, in the crawler process (the parse role's side).

A worker returns a ``ParsedSitemap`` (``parse/sitemap.py``, pure); here it meets the
durable state: the URLs it lists go to admission (normal form, scope, blocked hosts,
patterns, traps, the seen set, host budgets: the rules links keep) in chunks, each
ranked by its ``lastmod`` (``frontier/sitemaps.py``); with revisits on, a known page
whose ``lastmod`` is newer than its stored fetch is fetched again at once; an index's
sitemaps are offered as items one level deeper, with the grant of the file that
listed them. The file's outcome (URLs listed, new, known, refused and why, its
error) becomes its item's reason, ``PARSED`` (or ``FAILED`` when nothing of it could
be read), and the job is acknowledged in the same commit: a crash before it reads
the file again, whose URLs are then seen, so each is admitted once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterator, Sequence

from trawl import urls
from trawl.clock import Clock
from trawl.errors import UrlError
from trawl.frontier.admission import Admission, Candidate, CounterSink
from trawl.frontier.revisit import Revisits
from trawl.frontier.sitemaps import ENTRY_DEPTH, SitemapRef, lastmod_priority
from trawl.jobs import ParseJob
from trawl.models import UrlStatus
from trawl.parse.sitemap import ParsedSitemap, SitemapEntry, SitemapInput
from trawl.storage.base import Frontier, PageStore, ParseQueue

__all__ = ["SitemapStage"]

ADMIT_CHUNK = 500


class SitemapStage:
    def __init__(
        self,
        *,
        frontier: Frontier,
        admission: Admission,
        pages: PageStore,
        parse_queue: ParseQueue,
        counters: CounterSink,
        clock: Clock,
        revisits: Revisits | None = None,
        strip_tracking: bool = False,
        chunk: int = ADMIT_CHUNK,
    ) -> None:
        self._frontier = frontier
        self._admission = admission
        self._pages = pages
        self._queue = parse_queue
        self._count = counters
        self._clock = clock
        self._revisits = revisits
        self._strip = strip_tracking
        self._chunk = max(1, chunk)

    def input(self, job: ParseJob, body: bytes) -> SitemapInput:
        """What the worker reads: the file's URL, its body, and the grant of its item."""
        ref = SitemapRef.parse(job.url)
        grant = None if ref is None else ref.grant
        return SitemapInput(job.final_url, body, grant=grant, strip_tracking=self._strip)

    def apply(self, seq: int, job: ParseJob, parsed: ParsedSitemap) -> str:
        """Record everything ``parsed`` leads to; returns the reason recorded."""
        steps = self._steps(seq, job, parsed)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                reason: str = done.value
                return reason

    async def apply_async(self, seq: int, job: ParseJob, parsed: ParsedSitemap) -> str:
        """``apply``, giving the event loop a turn between chunks of URLs."""
        steps = self._steps(seq, job, parsed)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                reason: str = done.value
                return reason
            await asyncio.sleep(0)

    def _steps(self, seq: int, job: ParseJob, parsed: ParsedSitemap) -> Generator[None, None, str]:
        tally = _Tally(dict(parsed.refused))
        # The file passes its cash on to the URLs it lists in equal shares, as a page
        # to its links (OPIC; nothing in depth order).
        share = self._admission.ranker.share(job.cash, len(parsed.urls))
        yield from self._offer_urls(parsed.urls, tally, cash=share)
        self._offer_sitemaps(job, parsed.sitemaps, tally)
        count = self._count
        if parsed.kind == "none":
            status, reason = UrlStatus.FAILED, f"sitemap not read: {parsed.error}"
            count.add("sitemap:refused")
        else:
            status, reason = UrlStatus.PARSED, tally.summary(parsed)
            count.add("sitemap:parsed")
        if parsed.problem is not None:
            count.add(f"sitemap:problem:{parsed.problem}")
        host, fp = job.host, job.fp
        self._pages.set_fetch_outcome(host, fp, content_hash=parsed.digest, outcome=reason)
        self._frontier.set_status(host, fp, status, reason=reason)
        if self._revisits is not None and status is UrlStatus.PARSED:
            changed = None if job.revisit is None else job.previous_hash != parsed.digest
            self._revisits.schedule(host, fp, job.revisit, changed=changed)
        self._queue.ack(seq)
        count.add("sitemap:urls listed", len(parsed.urls))
        count.add("sitemap:urls new", tally.new)
        count.add("sitemap:urls known", tally.known)
        for why, n in tally.refused.items():
            count.add(f"sitemap:urls refused:{why}", n)
        return reason

    def _offer_urls(
        self, entries: Sequence[SitemapEntry], tally: _Tally, *, cash: float
    ) -> Iterator[None]:
        now = self._clock.now()
        step = self._chunk
        for start in range(0, len(entries), step):
            if start:
                yield
            chunk = entries[start : start + step]
            result = self._admission.offer(
                [
                    Candidate(
                        e.url,
                        depth=ENTRY_DEPTH,
                        priority=lastmod_priority(e.lastmod, now),
                        cash=cash,
                    )
                    for e in chunk
                ],
                now=now,
            )
            tally.new += len(result.added)
            tally.known += result.seen
            tally.add(result.dropped)
            if self._revisits is not None and result.seen:
                self._changed_since_fetch(chunk, {u.url for u in result.added})

    def _changed_since_fetch(self, chunk: Sequence[SitemapEntry], added: set[str]) -> None:
        """Known pages whose ``lastmod`` is newer than their stored fetch: fetch again."""
        assert self._revisits is not None
        for entry in chunk:
            if entry.lastmod is None or entry.url in added:
                continue
            try:
                host = urls.host_key(entry.url)
            except UrlError:
                continue
            record = self._frontier.lookup(entry.url, host, urls.fingerprint(entry.url))
            if record is None or record.status not in (UrlStatus.PARSED, UrlStatus.WAITING):
                continue
            fetched = self._pages.fetch_of(host, record.fp)
            if fetched is not None and entry.lastmod > fetched.fetched_at:
                self._revisits.expedite(host, record.fp, record.revisit)

    def _offer_sitemaps(
        self, job: ParseJob, entries: Sequence[SitemapEntry], tally: _Tally
    ) -> None:
        if not entries:
            return
        ref = SitemapRef.parse(job.url) or SitemapRef(job.final_url)
        if ref.url != job.final_url:  # redirected: the file is where it answered
            ref = SitemapRef(job.final_url, ref.grant)
        refs = [(ref.child(e.url), job.depth + 1) for e in entries]
        result = self._admission.offer_sitemaps(refs, now=self._clock.now())
        tally.files_new += len(result.added)
        tally.files_known += result.seen
        tally.add(result.dropped)


class _Tally:
    """URLs of one file: new, known, and refused by reason (worker's and admission's)."""

    def __init__(self, refused: dict[str, int]) -> None:
        self.refused = refused
        self.new = 0
        self.known = 0
        self.files_new = 0  # sitemaps an index listed, queued
        self.files_known = 0  # ... and already known (a loop ends here)

    def add(self, dropped: dict[str, int]) -> None:
        for why, n in dropped.items():
            self.refused[why] = self.refused.get(why, 0) + n

    def summary(self, parsed: ParsedSitemap) -> str:
        """``sitemap urlset: 120 URLs, 100 new, 15 known; refused 3 foreign host, ...``:
        every entry the file listed (those the worker refused included)."""
        listed = sum(n for _why, n in parsed.refused)
        if parsed.kind == "index":
            listed += len(parsed.sitemaps)
            new, known = self.files_new, self.files_known
            text = f"sitemap index: {listed:,} sitemaps, {new:,} queued, {known:,} known"
        else:
            listed += len(parsed.urls)
            new, known = self.new, self.known
            text = f"sitemap {parsed.kind}: {listed:,} URLs, {new:,} new, {known:,} known"
        refused = sorted(self.refused.items(), key=lambda kv: (-kv[1], kv[0]))
        if refused:
            text += "; refused " + ", ".join(f"{n:,} {why}" for why, n in refused)
        if parsed.error:
            text += f"; {parsed.error}"
        return text
