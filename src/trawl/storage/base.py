"""The storage seams: one Protocol per store, implemented by SQLite now and Redis later.

Every implementation runs the same contract suite (tests/contract). Writes become
durable at the backend's ``commit``; until then a crash may lose them, which is safe
because work is acknowledged only after its output is committed (at-least-once).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from trawl.dedup.minhash import MinHasher
from trawl.dedup.near import NearDupIndex
from trawl.jobs import ParseJob
from trawl.models import (
    AddResult,
    HostInfo,
    Lease,
    Location,
    NewUrl,
    Position,
    UrlRecord,
    UrlStatus,
)


class Frontier(Protocol):
    """Every URL that may still be fetched: one queue per host, hosts ordered by time.

    Exactly one URL of a host is out at a time. The host goes back into the schedule
    only when that URL's fetch ends (``finish``/``retry``/``requeue``), at the time
    the caller says (now + the host's delay).
    """

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        """Admit URLs not seen before (exact check); drop those over their host's budget."""
        ...

    def take(self, now: float) -> Lease | None:
        """A URL of a host whose time has come, or None when no host is ready."""
        ...

    def next_wake(self, now: float) -> float | None:
        """When ``take`` may next succeed: ``now`` if work is ready, None if none is queued."""
        ...

    def next_wake_due(self) -> float | None:
        """When the earliest waiting URL (back-off, revisit) is due, None if none waits."""
        ...

    def finish(
        self,
        lease: Lease,
        status: UrlStatus,
        *,
        host_ready_at: float,
        reason: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """The fetch of ``lease`` ended with ``status``; its host may go again at the time."""
        ...

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        """Count a failed attempt; the URL waits until ``due`` and is then queued again."""
        ...

    def requeue(self, lease: Lease, *, host_ready_at: float) -> None:
        """Give the URL back without counting an attempt (robots fetched first, shutdown)."""
        ...

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        """Record a later stage's outcome (parsed, skipped as duplicate, ...)."""
        ...

    def revisit(self, host: str, fp: int, *, due: float, interval: float) -> None:
        """A finished page waits until ``due``, then is queued to be fetched again."""
        ...

    def wake_due(self, now: float) -> int:
        """Queue again the waiting URLs whose back-off is over; returns how many."""
        ...

    def reclaim_expired(self, now: float) -> int:
        """Leases not finished in time go back to the queue; returns how many."""
        ...

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        """Lower a host's priority and cut its budget (it serves duplicates, traps, ...)."""
        ...

    def get(self, host: str, fp: int) -> UrlRecord | None: ...

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of exactly ``url`` (its fingerprint ``fp`` may have been probed past)."""
        ...

    def counts(self) -> dict[UrlStatus, int]:
        """How many URLs are in each status."""
        ...

    def host_info(self, host: str) -> HostInfo | None: ...

    def hosts_ready(self, now: float) -> int: ...

    def hosts_waiting(self, now: float) -> int: ...


@dataclass(frozen=True, slots=True)
class PageRecord:
    """A distinct text kept by the crawl (keyed by the exact hash of the text)."""

    content_hash: str
    url: str
    host: str
    fp: int
    fetched_at: float
    title: str
    language: str | None
    warc: Location
    text: Location
    duplicates: int = 0
    indexed: bool = False


@dataclass(frozen=True, slots=True)
class FetchRecord:
    """The latest stored response of a URL."""

    host: str
    fp: int
    url: str
    final_url: str
    status: int
    fetched_at: float
    warc: Location
    content_hash: str | None = None
    outcome: str | None = None  # "stored", "duplicate of ...", "noindex", ...


@dataclass(frozen=True, slots=True)
class RobotsRow:
    """A host's cached robots.txt answer (status None = network error)."""

    host: str
    status: int | None
    body: bytes | None
    fetched_at: float
    expires_at: float
    failures: int = 0
    unreachable_since: float | None = None
    good_status: int | None = None
    good_body: bytes | None = None
    good_fetched_at: float | None = None


class PageStore(Protocol):
    def find(self, content_hash: str) -> PageRecord | None: ...

    def claim(self, content_hash: str, url: str) -> str | None:
        """Reserve ``content_hash`` for ``url``'s text, about to be stored, unless another
        URL has it by now (stored, or claimed by another worker of a fleet): that URL,
        whose exact duplicate the page then is; None when the text is ``url``'s to keep."""
        ...

    def add(self, page: PageRecord) -> None: ...

    def count_duplicate(self, content_hash: str) -> None: ...

    def count(self) -> int: ...

    def unindexed(self, limit: int) -> list[PageRecord]: ...

    def mark_indexed(self, content_hashes: list[str], *, indexed: bool = True) -> None: ...

    def pages(self) -> Iterator[PageRecord]: ...

    def record_fetch(self, f: FetchRecord) -> None: ...

    def set_fetch_outcome(
        self, host: str, fp: int, *, content_hash: str | None, outcome: str
    ) -> None: ...

    def fetch_of(self, host: str, fp: int) -> FetchRecord | None: ...


class ParseQueue(Protocol):
    """Fetched pages not yet parsed; a page leaves only when its outputs are committed."""

    def put(self, job: ParseJob) -> int:
        """Queue a job; returns its sequence number (increasing)."""
        ...

    def pending(self, *, after: int = 0, limit: int = 1000) -> list[tuple[int, ParseJob]]: ...

    def ack(self, seq: int) -> None: ...

    def __len__(self) -> int: ...


class RobotsStore(Protocol):
    def load(self, host: str) -> RobotsRow | None: ...

    def save(self, row: RobotsRow) -> None: ...


class OriginFileStore(Protocol):
    """Small per-origin files other than robots.txt (e.g. ``tdmrep.json``), by kind."""

    def load(self, kind: str, origin: str) -> tuple[int | None, bytes | None, float] | None:
        """``(status, body, expires_at)`` or None."""
        ...

    def save(
        self,
        kind: str,
        origin: str,
        *,
        status: int | None,
        body: bytes | None,
        fetched_at: float,
        expires_at: float,
    ) -> None: ...


class Counters(Protocol):
    """Named counters of a crawl (``status:200``, ``error:timeout``, ...)."""

    def add(self, name: str, n: int = 1) -> None: ...

    def get(self, name: str) -> int: ...

    def with_prefix(self, prefix: str) -> dict[str, int]: ...

    def all(self) -> dict[str, int]: ...


class MetaStore(Protocol):
    """Small named values kept with the crawl (its config, its scope's hosts, ...)."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...


class CrawlStore(Protocol):
    """Everything one crawl keeps, made durable together by ``commit``.

    Writes through any of the stores are provisional until ``commit`` returns: then
    they are durable together, with the committed ends of the blob logs passed in.
    A crash before it loses all of them and nothing else, so work acknowledged in a
    commit (a parse queue entry acked, a lease finished) is never lost and work not
    acknowledged is redone, once.
    """

    @property
    def frontier(self) -> Frontier: ...

    @property
    def pages(self) -> PageStore: ...

    @property
    def parse_queue(self) -> ParseQueue: ...

    @property
    def counters(self) -> Counters: ...

    @property
    def robots(self) -> RobotsStore: ...

    @property
    def origin_files(self) -> OriginFileStore: ...

    @property
    def meta(self) -> MetaStore: ...

    def near_index(self, hasher: MinHasher) -> NearDupIndex:
        """The near-duplicate index of kept founders, written in this store's commits."""
        ...

    def committed_logs(self) -> dict[str, Position]:
        """The committed end of each blob log (by ``LogSpec.name``), as of the last commit."""
        ...

    def commit(self, logs: Mapping[str, Position] | None = None) -> None:
        """Make every write so far durable, atomically, with the logs' committed ends."""
        ...

    def reader(self) -> CrawlReader:
        """A read-only view of what is committed (what another process would see)."""
        ...

    def close(self, *, commit: bool = True) -> None: ...


@dataclass(frozen=True, slots=True)
class HostView:
    """What the store knows of one host, for the operator."""

    host: str
    next_at: float
    queued: int
    admitted: int
    budget: int | None
    priority: int
    demoted_reason: str | None
    pages_fetched: int
    urls: dict[UrlStatus, int]
    errors: list[tuple[str, int]]  # (reason, URLs), most frequent first
    robots: list[RobotsRow]


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Counts over the whole crawl."""

    urls: dict[UrlStatus, int]
    counters: dict[str, int]
    documents: int
    parse_backlog: int
    hosts: int
    hosts_with_queued: int


class CrawlReader(Protocol):
    """Read-only access to a crawl's committed state, from any process, beside the writer."""

    def stats(self) -> StoreStats: ...

    def url_states(
        self, status: UrlStatus | None = None
    ) -> Iterator[tuple[str, UrlStatus, str | None]]:
        """``(url, status, reason)`` of every URL known (optionally of one status)."""
        ...

    def fetch_of_url(self, url: str) -> FetchRecord | None:
        """The latest stored fetch of ``url``, or of the redirect that started at it."""
        ...

    def page(self, content_hash: str) -> PageRecord | None: ...

    def pages(self) -> Iterator[PageRecord]:
        """Every kept page, in storage order."""
        ...

    def host(self, host: str) -> HostView | None: ...

    def fetches_by_host(self) -> dict[str, int]:
        """Stored fetches per host."""
        ...

    def failed_by_host(self) -> dict[str, int]:
        """Failed URLs per host."""
        ...

    def committed_logs(self) -> dict[str, Position]: ...

    def meta(self, key: str) -> str | None: ...

    def close(self) -> None: ...


def claim_by_find(pages: PageStore, content_hash: str, url: str) -> str | None:
    """``PageStore.claim`` for a store with one writer: nothing can come between this
    look and the page's ``add`` (the parse stage adds it at once)."""
    found = pages.find(content_hash)
    return None if found is None or found.url == url else found.url
