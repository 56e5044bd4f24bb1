"""The blob seam: append-only segment logs (WARC, text, events, links) behind one Protocol.

A crawl writes four logs. Each is a sequence of segments named
``<prefix>-NNNNN<suffix>``, appended by one writer and rotated at a size limit. The
committed end of each log (a ``Position``) is stored by the crawl's state store in the
same commit as the work that wrote it; a writer opened at that position drops what lies
beyond it, so a record written before a crash but never committed disappears and its
work is redone. Readers, in any process, read committed ranges by ``Location``.

Backends: ``LocalBlobStore`` (files under a data directory, ``trawl.storage.local``),
``S3BlobStore`` (an S3-compatible bucket, ``trawl.storage.s3``)
and ``MemoryBlobStore`` (``trawl.storage.memory``); all run tests/contract/test_blobs.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from trawl.models import Location, Position

__all__ = [
    "EVENT_LOG",
    "LINK_LOG",
    "LOGS",
    "TEXT_LOG",
    "WARC_LOG",
    "BlobStore",
    "LogSpec",
    "LogWriters",
    "SegmentWriter",
    "committed_ends",
]


@dataclass(frozen=True, slots=True)
class LogSpec:
    """One log of a crawl: its name (a folder or key prefix) and how segments are named.

    A log written by many writers at once (a fleet's workers) gives each writer its own
    segments, ``<prefix>-<writer>-NNNNN<suffix>`` in the same folder, and its own
    committed end, kept under ``key`` (``name@writer``); a ``Location`` names its
    segment, so records of every writer are read through the plain log.
    """

    name: str
    prefix: str
    suffix: str
    writer: str = ""

    def for_writer(self, writer: str) -> LogSpec:
        if not writer or not all(c.isalnum() or c in "._" for c in writer):
            raise ValueError(f"a writer id is letters, digits, '.' and '_': {writer!r}")
        return LogSpec(self.name, self.prefix, self.suffix, writer)

    @property
    def key(self) -> str:
        """Where the store keeps this writer's committed end (``committed_logs``)."""
        return f"{self.name}@{self.writer}" if self.writer else self.name

    @property
    def head(self) -> str:
        """What this writer's segment names start with, before ``-NNNNN``."""
        return f"{self.prefix}-{self.writer}" if self.writer else self.prefix

    def segment(self, index: int) -> str:
        return f"{self.head}-{index:05d}{self.suffix}"

    def index_of(self, segment: str) -> int | None:
        """The segment's number, or None if the name is not one of this writer's."""
        head = self.head + "-"
        if not (segment.startswith(head) and segment.endswith(self.suffix)):
            return None
        digits = segment[len(head) : len(segment) - len(self.suffix)]
        return int(digits) if len(digits) >= 5 and digits.isdigit() else None

    def owner_of(self, segment: str) -> LogSpec | None:
        """The writer of this log whose segment ``segment`` is, or None if it is none's
        (a name from a stored location is checked before it becomes a path or key)."""
        plain = LogSpec(self.name, self.prefix, self.suffix)
        if plain.index_of(segment) is not None:
            return plain
        rest = segment[len(self.prefix) + 1 :] if segment.startswith(self.prefix + "-") else ""
        writer = rest.rpartition("-")[0]
        if writer and all(c.isalnum() or c in "._" for c in writer):
            owner = plain.for_writer(writer)
            if owner.index_of(segment) is not None:
                return owner
        return None


WARC_LOG = LogSpec("warc", "trawl", ".warc.gz")
TEXT_LOG = LogSpec("text", "trawl", ".jsonl.gz")
EVENT_LOG = LogSpec("events", "events", ".jsonl")
LINK_LOG = LogSpec("links", "links", ".jsonl.zst")
LOGS = (WARC_LOG, TEXT_LOG, EVENT_LOG, LINK_LOG)


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

    def flush(self) -> tuple[Position, Callable[[], None]]:
        """``sync`` in two steps: what was appended is written out (readable through
        this writer) and its end returned with a function that makes it durable, and
        readable by anyone (a local file's fsync; an S3 part's upload). The function
        may run in another thread while the log is appended to (the group commit's,
        off the event loop); the position is safe to commit once it has returned."""
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


def committed_ends(logs: Mapping[str, Position], log: LogSpec) -> list[tuple[LogSpec, Position]]:
    """Each writer's log of ``log`` with its committed end, from ``committed_logs()``
    (keys ``name`` for the one writer of a data directory, ``name@writer`` in a fleet)."""
    out = []
    for key, end in sorted(logs.items()):
        name, _, writer = key.partition("@")
        if name == log.name:
            out.append((log.for_writer(writer) if writer else log, end))
    return out


class LogWriters:
    """The logs one process writes, as one writer (``writer``; "" when it is the only one).

    Opened at the ends the store committed; ``sync`` returns the ends to commit next.
    """

    def __init__(self, blobs: BlobStore, committed: Mapping[str, Position], writer: str) -> None:
        self._blobs = blobs
        self._committed = dict(committed)
        self._writer = writer
        self._open: dict[str, tuple[LogSpec, SegmentWriter]] = {}  # by log name

    def spec(self, log: LogSpec) -> LogSpec:
        """This writer's spec of ``log``."""
        return log.for_writer(self._writer) if self._writer else log

    def open(self, log: LogSpec, max_bytes: int) -> SegmentWriter:
        spec = self.spec(log)
        w = self._blobs.open_writer(
            spec, committed=self._committed.get(spec.key), max_bytes=max_bytes
        )
        self._open[log.name] = (spec, w)
        return w

    @property
    def names(self) -> set[str]:
        return set(self._open)

    def sync(self) -> dict[str, Position]:
        """Every log made durable; the ends to commit, by ``LogSpec.key``."""
        return {spec.key: w.sync() for spec, w in self._open.values()}

    def flush(self) -> tuple[dict[str, Position], Callable[[], None]]:
        """``sync`` in two steps (see ``SegmentWriter.flush``): the ends to commit, and
        a function, for any thread, that makes every log durable up to them."""
        ends: dict[str, Position] = {}
        steps: list[Callable[[], None]] = []
        for spec, w in self._open.values():
            ends[spec.key], durable = w.flush()
            steps.append(durable)

        def all_durable() -> None:
            for step in steps:
                step()

        return ends, all_durable

    def files(self, log: LogSpec) -> tuple[str, ...]:
        """Where this writer's segments of ``log`` are."""
        spec = self.spec(log)
        return tuple(self._blobs.locate(spec, s) for s in self._blobs.segments(spec))

    def close(self) -> None:
        for _, w in self._open.values():
            w.close()

    def abandon(self) -> None:
        for _, w in self._open.values():
            w.abandon()
