"""``CrawlReader`` over Redis: what the crawl's workers have written, from any process.

The buffered stores (pages, fetches, counters, meta, robots, the parse queue) show
what was committed. The frontier's records show what the workers wrote, committed or
not: its writes are applied when made (``trawl.storage.redis.frontier``). Listings
walk every host (``SSCAN`` of the host sets, ``HSCAN`` of each host's records): an
operator's view, not a per-page call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from trawl import urls
from trawl.dedup.urlrules import UrlRule
from trawl.models import Position, UrlStatus
from trawl.storage.base import FetchRecord, HostView, PageRecord, StoreStats
from trawl.storage.redis.conn import Conn, connect
from trawl.storage.redis.frontier_read import FrontierReads, decode_record
from trawl.storage.redis.keys import Keys, text
from trawl.storage.redis.pages_read import PageReads, decode_fetch
from trawl.storage.redis.queue import backlog
from trawl.storage.redis.small import RedisRobotsStore
from trawl.storage.redis.urlrules import read_rules

LOG_META_PREFIX = "log."


def committed_logs(conn: Conn, keys: Keys) -> dict[str, Position]:
    stored = conn.call("HGETALL", keys.meta)
    return {
        (text(k) or "")[len(LOG_META_PREFIX) :]: Position.load(text(v) or "")
        for k, v in stored.items()
        if (text(k) or "").startswith(LOG_META_PREFIX)
    }


class RedisCrawlReader:
    """Read-only access to a Redis crawl (its own connection)."""

    def __init__(self, url: str, crawl: str, *, buckets: int = 16) -> None:
        self._conn = Conn(connect(url))
        self._keys = Keys(crawl, buckets)
        self._frontier = FrontierReads(self._conn, self._keys, "reader")
        self._pages = PageReads(self._conn, self._keys)

    def _hosts(self) -> Iterator[str]:
        for i in range(self._keys.buckets):
            for host in self._conn.client.sscan_iter(self._keys.hosts(i), count=1000):
                yield text(host) or ""

    def _records(self, host: str) -> Iterator[tuple[int, Any]]:
        for fp, data in self._conn.client.hscan_iter(self._keys.host(host).urls, count=1000):
            yield int(text(fp) or 0), data

    def stats(self) -> StoreStats:
        pipe = self._conn.pipeline()
        pipe.call("HGETALL", self._keys.counters)
        for i in range(self._keys.buckets):
            pipe.call("SCARD", self._keys.hosts(i))
            pipe.call("ZCARD", self._keys.schedule(i))
        counters, *cards = pipe.execute()
        return StoreStats(
            urls=self._frontier.counts(),
            counters={text(k) or "": int(v) for k, v in sorted(counters.items())},
            documents=self._pages.committed_count(),
            parse_backlog=backlog(self._conn, self._keys),
            hosts=sum(int(n) for n in cards[::2]),
            hosts_with_queued=sum(int(n) for n in cards[1::2]),
        )

    def finished(self) -> bool:
        """Nothing scheduled, waiting, leased or left to parse: the fleet's crawl is over.
        Read from the indexes, not from the counts, which may drift (docs/redis.md)."""
        k = self._keys
        pipe = self._conn.pipeline()
        for i in range(k.buckets):
            for key in (k.schedule(i), k.waiting(i), k.leases(i)):
                pipe.call("ZCARD", key)
        pipe.call("XLEN", k.stream)
        return not any(int(n) for n in pipe.execute())

    def url_states(
        self, status: UrlStatus | None = None
    ) -> Iterator[tuple[str, UrlStatus, str | None]]:
        for host in self._hosts():
            for fp, data in self._records(host):
                record = decode_record(host, fp, data)
                if status is None or record.status is status:
                    yield record.url, record.status, record.reason

    def _fetches(self, host: str) -> list[FetchRecord]:
        rows = self._conn.client.hscan_iter(self._keys.host(host).fetches, count=1000)
        return [decode_fetch(host, int(text(fp) or 0), data) for fp, data in rows]

    def fetch_of_url(self, url: str) -> FetchRecord | None:
        host, fp = urls.host_key(url), urls.fingerprint(url)
        fetches = self._fetches(host)
        own = sorted((f for f in fetches if f.fp >= fp and f.final_url == url), key=lambda f: f.fp)
        if own:
            return own[0]
        origin = [f for f in fetches if f.url == url]
        return max(origin, key=lambda f: f.fetched_at) if origin else None

    def page(self, content_hash: str) -> PageRecord | None:
        return self._pages.find_committed(content_hash)

    def pages_of(self, content_hashes: Sequence[str]) -> dict[str, PageRecord]:
        found = self._pages.find_many(list(dict.fromkeys(content_hashes)))
        return {p.content_hash: p for p in found if p is not None}

    def pages(self) -> Iterator[PageRecord]:
        return self._pages.committed_pages()

    def host(self, host: str) -> HostView | None:
        info = self._frontier.host_info(host)
        if info is None:
            return None
        records = [decode_record(host, fp, data) for fp, data in self._records(host)]
        by_status = Counter(r.status for r in records)
        errors = Counter(
            r.reason or "" for r in records if r.status in (UrlStatus.FAILED, UrlStatus.WAITING)
        )
        robots = RedisRobotsStore(self._conn, self._keys)
        found = [robots.load(o) for o in (f"http://{host}", f"https://{host}")]
        return HostView(
            host=host,
            next_at=info.next_at,
            queued=info.queued,
            admitted=info.admitted,
            budget=info.budget,
            priority=info.priority,
            demoted_reason=info.demoted_reason,
            pages_fetched=int(self._conn.call("HLEN", self._keys.host(host).fetches)),
            urls=dict(sorted(by_status.items())),
            errors=sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))[:20],
            robots=[r for r in found if r is not None],
        )

    def fetches_by_host(self) -> dict[str, int]:
        out = {}
        for host in self._hosts():
            n = int(self._conn.call("HLEN", self._keys.host(host).fetches))
            if n:
                out[host] = n
        return out

    def failed_by_host(self) -> dict[str, int]:
        out = {}
        for host in self._hosts():
            n = int(
                self._conn.call("HGET", self._keys.host(host).host, f"s{int(UrlStatus.FAILED)}")
                or 0
            )
            if n:
                out[host] = n
        return out

    def committed_logs(self) -> dict[str, Position]:
        return committed_logs(self._conn, self._keys)

    def meta(self, key: str) -> str | None:
        return text(self._conn.call("HGET", self._keys.meta, key))

    def url_rules(self, host: str | None = None) -> list[UrlRule]:
        if host is not None:
            return read_rules(self._conn, self._keys, [host])
        hosts = self._conn.call("SMEMBERS", self._keys.rule_hosts)
        return read_rules(self._conn, self._keys, (text(h) or "" for h in hosts))

    def close(self) -> None:
        self._conn.close()
