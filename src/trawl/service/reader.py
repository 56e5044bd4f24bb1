"""Read-only views of one crawl's store for the API: a page's latest copy, a host.

Everything opens the crawl's database read-only (WAL lets readers beside the running
crawler) and reads WARC and text records at their committed locations, so nothing
here can disturb a crawl. Callers run these in a thread: they do blocking I/O.
"""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path
from typing import Any

import orjson

from trawl import urls
from trawl.archive.warc import read_response
from trawl.config import CrawlConfig
from trawl.errors import StorageError, UrlError
from trawl.fetch.http import decode_content
from trawl.fetch.robots import rules_for_fetch
from trawl.models import UrlStatus
from trawl.parse.charset import decode_html
from trawl.parse.stage import iso_time
from trawl.stats import connect_readonly

BODY_CAP = 256 * 1024  # characters of body text returned with a page


def _read(path: Path, offset: int, length: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def _fetch_row(conn: sqlite3.Connection, url: str) -> tuple[Any, ...] | None:
    host = urls.host_key(url)
    fp = urls.fingerprint(url)
    cols = (
        "url, final_url, status, fetched_at, warc_file, warc_offset, warc_length, "
        "content_hash, outcome"
    )
    # The URL's own fetch (a fingerprint collision moves a URL to a later fingerprint),
    # else the fetch it redirected to, which records it as its origin.
    row = conn.execute(
        f"SELECT {cols} FROM fetches WHERE host=? AND fp>=? AND final_url=? ORDER BY fp LIMIT 1",
        (host, fp, url),
    ).fetchone()
    if row is None:
        row = conn.execute(
            f"SELECT {cols} FROM fetches WHERE url=? ORDER BY fetched_at DESC LIMIT 1", (url,)
        ).fetchone()
    return None if row is None else tuple(row)


def _duplicate_of(outcome: str | None) -> str | None:
    for prefix in ("duplicate of ", "near duplicate of "):
        if outcome and outcome.startswith(prefix):
            return outcome[len(prefix) :]
    return None


def page_copy(directory: Path, raw_url: str, *, body: bool = True) -> dict[str, Any] | None:
    """The latest stored fetch of ``raw_url`` with its metadata, or None if never stored."""
    try:
        url = urls.normalize(raw_url)
    except UrlError:
        return None
    try:
        conn = connect_readonly(directory)
    except StorageError:
        return None
    try:
        row = _fetch_row(conn, url)
        if row is None:
            return None
        first_url, final_url, status, fetched_at, wfile, woff, wlen, chash, outcome = row
        text = None
        if chash is not None:
            text = conn.execute(
                "SELECT text_file, text_offset, text_length, title, language, url FROM pages "
                "WHERE content_hash=?",
                (chash,),
            ).fetchone()
    finally:
        conn.close()
    stored = read_response(_read(directory / "warc" / wfile, woff, wlen))
    out: dict[str, Any] = {
        "url": url,
        "requested_url": first_url,
        "final_url": final_url,
        "status": status,
        "fetch_time": iso_time(float(fetched_at)),
        "headers": [[k, v] for k, v in stored.headers],
        "content_hash": chash,
        "outcome": outcome,
        "duplicate_of": _duplicate_of(outcome),
        "warc": {
            "file": wfile,
            "offset": woff,
            "length": wlen,
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
    if text is not None and text[5] == first_url:
        record = orjson.loads(gzip.decompress(_read(directory / "text" / text[0], *text[1:3])))
        out.update(title=text[3], language=text[4], provenance=record.get("provenance"))
    if body:
        coding = next((v for k, v in stored.headers if k.lower() == "content-encoding"), None)
        decoded, _ = decode_content(stored.body, coding, 16 * BODY_CAP)
        ctype = next((v for k, v in stored.headers if k.lower() == "content-type"), None)
        page_text, _encoding = decode_html(decoded, content_type=ctype)
        out.update(body=page_text[:BODY_CAP], body_truncated=len(page_text) > BODY_CAP)
        out["body_bytes"] = len(decoded)
    return out


def host_view(directory: Path, host: str, config: CrawlConfig) -> dict[str, Any] | None:
    """A host's scheduling, robots.txt and error state, or None if the crawl never met it."""
    try:
        conn = connect_readonly(directory)
    except StorageError:
        return None
    try:
        row = conn.execute(
            "SELECT id, next_at, queued, admitted, budget, priority, demoted_reason "
            "FROM hosts WHERE name=?",
            (host,),
        ).fetchone()
        if row is None:
            return None
        host_id, next_at, queued, admitted, budget, priority, demoted = row
        fetched = conn.execute("SELECT count(*) FROM fetches WHERE host=?", (host,)).fetchone()[0]
        by_status = dict(
            conn.execute(
                "SELECT status, count(*) FROM urls WHERE host_id=? GROUP BY status", (host_id,)
            ).fetchall()
        )
        errors = conn.execute(
            "SELECT reason, count(*) FROM urls WHERE host_id=? AND status IN (?, ?) "
            "GROUP BY reason ORDER BY count(*) DESC LIMIT 20",
            (host_id, int(UrlStatus.FAILED), int(UrlStatus.WAITING)),
        ).fetchall()
        robots = conn.execute(
            "SELECT host, status, body, fetched_at, expires_at, failures, unreachable_since "
            "FROM robots WHERE host IN (?, ?)",
            (f"http://{host}", f"https://{host}"),
        ).fetchall()
    finally:
        conn.close()
    crawl_delays = []
    robots_out = []
    for origin, status, body, fetched_at, expires_at, failures, since in robots:
        rules = rules_for_fetch(status, body, now=fetched_at)
        delay = rules.crawl_delay(config.robots_agents)
        if delay is not None:
            crawl_delays.append(delay)
        robots_out.append(
            {
                "origin": origin,
                "http_status": status,
                "outcome": "unreachable" if since is not None else rules.outcome.value,
                "fetched_at": iso_time(fetched_at),
                "expires_at": iso_time(expires_at),
                "failures": failures,
                "crawl_delay": delay,
            }
        )
    delay = max([config.delay, *(min(d, config.max_crawl_delay) for d in crawl_delays)])
    return {
        "host": host,
        "delay": delay,
        "next_contact": iso_time(next_at) if next_at else None,
        "queued": queued,
        "admitted": admitted,
        "budget": budget,
        "priority": priority,
        "demoted": demoted,
        "pages_fetched": fetched,
        "urls": {UrlStatus(s).label: n for s, n in sorted(by_status.items())},
        "errors": [{"reason": r or "", "count": n} for r, n in errors],
        "robots": robots_out,
    }
