"""``BlobStore`` on an S3-compatible service: a crawl's logs under ``s3://BUCKET/PREFIX``.

Keys: ``<PREFIX>/<log name>/<segment>`` for a finished segment, and the growing one's
parts beside it (``trawl.storage.s3.layout``). Records are read back by ranged GET,
from any thread or process: a read of a finished segment is one GET; one of the
growing segment (or a segment being rotated as it is read) LISTs the segment's keys
and GETs the part that holds the record.
"""

from __future__ import annotations

import io
import os
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from trawl.errors import StorageError
from trawl.models import Location, Position
from trawl.scratch import Scratch
from trawl.storage.blobs import LogSpec
from trawl.storage.s3.layout import (
    SegmentLayout,
    list_segments,
    part_key,
    parts_folder,
    scan_segment,
    whole_key,
)
from trawl.storage.s3.objects import S3Objects
from trawl.storage.s3.writer import S3SegmentWriter

# A read that meets a segment changing under it (rotated, cut back) looks again.
_ATTEMPTS = 3


class S3BlobStore:
    """A crawl's logs in a bucket; writers spool segments under ``spool`` (a temp dir
    by default), which only writers use."""

    def __init__(self, objects: S3Objects, *, spool: Path | None = None) -> None:
        self.objects = objects
        self._spool = spool

    @classmethod
    def from_url(
        cls, url: str, *, spool: Path | None = None, env: Mapping[str, str] | None = None
    ) -> S3BlobStore:
        """The logs at ``s3://BUCKET/PREFIX``; endpoint and keys from the AWS variables."""
        return cls(S3Objects.from_url(url, os.environ if env is None else env), spool=spool)

    def open_writer(
        self, spec: LogSpec, *, committed: Position | None, max_bytes: int
    ) -> S3SegmentWriter:
        if self._spool is None:
            # Made here, removed with the store (writers delete their own files), and
            # by the next store's if this process is killed (``Scratch``).
            scratch = Scratch("trawl-spool-")
            self._spool = scratch.path
            weakref.finalize(self, scratch.close)
        return S3SegmentWriter(
            self.objects,
            spec,
            max_bytes=max_bytes,
            committed=committed,
            spool_dir=self._spool,
            read_segment=self._read_span,
        )

    def segments(self, spec: LogSpec) -> list[str]:
        return list_segments(self.objects, spec)

    def read(self, spec: LogSpec, location: Location) -> bytes:
        spec = _check(spec, location.file)
        end = location.offset + location.length
        data = self._read_span(spec, None, location.file, location.offset, end)
        if len(data) != location.length:
            if not data and not self._layout(spec, location.file).size:
                raise FileNotFoundError(self.locate(spec, location.file))
            raise StorageError(
                f"{self.locate(spec, location.file)}: {len(data)} of {location.length} bytes "
                f"at {location.offset} (a record past the segment's end)"
            )
        return data

    def read_range(self, spec: LogSpec, segment: str, start: int, end: int | None) -> bytes:
        spec = _check(spec, segment)
        return b"".join(self._chunks(spec, segment, start, end))

    def open_range(self, spec: LogSpec, segment: str, start: int, end: int | None) -> BinaryIO:
        spec = _check(spec, segment)
        return io.BufferedReader(_ChunkStream(self._chunks(spec, segment, start, end)))

    def locate(self, spec: LogSpec, segment: str) -> str:
        return self.objects.url(whole_key(spec, segment))

    def _layout(self, spec: LogSpec, segment: str) -> SegmentLayout:
        return scan_segment(self.objects, spec, segment)

    def _read_span(
        self, spec: LogSpec, layout: SegmentLayout | None, segment: str, start: int, end: int
    ) -> bytes:
        """Bytes ``[start, end)`` of a segment (fewer if it ends first)."""
        if layout is None:
            # The common case, a finished segment: one GET, no LIST.
            data = self.objects.get_range(whole_key(spec, segment), start, end)
            if data is not None and len(data) == end - start:
                return data
            if data is None:
                # No whole object (yet): the growing segment, all in parts.
                layout = scan_segment(self.objects, spec, segment, whole=False)
        return b"".join(self._chunks(spec, segment, start, end, layout))

    def _chunks(
        self,
        spec: LogSpec,
        segment: str,
        start: int,
        end: int | None,
        layout: SegmentLayout | None = None,
    ) -> Iterator[bytes]:
        """Bytes ``[start, end)`` as they come (``end`` None: to the segment's end).

        Committed bytes are the same in every object that holds them, so a segment
        that changes under the read (rotated, cut back) is listed again and the read
        goes on from where it was.
        """
        at = start
        for _ in range(_ATTEMPTS):
            hinted = layout is not None
            current = layout if layout is not None else self._layout(spec, segment)
            layout = None
            stop = current.size if end is None else min(end, current.size)
            for part, first, last in current.pieces(at, stop):
                key = whole_key(spec, segment) if part is None else part_key(spec, segment, part)
                base = 0 if part is None else part
                for data in self.objects.stream(key, first - base, last - base):
                    yield data
                    at += len(data)
                if at != last:
                    break
            # Short of what was asked on the caller's (older) layout: look again.
            if at >= stop and not (hinted and end is not None and at < end):
                return
        raise StorageError(
            f"{self.locate(spec, segment)}: changed while read {_ATTEMPTS} times "
            f"(parts in {self.objects.url(parts_folder(spec, segment))})"
        )


def _check(spec: LogSpec, segment: str) -> LogSpec:
    """The spec of the writer whose segment this is (any writer of the log)."""
    # Names come from stored locations: never let one leave the log's folder.
    owner = spec.owner_of(segment)
    if owner is None:
        raise ValueError(f"not a segment of the {spec.name} log: {segment!r}")
    return owner


class _ChunkStream(io.RawIOBase):
    """A read-only stream over an iterator of byte chunks."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._left:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._left = chunk
        n = min(len(view), len(self._left))
        view[:n] = self._left[:n]
        self._left = self._left[n:]
        return n
