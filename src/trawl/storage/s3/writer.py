"""The one writer of a log in a bucket: appends to a local spool, uploads at commits.

``append`` writes to a spool file (the current segment, whole) and keeps the bytes
since the last ``sync``; ``sync`` uploads those as one part and only then returns the
position, so no commit ever points at bytes that are not in the bucket. ``flush`` (the
group commit's) takes the same bytes and leaves their upload to the function it
returns, which the commit runs in a thread: the event loop goes on meanwhile (a part
is a commit interval's pages, megabytes), and the commit waits for it. ``rotate``
hands the segment's spool to a thread of the writer's own, which uploads it whole and
then drops its parts, while appends go on in the next segment's spool (a 256 MiB text
segment takes some 3 s, a 1 GiB WARC one some 12: the event loop does not wait). No
position past it is durable before that upload ended: ``flush``'s function and
``sync`` wait for it, so a commit never points past a segment that is not whole in
the bucket (until then its records are read back from its spool). ``close`` uploads
the last segment whole on the caller's thread; ``abandon`` waits for a rotation's
upload under way, so none lands after the next open cut the bucket back.

Opening at a committed position applies the crash rule to the bucket: segments after
it are deleted, and the committed segment is cut back to the position (its first
``offset`` bytes become part 0 if anything lay beyond them), so what was uploaded but
never committed disappears and the redone work lands where it was. A segment that a
clean close left whole at the position is not grown again: the writer starts the
next one (no download of a segment at each restart).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from trawl.errors import StorageError, as_disk_full
from trawl.models import Location, Position
from trawl.storage.blobs import LogSpec
from trawl.storage.s3.layout import (
    SegmentLayout,
    list_segments,
    part_key,
    scan_log,
    whole_key,
)
from trawl.storage.s3.objects import S3Objects


@dataclass(slots=True)
class _Rotated:
    """A segment rotated out, its whole upload under way in the writer's thread."""

    spool: BinaryIO
    path: Path
    upload: Future[None]


class S3SegmentWriter:
    def __init__(
        self,
        objects: S3Objects,
        spec: LogSpec,
        *,
        max_bytes: int,
        committed: Position | None,
        spool_dir: Path,
        read_segment: SegmentReader,
    ) -> None:
        self._objects = objects
        self._spec = spec
        self._max = max_bytes
        self._read_segment = read_segment
        start = committed or Position(1, 0)
        self._index = start.index
        self._offset = start.offset
        self._synced = start.offset  # bytes of the current segment in the bucket
        self._pending: list[bytes] = []
        self._parts: list[int] = []  # starts of this segment's parts in the bucket
        self._closed = False
        # A flush's upload runs in another thread: it and a segment's whole upload
        # (rotate, close) take turns, and a part of a segment already uploaded whole
        # is not uploaded after it (it would outlive the parts' deletion).
        self._uploads = threading.Lock()
        self._whole_below = start.index  # segments before this one are whole in the bucket
        self._failed: BaseException | None = None  # an upload in another thread that failed
        # Segments rotated out whose whole upload has not been seen to end, by index:
        # their spools serve reads meanwhile. ``_spools`` guards the swap of spools
        # against a read in another thread (the index reads text records back).
        self._rotated: dict[int, _Rotated] = {}
        self._spools = threading.Lock()
        self._thread: ThreadPoolExecutor | None = None
        self._spool_dir = spool_dir
        self._spool, self._spool_path = self._new_spool()
        try:
            self.recovered_bytes = self._recover(start)
        except BaseException:
            self._discard_spool()
            raise

    def _new_spool(self) -> tuple[BinaryIO, Path]:
        spool_dir = self._spool_dir
        try:
            spool_dir.mkdir(parents=True, exist_ok=True)
            prefix = f"{self._spec.name}-"
            fd, name = tempfile.mkstemp(dir=spool_dir, prefix=prefix, suffix=".spool")
        except OSError as exc:
            full = as_disk_full(exc, spool_dir)
            if full is None:
                raise
            raise full from exc
        return os.fdopen(fd, "w+b"), Path(name)

    @contextlib.contextmanager
    def _spooling(self) -> Iterator[None]:
        """A full disk met while writing the spool is a ``DiskFullError`` for it (as
        the local backend's); nothing of it was uploaded, the next open cuts back."""
        try:
            yield
        except OSError as exc:
            full = as_disk_full(exc, self._spool_path)
            if full is None:
                raise
            raise full from exc

    def _recover(self, committed: Position) -> int:
        """Cut the bucket's copy of the log back to ``committed``; bytes dropped."""
        spec = self._spec
        found = scan_log(self._objects, spec)
        dropped = 0
        stale: list[str] = []
        for index, layout in sorted(found.items()):
            segment = spec.segment(index)
            if index > committed.index:
                dropped += layout.size
                stale += self._keys(segment, layout)
            elif index < committed.index and layout.whole is not None and layout.parts:
                # Rotated, but its parts outlived the upload of the whole (a crash
                # between the two): the whole object has every byte of them.
                stale += [part_key(spec, segment, s) for s in layout.parts]
        current = found.get(committed.index, SegmentLayout())
        dropped += max(0, current.size - committed.offset)
        segment = spec.segment(committed.index)
        if committed.offset > 0 and current.whole == committed.offset and not current.parts:
            # Closed cleanly at the commit: the segment is whole and stays so; carry
            # on in the next one rather than download it to grow it again.
            self._index += 1
            self._offset = self._synced = 0
            self._objects.delete(stale)
            return dropped
        head = self._head(current, committed)
        with self._spooling():
            self._spool.write(head)
        if current.whole is None and current.size == committed.offset:
            self._parts = sorted(current.parts)  # parts end at the commit: nothing to cut
        else:
            # Bytes past the commit are in the bucket: publish the committed head as
            # part 0 first (readers keep finding committed bytes), then drop the rest.
            keep = part_key(spec, segment, 0) if committed.offset > 0 else None
            if keep is not None:
                self._objects.put(keep, head)
                self._parts = [0]
            stale += [k for k in self._keys(segment, current) if k != keep]
        self._objects.delete(stale)
        return dropped

    def _head(self, layout: SegmentLayout, committed: Position) -> bytes:
        """The committed segment's first ``offset`` bytes, read back into the spool."""
        if committed.offset == 0:
            return b""
        segment = self._spec.segment(committed.index)
        head = self._read_segment(self._spec, layout, segment, 0, committed.offset)
        if len(head) != committed.offset:
            raise StorageError(
                f"{self._objects.url(whole_key(self._spec, self.current))}: committed "
                f"{committed.offset} bytes, the bucket holds {len(head)}"
            )
        return head

    def _keys(self, segment: str, layout: SegmentLayout) -> list[str]:
        keys = [part_key(self._spec, segment, s) for s in layout.parts]
        if layout.whole is not None:
            keys.append(whole_key(self._spec, segment))
        return keys

    @property
    def current(self) -> str:
        return self._spec.segment(self._index)

    def position(self) -> Position:
        return Position(self._index, self._offset)

    def would_rotate(self, size: int) -> bool:
        return self._offset > 0 and self._offset + size > self._max

    def rotate(self) -> None:
        """Start the next segment; this one goes up whole in the writer's thread."""
        self._check_open()
        self._check_uploads()
        self._reap()
        if self._offset == 0:
            with self._spools:
                self._index += 1
            return
        with self._spooling():
            self._spool.flush()
            spool, path = self._new_spool()
        index, parts = self._index, self._parts
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"trawl-s3-{self._spec.name}")
        upload = self._thread.submit(self._upload_whole, index, self._spool_path, parts)
        with self._spools:
            self._rotated[index] = _Rotated(self._spool, self._spool_path, upload)
            self._spool, self._spool_path = spool, path
            self._index += 1
        # What was appended since the last sync is in no part: the whole has it.
        self._pending = []
        self._parts = []
        self._offset = self._synced = 0

    def _upload_whole(self, index: int, path: Path, parts: list[int]) -> None:
        with self._noting_failure():
            self._finish(index, path, parts)

    @contextlib.contextmanager
    def _noting_failure(self) -> Iterator[None]:
        """An upload in another thread: if it fails, every later step refuses."""
        try:
            yield
        except BaseException as exc:
            self._failed = exc
            raise

    def _finish(self, index: int, path: Path, parts: list[int]) -> None:
        """Segment ``index`` as one object; its parts are then not needed."""
        segment = self._spec.segment(index)
        self._objects.put(whole_key(self._spec, segment), path)
        # A flush's part of this segment uploads under the lock: before this, and is
        # deleted here, or after, and then uploads nothing.
        with self._uploads:
            self._objects.delete([part_key(self._spec, segment, s) for s in parts])
            self._whole_below = max(self._whole_below, index + 1)

    def _reap(self) -> None:
        """Drop the spools of rotated segments now whole in the bucket."""
        for index, rotated in list(self._rotated.items()):
            if rotated.upload.done() and rotated.upload.exception() is None:
                with self._spools:
                    del self._rotated[index]
                _discard(rotated.spool, rotated.path)

    def append(self, data: bytes) -> Location:
        self._check_open()
        self._check_uploads()
        if self.would_rotate(len(data)):
            self.rotate()
        offset = self._offset
        with self._spooling():
            self._spool.write(data)  # at the end: reads use pread, never the file position
        self._pending.append(data)
        self._offset += len(data)
        return Location(self.current, offset, len(data))

    def sync(self) -> Position:
        """Upload what was appended since the last sync as one part; then the position
        (once the segments rotated out are whole in the bucket)."""
        self._check_uploads()
        for rotated in list(self._rotated.values()):
            rotated.upload.result()  # raises what a failed one raised
        self._reap()
        if self._pending:
            self._objects.put(
                part_key(self._spec, self.current, self._synced), b"".join(self._pending)
            )
            self._parts.append(self._synced)
            self._pending.clear()
            self._synced = self._offset
        return self.position()

    def flush(self) -> tuple[Position, Callable[[], None]]:
        """The position, and the function (for any thread) that uploads the bytes
        appended since the last sync as one part: the position may be committed once
        it has returned."""
        self._check_uploads()
        self._reap()
        rotations = [r.upload for r in self._rotated.values()]
        if not self._pending and not rotations:
            return self.position(), _nothing
        index, data = self._index, b"".join(self._pending)
        key = part_key(self._spec, self.current, self._synced)
        if data:
            self._parts.append(self._synced)  # a rotation before the upload deletes it
        self._pending.clear()
        self._synced = self._offset

        def upload() -> None:
            for rotation in rotations:  # the position is past them: they must be whole
                rotation.result()
            if not data:
                return
            with self._uploads:
                if index < self._whole_below:  # rotated since: the whole has these bytes
                    return
                with self._noting_failure():
                    self._objects.put(key, data)

        return self.position(), upload

    def _check_uploads(self) -> None:
        """An upload in another thread failed (a flush's part, a rotated segment): the
        bytes it held are not in the bucket, so no later position may be committed; the
        log must be reopened at the last commit."""
        if self._failed is not None:
            raise StorageError(
                f"{self._objects.url(whole_key(self._spec, self.current))}: an upload "
                f"failed ({self._failed}); nothing past the last commit is kept: the log "
                "must be opened again there"
            )

    def read(self, location: Location) -> bytes:
        with self._spools:  # held across the pread: no spool is closed under it
            spool = self._spool_of(location.file)
            if spool is not None:
                with self._spooling():
                    spool.flush()
                return os.pread(spool.fileno(), location.length, location.offset)
        return self._read_segment(
            self._spec, None, location.file, location.offset, location.offset + location.length
        )

    def _spool_of(self, segment: str) -> BinaryIO | None:
        """The spool that holds ``segment`` (the current one, or one rotated out and
        not yet seen whole in the bucket); None: read it from the bucket."""
        if self._closed:
            return None
        if segment == self.current:
            return self._spool
        index = self._spec.index_of(segment) if self._rotated else None
        rotated = self._rotated.get(index) if index is not None else None
        return None if rotated is None else rotated.spool

    def segments(self) -> list[str]:
        names = set(self._segments_in_bucket())
        names.update(self._spec.segment(i) for i in list(self._rotated))
        if self._offset > 0:
            names.add(self.current)
        return sorted(names, key=lambda n: self._spec.index_of(n) or 0)

    def _segments_in_bucket(self) -> list[str]:
        return list_segments(self._objects, self._spec)

    def close(self) -> None:
        if self._closed:
            return
        self.sync()
        if self._offset > 0:
            with self._spooling():
                self._spool.flush()
            self._finish(self._index, self._spool_path, self._parts)
            self._parts = []
        self._closed = True
        self._discard_spool()

    def abandon(self) -> None:
        """Close without uploading: nothing pending is committed, the next open cuts
        the bucket back to the last commit. A rotation's upload under way ends first,
        so it cannot land after that cut."""
        self._closed = True
        self._discard_spool()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("append to a closed log")

    def _discard_spool(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
        with self._spools:
            rotated, self._rotated = list(self._rotated.values()), {}
        for r in rotated:
            _discard(r.spool, r.path)
        _discard(self._spool, self._spool_path)


def _discard(spool: BinaryIO, path: Path) -> None:
    with contextlib.suppress(OSError):
        spool.close()
    with contextlib.suppress(OSError):
        path.unlink()


class SegmentReader(Protocol):
    """How the writer reads committed bytes back: the store's range reader."""

    def __call__(
        self, spec: LogSpec, layout: SegmentLayout | None, segment: str, start: int, end: int
    ) -> bytes: ...


def _nothing() -> None:
    """Nothing left to make durable."""
