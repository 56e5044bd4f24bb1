"""What a crawl reports: a snapshot of its progress, and the summary at its end."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from trawl.models import UrlStatus

__all__ = ["CrawlSummary", "Snapshot"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Progress at one moment (what the live display and ``trawl stats`` show)."""

    elapsed: float
    known: int
    queued: int
    in_flight: int
    waiting: int
    fetched: int
    parsed: int
    failed: int
    skipped: int
    redirected: int
    documents: int
    duplicates: int
    pages_per_second: float
    bytes: int
    errors: int
    hosts_ready: int
    hosts_waiting: int
    parse_backlog: int

    @classmethod
    def of(
        cls,
        counts: Mapping[UrlStatus, int],
        counters: Mapping[str, int],
        *,
        elapsed: float,
        pages_per_second: float,
        bytes: int,
        hosts_ready: int,
        hosts_waiting: int,
        parse_backlog: int,
    ) -> Snapshot:
        """From the frontier's URL counts and the crawl's counters."""
        return cls(
            elapsed=elapsed,
            known=sum(counts.values()),
            queued=counts[UrlStatus.QUEUED],
            in_flight=counts[UrlStatus.IN_FLIGHT],
            waiting=counts[UrlStatus.WAITING],
            fetched=counts[UrlStatus.FETCHED] + counts[UrlStatus.PARSED],
            parsed=counts[UrlStatus.PARSED],
            failed=counts[UrlStatus.FAILED],
            skipped=counts[UrlStatus.SKIPPED],
            redirected=counts[UrlStatus.REDIRECTED],
            documents=counters.get("parse:stored", 0),
            duplicates=counters.get("parse:duplicate", 0),
            pages_per_second=pages_per_second,
            bytes=bytes,
            errors=sum(v for k, v in counters.items() if k.startswith("error:")),
            hosts_ready=hosts_ready,
            hosts_waiting=hosts_waiting,
            parse_backlog=parse_backlog,
        )


@dataclass(frozen=True, slots=True)
class CrawlSummary:
    # "done", "max pages", "max duration", "interrupted", "aborted", "disk full",
    # "low disk space" (the last two: ``error`` says where; run again to resume),
    # "waiting for robots.txt" (only URLs of hosts whose robots.txt is unreachable were
    # left for ``robots_patience`` seconds: ``robots_waiting`` says how many; they stay
    # queued, and a resumed crawl tries again)
    stopped: str
    snapshot: Snapshot
    data_dir: str
    warc_files: tuple[str, ...]
    text_files: tuple[str, ...]
    seed_errors: tuple[str, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    # (URLs, hosts) that were left only waiting for unreachable robots.txt files
    robots_waiting: tuple[int, int] = (0, 0)

    @property
    def failed_by_reason(self) -> dict[str, int]:
        """Failed URLs by the class of their reason (``http 404``, ``timeout``,
        ``redirect loop``...), most first: the ``failed:<kind>`` counters."""
        return by_prefix(self.counters, "failed:")


def by_prefix(counters: Mapping[str, int], prefix: str) -> dict[str, int]:
    """Counters under ``prefix`` (``error:``, ``failed:``...) without it, most first."""
    found = {k[len(prefix) :]: v for k, v in counters.items() if k.startswith(prefix) and v}
    return dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
