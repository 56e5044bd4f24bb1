"""The records that flow between stages: URLs in the frontier, leases, fetch results,
and where a stored record lies (``Location``) or where a log ends (``Position``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class UrlStatus(enum.IntEnum):
    """Where a URL stands. Stored as an integer; the numbers are part of the on-disk format."""

    QUEUED = 0
    IN_FLIGHT = 1
    FETCHED = 2  # raw page stored, waiting for the parse stage
    PARSED = 3
    FAILED = 4
    SKIPPED = 5  # with a reason: robots, content type, trap, ...
    WAITING = 6  # backing off before another attempt
    REDIRECTED = 7  # answered with a redirect; the target was handed to the frontier

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", " ")


# Not frozen: one is made per link admitted (as ``Candidate``, admission.py).
@dataclass(slots=True)
class NewUrl:
    """A URL offered to the frontier (already in normal form).

    ``priority`` is its key, lower first (``trawl.ranking``). ``cash`` is the
    importance it starts with if it is new; ``gain`` what a URL already known, and
    still to be fetched, receives instead (an in-link found: its key improves by
    ``ranking.raised_key``). Seeds and depth order offer no gain.
    """

    url: str
    fp: int
    host: str
    depth: int
    priority: int
    via: str | None = None  # the URL whose redirect led here
    hops: int = 0  # redirects followed to reach it
    cash: float = 1.0
    gain: float = 0.0


@dataclass(frozen=True, slots=True)
class Lease:
    """One URL handed to a fetcher; it comes back if not finished before ``expires``."""

    fp: int
    url: str
    host: str
    depth: int
    priority: int
    attempts: int
    expires: float
    via: str | None = None
    hops: int = 0
    etag: str | None = None
    last_modified: str | None = None
    revisit: float | None = None  # the revisit interval, for a page fetched before
    cash: float = 0.0  # the URL's OPIC cash when taken, passed on to its links


@dataclass(frozen=True, slots=True)
class UrlRecord:
    """The durable state of one URL."""

    fp: int
    url: str
    host: str
    depth: int
    priority: int
    status: UrlStatus
    due: float | None
    attempts: int
    reason: str | None
    via: str | None
    hops: int
    etag: str | None
    last_modified: str | None
    revisit: float | None = None
    cash: float = 0.0  # OPIC cash received and not passed on yet
    history: float = 0.0  # cash passed on to its links so far

    @property
    def importance(self) -> float:
        """All the cash the URL ever received (what its key's importance part says)."""
        return self.cash + self.history


@dataclass(frozen=True, slots=True)
class AddResult:
    """What happened to a batch of offered URLs."""

    added: tuple[NewUrl, ...]
    seen: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> count


@dataclass(frozen=True, slots=True)
class HostInfo:
    """A host's scheduling state as the frontier holds it."""

    host: str
    next_at: float
    queued: int
    admitted: int
    budget: int | None
    priority: int
    demoted_reason: str | None
    in_flight: bool


@dataclass(frozen=True, slots=True)
class Location:
    """Where one appended record lies: file name (relative to the log's folder), range."""

    file: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """The end of the log: file index and byte offset in it."""

    index: int
    offset: int

    def dump(self) -> str:
        return f"{self.index}:{self.offset}"

    @classmethod
    def load(cls, text: str) -> Position:
        index, _, offset = text.partition(":")
        return cls(int(index), int(offset))
