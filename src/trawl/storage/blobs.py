"""The blob seam: append-only segment logs (WARC, text, events) behind one Protocol.

A crawl writes three logs. Each is a sequence of segments named
``<prefix>-NNNNN<suffix>``, appended by one writer and rotated at a size limit. The
committed end of each log (a ``Position``) is stored by the crawl's state store in the
same commit as the work that wrote it; a writer opened at that position drops what lies
beyond it, so a record written before a crash but never committed disappears and its
work is redone. Readers, in any process, read committed ranges by ``Location``.

Backends: ``LocalBlobStore`` (files under a data directory, ``trawl.storage.local``)
and ``MemoryBlobStore`` (``trawl.storage.memory``); both run tests/contract/test_blobs.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Protocol

from trawl.models import Location, Position

__all__ = ["EVENT_LOG", "LOGS", "TEXT_LOG", "WARC_LOG", "BlobStore", "LogSpec", "SegmentWriter"]


@dataclass(frozen=True, slots=True)
class LogSpec:
    """One log of a crawl: its name (a folder or key prefix) and how segments are named."""

    name: str
    prefix: str
    suffix: str

    def segment(self, index: int) -> str:
        return f"{self.prefix}-{index:05d}{self.suffix}"

    def index_of(self, segment: str) -> int | None:
        """The segment's number, or None if the name is not one of this log's."""
        if not (segment.startswith(self.prefix + "-") and segment.endswith(self.suffix)):
            return None
        digits = segment[len(self.prefix) + 1 : len(segment) - len(self.suffix)]
        return int(digits) if len(digits) >= 5 and digits.isdigit() else None


WARC_LOG = LogSpec("warc", "trawl", ".warc.gz")
TEXT_LOG = LogSpec("text", "trawl", ".jsonl.gz")
EVENT_LOG = LogSpec("events", "events", ".jsonl")
LOGS = (WARC_LOG, TEXT_LOG, EVENT_LOG)


class SegmentWriter(Protocol):
    """The one writer of a log."""

    @property
    def current(self) -> str:
        """The segment being appended to."""
        ...

    @property
    def recovered_bytes(self) -> int:
        """Bytes dropped on open because no commit referenced them."""
        ...

    def position(self) -> Position: ...

    def would_rotate(self, size: int) -> bool: ...

    def rotate(self) -> None:
        """Start the next segment (the caller may then write a header record into it)."""
        ...

    def append(self, data: bytes) -> Location:
        """Write one whole record; durable once ``sync`` returned a position past it."""
        ...

    def sync(self) -> Position:
        """Make everything appended durable and readable; the position safe to commit."""
        ...

    def read(self, location: Location) -> bytes:
        """A record this writer appended (committed or not)."""
        ...

    def segments(self) -> list[str]:
        """Segment names, oldest first."""
        ...

    def close(self) -> None: ...

    def abandon(self) -> None:
        """Close without writing what is buffered (the disk is full; nothing of it is
        committed, and the next open cuts the log back to the last commit)."""
        ...


class BlobStore(Protocol):
    """Where a crawl's logs live; writers for the crawl, reads for everyone."""

    def open_writer(
        self, spec: LogSpec, *, committed: Position | None, max_bytes: int
    ) -> SegmentWriter:
        """The log's writer, cut back to ``committed`` (None: the log starts empty)."""
        ...

    def segments(self, spec: LogSpec) -> list[str]:
        """The log's segment names, oldest first."""
        ...

    def read(self, spec: LogSpec, location: Location) -> bytes:
        """One committed record, from any thread or process."""
        ...

    def read_range(self, spec: LogSpec, segment: str, start: int, end: int | None) -> bytes:
        """Bytes ``[start, end)`` of a segment (``end`` None: to its current end)."""
        ...

    def open_range(self, spec: LogSpec, segment: str, start: int, end: int | None) -> BinaryIO:
        """The same bytes as ``read_range``, as a stream (for whole segments)."""
        ...

    def locate(self, spec: LogSpec, segment: str) -> str:
        """Where a person finds the segment (a path, a URL)."""
        ...
