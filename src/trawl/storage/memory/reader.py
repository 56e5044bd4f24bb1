"""``CrawlReader`` over a ``MemoryDisk``: what the last commit made durable, nothing else."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from trawl import urls
from trawl.dedup.urlrules import UrlRule
from trawl.models import Position, UrlStatus
from trawl.storage.base import FetchRecord, HostView, PageRecord, StoreStats
from trawl.storage.memory.state import LOG_META_PREFIX, MemoryDisk, MemoryState
from trawl.storage.memory.urlrules import sorted_rules


class MemoryCrawlReader:
    """Each call reads the disk's committed state as it is at that moment."""

    def __init__(self, disk: MemoryDisk) -> None:
        self._disk = disk

    @property
    def _s(self) -> MemoryState:
        return self._disk.committed

    def stats(self) -> StoreStats:
        s = self._s
        hosts = s.frontier.hosts.values()
        return StoreStats(
            urls={status: s.frontier.counts.get(status, 0) for status in UrlStatus},
            counters=dict(sorted(s.counters.items())),
            documents=len(s.pages),
            parse_backlog=len(s.parse_queue.jobs),
            hosts=len(s.frontier.hosts),
            hosts_with_queued=sum(1 for h in hosts if h.queued > 0),
        )

    def url_states(
        self, status: UrlStatus | None = None
    ) -> Iterator[tuple[str, UrlStatus, str | None]]:
        for rows in list(self._s.frontier.urls.values()):
            for row in list(rows.values()):
                if status is None or row.status is status:
                    yield row.url, row.status, row.reason

    def fetch_of_url(self, url: str) -> FetchRecord | None:
        host, fp = urls.host_key(url), urls.fingerprint(url)
        fetches = list(self._s.fetches.values())
        own = sorted(
            (f for f in fetches if f.host == host and f.fp >= fp and f.final_url == url),
            key=lambda f: f.fp,
        )
        if own:
            return own[0]
        origin = [f for f in fetches if f.url == url]
        return max(origin, key=lambda f: f.fetched_at) if origin else None

    def page(self, content_hash: str) -> PageRecord | None:
        return self._s.pages.get(content_hash)

    def pages_of(self, content_hashes: Sequence[str]) -> dict[str, PageRecord]:
        pages = self._s.pages
        return {h: pages[h] for h in content_hashes if h in pages}

    def pages(self) -> Iterator[PageRecord]:
        yield from list(self._s.pages.values())

    def host(self, host: str) -> HostView | None:
        s = self._s
        row = s.frontier.hosts.get(host)
        if row is None:
            return None
        records = list(s.frontier.urls.get(host, {}).values())
        by_status = Counter(r.status for r in records)
        errors = Counter(
            r.reason or "" for r in records if r.status in (UrlStatus.FAILED, UrlStatus.WAITING)
        )
        robots = [s.robots[o] for o in (f"http://{host}", f"https://{host}") if o in s.robots]
        return HostView(
            host=host,
            next_at=row.next_at,
            queued=row.queued,
            admitted=row.admitted,
            budget=row.budget,
            priority=row.priority,
            demoted_reason=row.demoted_reason,
            pages_fetched=sum(1 for f in s.fetches.values() if f.host == host),
            urls=dict(sorted(by_status.items())),
            errors=sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))[:20],
            robots=robots,
        )

    def fetches_by_host(self) -> dict[str, int]:
        return dict(Counter(f.host for f in self._s.fetches.values()))

    def failed_by_host(self) -> dict[str, int]:
        return {
            host: n
            for host, rows in self._s.frontier.urls.items()
            if (n := sum(1 for r in rows.values() if r.status is UrlStatus.FAILED))
        }

    def committed_logs(self) -> dict[str, Position]:
        return {
            key[len(LOG_META_PREFIX) :]: Position.load(value)
            for key, value in self._s.meta.items()
            if key.startswith(LOG_META_PREFIX)
        }

    def meta(self, key: str) -> str | None:
        return self._s.meta.get(key)

    def url_rules(self, host: str | None = None) -> list[UrlRule]:
        return sorted_rules(self._s.url_rules, self._s.rule_counts, host)

    def close(self) -> None:
        pass
