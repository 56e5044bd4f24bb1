"""The parse stage's second half, in the crawler process: what a parsed page leads to.

Workers return a ``ParsedPage``; here it meets the durable state, in this order:
canonical (a page that names another URL as canonical is not kept; that URL is
offered instead), exact-duplicate check (a text already kept is recorded as a
duplicate of its first URL, stored once, and its links are not followed), noindex
(text not kept), nofollow (links not offered), the text record, the links. Then the
page leaves the parse queue. All of it commits together, so a crash before the
commit simply parses the page again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from trawl.archive.events import EventLog
from trawl.archive.segments import Location
from trawl.archive.textstore import TextStore
from trawl.clock import Clock
from trawl.frontier.admission import Admission, Candidate, CounterSink
from trawl.models import UrlStatus
from trawl.parse.page import ParsedPage
from trawl.storage.base import Frontier, PageRecord, PageStore, ParseQueue


def iso_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ParseStage:
    def __init__(
        self,
        *,
        frontier: Frontier,
        admission: Admission,
        pages: PageStore,
        parse_queue: ParseQueue,
        texts: TextStore,
        counters: CounterSink,
        clock: Clock,
        events: EventLog | None = None,
    ) -> None:
        self._frontier = frontier
        self._admission = admission
        self._pages = pages
        self._queue = parse_queue
        self._texts = texts
        self._count = counters
        self._clock = clock
        self._events = events
        self.documents = 0

    def apply(self, seq: int, job: dict[str, Any], page: ParsedPage) -> str:
        """Record everything ``page`` leads to; returns the outcome (for logs and tests)."""
        outcome = self._apply(job, page)
        host, fp = job["host"], job["fp"]
        self._pages.set_fetch_outcome(
            host,
            fp,
            content_hash=page.content_hash,
            outcome=outcome,
        )
        self._frontier.set_status(host, fp, UrlStatus.PARSED, reason=outcome)
        self._queue.ack(seq)
        self._count.add("parse:" + outcome.split(" ", 1)[0])
        self._publish(job, page, outcome)
        return outcome

    def _publish(self, job: dict[str, Any], page: ParsedPage, outcome: str) -> None:
        """A new page, or a known one whose text changed, becomes an event."""
        if self._events is None:
            return
        previous = job.get("previous_hash")
        if previous is None:
            kind = "page.new"
        elif previous != page.content_hash:
            kind = "page.changed"
        else:
            return
        self._events.publish(
            kind,
            {
                "time": iso_time(self._clock.now()),
                "url": job["url"],
                "final_url": job["final_url"],
                "status": int(job["status"]),
                "outcome": outcome,
                "content_hash": page.content_hash,
                "cluster": page.content_hash,
                "warc": dict(zip(("file", "offset", "length"), job["warc"], strict=True)),
                "fetched_at": iso_time(float(job["fetched_at"])),
            },
        )

    def _apply(self, job: dict[str, Any], page: ParsedPage) -> str:
        now = self._clock.now()
        depth = int(job["depth"])
        if page.error:
            return f"error {page.error}"
        final_url = job["final_url"]
        if page.canonical and page.canonical != final_url:
            result = self._admission.offer([Candidate(page.canonical, depth=depth)], now=now)
            if result.added or result.seen:
                return f"canonical {page.canonical}"
            # A canonical we may not crawl (out of scope, a trap) is ignored.
        if page.content_hash is not None:
            first = self._pages.find(page.content_hash)
            if first is not None:
                self._pages.count_duplicate(page.content_hash)
                return f"duplicate of {first.url}"
        if not page.nofollow and page.links:
            self._admission.offer(
                [Candidate(link, depth=depth + 1) for link in page.links], now=now
            )
        if page.noindex:
            return "noindex"
        if page.content_hash is None:
            return "no text"
        warc = Location(*job["warc"])
        record = {
            "id": page.content_hash[:32],
            "url": job["url"],
            "final_url": final_url,
            "fetch_time": iso_time(float(job["fetched_at"])),
            "status": int(job["status"]),
            "title": page.title,
            "text": page.text,
            "language": page.language,
            "language_confidence": page.language_confidence,
            "content_hash": page.content_hash,
            "depth": depth,
            "warc": {"file": warc.file, "offset": warc.offset, "length": warc.length},
        }
        text_at = self._texts.append(record)
        self._pages.add(
            PageRecord(
                content_hash=page.content_hash,
                url=job["url"],
                host=job["host"],
                fp=int(job["fp"]),
                fetched_at=float(job["fetched_at"]),
                title=page.title,
                language=page.language,
                warc=warc,
                text=text_at,
            )
        )
        self.documents += 1
        return "stored"
