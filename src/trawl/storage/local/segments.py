"""Append-only files rotated at a size limit, cut back to the last commit on open.

WARC files, text files and the event log all follow one rule: bytes appended after
the last database commit are not referenced by anything durable, so on open each log
is truncated to its committed position (a record cut off by kill -9 disappears with
them) and the work that wrote them is redone. Every file therefore ends on a whole
record, and nothing committed is ever rewritten.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from trawl.errors import as_disk_full
from trawl.models import Location, Position


def _nothing() -> None:
    """Nothing left to make durable."""


class SegmentLog:
    """``<dir>/<prefix>-NNNNN<suffix>`` files; one writer; rotation at ``max_bytes``."""

    def __init__(
        self,
        directory: Path,
        *,
        prefix: str,
        suffix: str,
        max_bytes: int,
        committed: Position | None,
        fsync: bool = True,
    ) -> None:
        self.directory = directory
        self._prefix = prefix
        self._suffix = suffix
        self._max = max_bytes
        self._fsync = fsync
        self._pattern = re.compile(re.escape(prefix) + r"-(\d{5,})" + re.escape(suffix) + "$")
        start = committed or Position(1, 0)
        self._index = start.index
        with self._writing():
            directory.mkdir(parents=True, exist_ok=True)
            self.recovered_bytes = self._recover(start)
            self._file = open(self._path(self._index), "ab")  # noqa: SIM115 - held open
        self._offset = self._file.tell()
        self._unsynced = False

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A full disk met while writing the current file is a ``DiskFullError`` for it.

        Nothing is undone: whatever was appended since the last commit is cut off
        when the log is opened again, as after a crash.
        """
        try:
            yield
        except OSError as exc:
            full = as_disk_full(exc, self._path(self._index))
            if full is None:
                raise
            raise full from exc

    def _path(self, index: int) -> Path:
        return self.directory / self.name(index)

    def name(self, index: int) -> str:
        return f"{self._prefix}-{index:05d}{self._suffix}"

    def files(self) -> list[Path]:
        """The log's files in order."""
        found = []
        for p in self.directory.iterdir():
            m = self._pattern.match(p.name)
            if m:
                found.append((int(m.group(1)), p))
        return [p for _, p in sorted(found)]

    def segments(self) -> list[str]:
        """Segment names, oldest first."""
        return [p.name for p in self.files()]

    def _recover(self, committed: Position) -> int:
        """Drop what was appended after ``committed``; returns the bytes dropped."""
        dropped = 0
        for p in self.files():
            index = int(self._pattern.match(p.name).group(1))  # type: ignore[union-attr]
            size = p.stat().st_size
            if index > committed.index:
                dropped += size
                p.unlink()
            elif index == committed.index and size > committed.offset:
                dropped += size - committed.offset
                with open(p, "r+b") as f:
                    f.truncate(committed.offset)
                    os.fsync(f.fileno())
        return dropped

    @property
    def current(self) -> str:
        return self.name(self._index)

    def position(self) -> Position:
        return Position(self._index, self._offset)

    def would_rotate(self, size: int) -> bool:
        return self._offset > 0 and self._offset + size > self._max

    def rotate(self) -> None:
        """Start the next file (the caller may then write a header record into it)."""
        self.sync()
        with self._writing():
            self._file.close()
            self._index += 1
            self._file = open(self._path(self._index), "ab")  # noqa: SIM115 - held open
        self._offset = 0

    def append(self, data: bytes) -> Location:
        """Write one whole record; it becomes durable at the next ``sync`` + commit."""
        if self.would_rotate(len(data)):
            self.rotate()
        offset = self._offset
        with self._writing():
            self._file.write(data)
        self._offset += len(data)
        self._unsynced = True
        return Location(self.current, offset, len(data))

    def sync(self) -> Position:
        """Flush (and fsync) what was appended; returns the position now safe to commit."""
        if self._unsynced:
            with self._writing():
                self._file.flush()
                if self._fsync:
                    os.fsync(self._file.fileno())
            self._unsynced = False
        return self.position()

    def flush(self) -> tuple[Position, Callable[[], None]]:
        """Write out what was appended; the fsync is left to the function returned,
        which may run in another thread (it syncs its own duplicate of the file
        descriptor, so a rotation meanwhile closes nothing under it)."""
        if not self._unsynced:
            return self.position(), _nothing
        with self._writing():
            self._file.flush()
        self._unsynced = False
        if not self._fsync:
            return self.position(), _nothing
        path = self._path(self._index)
        with self._writing():
            fd = os.dup(self._file.fileno())

        def durable() -> None:
            try:
                os.fsync(fd)
            except OSError as exc:
                full = as_disk_full(exc, path)
                if full is None:
                    raise
                raise full from exc
            finally:
                os.close(fd)

        return self.position(), durable

    def read(self, location: Location) -> bytes:
        if location.file == self.current:
            with self._writing():
                self._file.flush()
        with open(self.directory / location.file, "rb") as f:
            f.seek(location.offset)
            return f.read(location.length)

    def close(self) -> None:
        self.sync()
        self._file.close()

    def abandon(self) -> None:
        """Close without writing what is buffered (after a full disk: nothing of it
        is committed, and the next open cuts the file back to the last commit)."""
        with contextlib.suppress(OSError):
            self._file.close()
