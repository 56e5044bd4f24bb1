"""``BlobStore`` in memory: segments as byte arrays, kept across writer reopenings.

The store object plays the disk: a writer opened again at a committed position cuts
everything after it, exactly as the local backend truncates files after a crash.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import BinaryIO

from trawl.models import Location, Position
from trawl.storage.blobs import LogSpec


class MemorySegmentWriter:
    def __init__(self, segments: dict[int, bytearray], spec: LogSpec, max_bytes: int) -> None:
        self._segments = segments
        self._spec = spec
        self._max = max_bytes
        self._index = 1
        self.recovered_bytes = 0
        self.closed = False

    def _recover(self, committed: Position) -> None:
        for index in sorted(self._segments):
            data = self._segments[index]
            if index > committed.index:
                self.recovered_bytes += len(data)
                del self._segments[index]
            elif index == committed.index and len(data) > committed.offset:
                self.recovered_bytes += len(data) - committed.offset
                del data[committed.offset :]
        self._index = committed.index
        self._segments.setdefault(self._index, bytearray())

    @property
    def current(self) -> str:
        return self._spec.segment(self._index)

    def position(self) -> Position:
        return Position(self._index, len(self._segments[self._index]))

    def would_rotate(self, size: int) -> bool:
        offset = len(self._segments[self._index])
        return offset > 0 and offset + size > self._max

    def rotate(self) -> None:
        self._index += 1
        self._segments[self._index] = bytearray()

    def append(self, data: bytes) -> Location:
        if self.closed:
            raise ValueError("append to a closed log")
        if self.would_rotate(len(data)):
            self.rotate()
        segment = self._segments[self._index]
        offset = len(segment)
        segment += data
        return Location(self.current, offset, len(data))

    def sync(self) -> Position:
        return self.position()

    def flush(self) -> tuple[Position, Callable[[], None]]:
        """``sync`` at once (nothing is left for another thread)."""
        return self.sync(), _nothing

    def read(self, location: Location) -> bytes:
        return _read(self._segments, self._spec, location)

    def segments(self) -> list[str]:
        return [self._spec.segment(i) for i in sorted(self._segments)]

    def close(self) -> None:
        self.closed = True

    def abandon(self) -> None:
        self.closed = True


class MemoryBlobStore:
    def __init__(self) -> None:
        self._logs: dict[str, dict[int, bytearray]] = {}

    def open_writer(
        self, spec: LogSpec, *, committed: Position | None, max_bytes: int
    ) -> MemorySegmentWriter:
        writer = MemorySegmentWriter(self._logs.setdefault(spec.key, {}), spec, max_bytes)
        writer._recover(committed or Position(1, 0))
        return writer

    def segments(self, spec: LogSpec) -> list[str]:
        return [spec.segment(i) for i in sorted(self._logs.get(spec.key, {}))]

    def read(self, spec: LogSpec, location: Location) -> bytes:
        owner = spec.owner_of(location.file) or spec
        return _read(self._logs.get(owner.key, {}), owner, location)

    def read_range(self, spec: LogSpec, segment: str, start: int, end: int | None) -> bytes:
        owner = spec.owner_of(segment)
        index = None if owner is None else owner.index_of(segment)
        data = None if owner is None else self._logs.get(owner.key, {}).get(index or 0)
        if data is None:
            return b""
        return bytes(data[start:end])

    def open_range(self, spec: LogSpec, segment: str, start: int, end: int | None) -> BinaryIO:
        return io.BytesIO(self.read_range(spec, segment, start, end))

    def locate(self, spec: LogSpec, segment: str) -> str:
        return f"memory:{spec.name}/{segment}"


def _read(segments: dict[int, bytearray], spec: LogSpec, location: Location) -> bytes:
    index = spec.index_of(location.file)
    data = segments.get(index) if index is not None else None
    if data is None:
        raise FileNotFoundError(f"{spec.name}/{location.file}")
    return bytes(data[location.offset : location.offset + location.length])


def _nothing() -> None:
    """Nothing left to make durable."""
