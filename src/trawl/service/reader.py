"""Read-only views of one crawl's store for the API: a page's latest copy, a host.

Everything goes through the read-only ``CrawlReader`` and the ``BlobStore`` (readers run
beside the running crawler) and reads records at their committed locations, so nothing
here can disturb a crawl. Callers run these in a thread: they do blocking I/O.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from trawl import urls
from trawl.archive.textstore import decode_record
from trawl.archive.warc import read_response
from trawl.config import CrawlConfig
from trawl.errors import StorageError, UrlError
from trawl.fetch.http import decode_content
from trawl.fetch.robots import rules_for_fetch
from trawl.jobs import ParseOutcome
from trawl.parse.charset import decode_html
from trawl.parse.stage import iso_time
from trawl.stats import rule_views
from trawl.storage.blobs import TEXT_LOG, WARC_LOG
from trawl.storage.open import has_host_leases, open_host_leases
from trawl.storage.place import CrawlPlace

BODY_CAP = 256 * 1024  # characters of body text returned with a page


def _duplicate_of(outcome: str | None) -> str | None:
    parsed = ParseOutcome.parse(outcome) if outcome else None
    return parsed.duplicate_of if parsed is not None else None


def _place(where: Path | CrawlPlace) -> CrawlPlace:
    return where if isinstance(where, CrawlPlace) else CrawlPlace(data=where)


def page_copy(
    where: Path | CrawlPlace, raw_url: str, *, body: bool = True
) -> dict[str, Any] | None:
    """The latest stored fetch of ``raw_url`` (or of it without tracking parameters)
    with its metadata, or None if never stored (``where``: a data directory, or a
    crawl in Redis)."""
    try:
        url = urls.normalize(raw_url)
    except UrlError:
        return None
    place = _place(where)
    try:
        reader = place.reader()
    except StorageError:
        return None
    try:
        fetch = reader.fetch_of_url(url)
        if fetch is None and urls.without_tracking(url) != url:
            # The crawl dropped its tracking parameters (unless it kept them).
            url = urls.without_tracking(url)
            fetch = reader.fetch_of_url(url)
        if fetch is None:
            return None
        page = reader.page(fetch.content_hash) if fetch.content_hash is not None else None
    finally:
        reader.close()
    blobs = place.blob_store()
    stored = read_response(blobs.read(WARC_LOG, fetch.warc))
    w = fetch.warc
    out: dict[str, Any] = {
        "url": url,
        "requested_url": fetch.url,
        "final_url": fetch.final_url,
        "status": fetch.status,
        "fetch_time": iso_time(float(fetch.fetched_at)),
        "headers": [[k, v] for k, v in stored.headers],
        "content_hash": fetch.content_hash,
        "outcome": fetch.outcome,
        "duplicate_of": _duplicate_of(fetch.outcome),
        "warc": {
            "file": w.file,
            "offset": w.offset,
            "length": w.length,
            "record_id": stored.record_id,
            "payload_digest": stored.payload_digest,
        },
        "title": None,
        "language": None,
        "provenance": None,
        "body": None,
        "body_bytes": len(stored.body),
        "body_truncated": False,
    }
    if page is not None and page.url == fetch.url:
        record = decode_record(blobs.read(TEXT_LOG, page.text), page.text)
        out.update(title=page.title, language=page.language, provenance=record.get("provenance"))
    if body:
        coding = next((v for k, v in stored.headers if k.lower() == "content-encoding"), None)
        decoded, _ = decode_content(stored.body, coding, 16 * BODY_CAP)
        ctype = next((v for k, v in stored.headers if k.lower() == "content-type"), None)
        page_text, _encoding = decode_html(decoded, content_type=ctype)
        out.update(body=page_text[:BODY_CAP], body_truncated=len(page_text) > BODY_CAP)
        out["body_bytes"] = len(decoded)
    return out


def host_view(where: Path | CrawlPlace, host: str, config: CrawlConfig) -> dict[str, Any] | None:
    """A host's scheduling, robots.txt and error state, or None if the crawl never met it."""
    try:
        reader = _place(where).reader()
    except StorageError:
        return None
    try:
        view = reader.host(host)
        learned = reader.url_rules(host)
    finally:
        reader.close()
    if view is None:
        return None
    crawl_delays = []
    robots_out = []
    for r in view.robots:
        rules = rules_for_fetch(r.status, r.body, now=r.fetched_at)
        outcome = "unreachable" if r.unreachable_since is not None else rules.outcome.value
        delay = rules.crawl_delay(config.robots_agents)
        if delay is not None:
            crawl_delays.append(delay)
        robots_out.append(
            {
                "origin": r.host,
                "http_status": r.status,
                "outcome": outcome,
                "fetched_at": iso_time(r.fetched_at),
                "expires_at": iso_time(r.expires_at),
                "failures": r.failures,
                "crawl_delay": delay,
            }
        )
    delay = max([config.delay, *(min(d, config.max_crawl_delay) for d in crawl_delays)])
    return {
        "host": host,
        "delay": delay,
        "next_contact": iso_time(view.next_at) if view.next_at else None,
        "queued": view.queued,
        "admitted": view.admitted,
        "budget": view.budget,
        "priority": view.priority,
        "demoted": view.demoted_reason,
        "pages_fetched": view.pages_fetched,
        "urls": {s.label: n for s, n in sorted(view.urls.items())},
        "errors": [{"reason": r, "count": n} for r, n in view.errors],
        "robots": robots_out,
        "equivalences": rule_views(learned),
    }


def shared_host(politeness_dir: Path, host: str) -> dict[str, Any] | None:
    """The host in the leases every crawl of the server shares (None: never leased)."""
    if not has_host_leases(politeness_dir):
        return None
    try:
        leases = open_host_leases(politeness_dir)
    except StorageError:
        return None
    try:
        now = time.time()
        found = leases.get(host, now)
    finally:
        leases.close()
    if found is None:
        return None
    return {
        "busy": found.holder is not None,
        "next_contact": iso_time(found.next_at) if found.next_at > now else None,
        "gap": found.gap,
    }
