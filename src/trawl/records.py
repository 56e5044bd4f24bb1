"""What a crawl reports: a snapshot of its progress, and the summary at its end."""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True, slots=True)
class CrawlSummary:
    # "done", "max pages", "max duration", "interrupted", "aborted", "disk full",
    # "low disk space" (the last two: ``error`` says where; run again to resume)
    stopped: str
    snapshot: Snapshot
    data_dir: str
    warc_files: tuple[str, ...]
    text_files: tuple[str, ...]
    seed_errors: tuple[str, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)
    error: str | None = None
