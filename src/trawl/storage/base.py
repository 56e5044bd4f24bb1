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
from trawl.dedup.urlrules import Rewrite, UrlRule
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

    Order, within politeness (``trawl.ranking``): a host's queue hands out its URLs by
    key (``priority``), lowest first; among the hosts whose time has come, the one
    whose best queued URL's key plus the host's own priority (a demotion) is lowest
    goes first, then the one ready earliest.
    """

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        """Admit URLs not seen before (exact check); drop those over their host's budget.

        A URL known already and still to be fetched (queued, in flight, waiting) that
        is offered with a ``gain`` takes it: its cash grows by it and its key becomes
        ``ranking.raised_key(key, cash + history, gain)``, so a queued URL moves up
        its host's queue (and its host up the schedule) when an in-link is found.
        """
        ...

    def take(self, now: float) -> Lease | None:
        """A URL of a host whose time has come, or None when no host is ready (the
        lease carries the URL's cash, to be passed on to its links)."""
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
        """The fetch of ``lease`` ended with ``status``; its host may go again at the time.

        A page fetched (or redirected) passes its cash on: the lease's cash moves
        from the URL's ``cash`` to its ``history`` (its key, which counts both, stays).
        """
        ...

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        """Count a failed attempt; the URL waits until ``due`` and is then queued again."""
        ...

    def requeue(self, lease: Lease, *, host_ready_at: float, defer: bool = False) -> None:
        """Give the URL back without counting an attempt (robots fetched first, shutdown).

        ``defer``: its key moves into the deferred band (``ranking.deferred_key``, in
        the same step), so it goes after the host's other URLs (a probable spelling,
        ``frontier/deferral.py``); a key in the band already stays."""
        ...

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        """Record a later stage's outcome (parsed, skipped as duplicate, ...)."""
        ...

    def hold_host(self, host: str, now: float, *, until: float) -> float | None:
        """Take ``host``'s turn for a request that is none of its URLs (a script another
        host's page loads in the browser): None when taken, the host then busy until
        ``release_host`` (or, if never released, ``until`` where holds expire); else
        when to ask again (the host is busy, or its time has not come). A host the
        frontier does not know yet is added, with nothing queued."""
        ...

    def release_host(self, host: str, *, host_ready_at: float) -> None:
        """The request of ``hold_host`` ended: the host may go again at the time."""
        ...

    def revisit(self, host: str, fp: int, *, due: float, interval: float, shift: int = 0) -> None:
        """A finished page waits until ``due``, then is queued to be fetched again, its
        key out of the deferred band (``ranking.undeferred``: a revisit is never
        deferred) and moved by ``shift`` (its change history: sooner for a page that
        changes). A
        page already waiting for its revisit comes sooner if ``due`` is sooner (never
        later; its interval and key stay); other waiting, queued or leased URLs are left
        alone."""
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

    def set_max_per_host(self, limit: int | None) -> None:
        """The budget of every host without one of its own (a steered crawl's
        ``max_per_host``; None: no limit); URLs admitted before are kept."""
        ...

    def configure_host(self, host: str, *, budget: int | None, priority: int | None) -> None:
        """The operator's budget and priority for a host (config ``hosts``), replacing
        ``max_per_host`` and the default priority 0; a host demoted since keeps its
        demotion. None leaves that setting as it is."""
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


class WakeSignal(Protocol):
    """How the workers of a frontier shared by many processes (a fleet's) wake each
    other instead of polling it (optional: a store kept by one process has none)."""

    def announce(self) -> None:
        """Work is ready here that this worker cannot take now: wake an idle one."""
        ...

    def flush(self) -> None:
        """Send what the store keeps back to send with its next round trip."""
        ...

    def block(self, timeout: float) -> bool:
        """Wait (in a thread) up to ``timeout`` s for an announcement; True if one came."""
        ...

    def unblock(self) -> None:
        """End a ``block`` under way (from another thread)."""
        ...

    def close(self) -> None: ...


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

    def claimant(self, content_hash: str) -> str | None:
        """The URL whose text ``content_hash`` is: stored, or claimed by a worker of a
        fleet about to store it (not committed yet); None if neither."""
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

    def taken_over(self, *, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        """Entries that became this process's from another since the last call (a dead
        worker's, or one left idle past the claim time), each handed out once; always
        empty where one process owns the queue. A process that fetches and parses
        takes up its own pages as it fetches them, and others' only through this."""
        ...

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


class UrlRuleStore(Protocol):
    """Each host's learned URL equivalences (``dedup/urlrules.py``): every rule with its
    evidence and state, how many URLs each rewrote, and those URLs, kept so that a rule
    refuted later can give them back."""

    def rules(self, host: str) -> list[UrlRule]:
        """Every rule of ``host`` (candidates, active, refuted), with its rewrites."""
        ...

    def save(self, rule: UrlRule) -> None:
        """Insert or replace the host's rule of that key. A state never goes back: a
        refuted rule stays refuted and an active one active whatever is saved over it
        (another worker's older copy); the rewrites counted are kept."""
        ...

    def count(self, host: str, key: str, n: int) -> None:
        """Add ``n`` to the URLs the rule rewrote (many workers' counts add up)."""
        ...

    def log(self, rewrites: Sequence[Rewrite]) -> None:
        """Keep these rewritten URLs (one entry per host, rule and URL)."""
        ...

    def logged(self, host: str, key: str) -> list[Rewrite]:
        """The URLs the rule rewrote that are kept, in no particular order."""
        ...

    def forget(self, host: str, key: str) -> None:
        """Drop the rule's kept URLs (they were given back)."""
        ...


class MetaStore(Protocol):
    """Small named values kept with the crawl (its config, its scope's hosts, ...)."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...


@dataclass(frozen=True, slots=True)
class SharedHost:
    """A host as every crawl sharing a ``HostLeases`` sees it."""

    host: str
    holder: str | None  # who has a request in flight to it (None: nobody)
    expires: float  # when that lease lapses if never given back
    next_at: float  # no crawl contacts the host before this
    gap: float  # the largest gap between requests a crawl asked lately


class HostLeases(Protocol):
    """One request in flight per host, and the largest asked gap, across crawls.

    Not a crawl's state: every crawl on a machine (a SQLite file in the politeness
    directory) or of a Redis deployment shares it, and a change is written when made,
    with no commit. Leases expire (and on one machine a dead holder's lapse at once),
    so a crawl killed mid-fetch never blocks a host for long; the worst a crash loses
    is a release, which only makes the host wait for the expiry.
    """

    def acquire(
        self, host: str, *, holder: str, now: float, ttl: float, gap: float = 0.0
    ) -> float | None:
        """Take ``host`` for one fetch until ``now + ttl``: None when taken, else the
        time worth asking again (the host is leased by another, or its next allowed
        contact is later). A live lease of a dead holder is not taken at once: its last
        response may have just ended, so the host waits ``gap`` (the caller's pause
        after a response) or a larger live ask from now, as after a release."""

    def release(self, host: str, *, holder: str, now: float, ready_at: float) -> None:
        """Give ``host`` back: no crawl contacts it before ``ready_at`` (this crawl's
        next time), nor, when this crawl asked for a gap (``ready_at > now``), before
        ``now`` plus the largest gap a live crawl asked for."""

    def get(self, host: str, now: float) -> SharedHost | None:
        """The host's shared state (None: no crawl met it, or long ago)."""

    def beat(self, holder: str) -> None:
        """``holder`` lives (called about once a second while it crawls): where the
        holder's process cannot be checked (another machine), a holder that stops
        beating loses its leases in seconds, not at their expiry."""

    def close(self) -> None: ...


class CrawlStore(Protocol):
    """Everything one crawl keeps, made durable together by ``commit``.

    Writes through any of the stores are provisional until ``commit`` returns: then
    they are durable together, with the committed ends of the blob logs passed in.
    A crash before it loses all of them and nothing else, so work acknowledged in a
    commit (a parse queue entry acked, a lease finished) is never lost and work not
    acknowledged is redone, once.

    ``session_ttl``: how long this writer's leases stay its own without a heartbeat
    (a fleet worker's session: past it, others may roll it back and take its hosts);
    None where nobody else can take them (one writer of a data directory).
    """

    session_ttl: float | None

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

    @property
    def url_rules(self) -> UrlRuleStore: ...

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

    def pages_of(self, content_hashes: Sequence[str]) -> dict[str, PageRecord]:
        """The kept pages of these hashes, by hash (a hash with none is left out)."""
        ...

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

    def url_rules(self, host: str | None = None) -> list[UrlRule]:
        """The learned URL equivalences of ``host``, or of every host, with their
        rewrites, ordered by host and key."""
        ...

    def close(self) -> None: ...


def claimant_by_find(pages: PageStore, content_hash: str) -> str | None:
    """``PageStore.claimant`` for a store with one writer: a text is claimed only as
    it is added."""
    found = pages.find(content_hash)
    return None if found is None else found.url


def claim_by_find(pages: PageStore, content_hash: str, url: str) -> str | None:
    """``PageStore.claim`` for a store with one writer: nothing can come between this
    look and the page's ``add`` (the parse stage adds it at once)."""
    found = pages.find(content_hash)
    return None if found is None or found.url == url else found.url
