"""The link graph: every followed page's links, as a compact log committed with the page.

For each page whose links the parse stage takes (not a duplicate, not a page of no
text), one JSON line: ``{"u": source URL (the URL that answered), "t": fetch time,
"l": [[target, anchor], ...] (followed, in page order), "n": [[target, anchor], ...]
(not followed: rel=nofollow, or every link of a nofollow page; omitted when none)}``.
Anchors are capped (``parse.page.ANCHOR_CHARS``). Lines are buffered and written at
each group commit, through the blob store's link log (``LINK_LOG``: local files or
S3), as the next zstd block of one stream per segment: pages repeat their site's
navigation, and a stream lets every commit's block refer back to the earlier ones of
its segment, 4 MiB of links back (about 12 bytes a link on the bench's web, 10 at
zstd's level 9, against 15 for a frame per commit). The
block goes in before the commit that acknowledges its pages, so a page's links are
committed exactly when the page is, and a page parsed again after a crash writes
them once: the log is cut back to the committed end, a block boundary (a flushed
block decodes without what follows). A writer never continues a stream it did not
start: it opens a fresh segment before its first block, and at each rotation, so a
segment is one stream, its frame left open at its end.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson
import zstandard

from trawl.models import Position
from trawl.storage.blobs import LogSpec, SegmentWriter

if TYPE_CHECKING:
    from trawl.storage.blobs import BlobStore

__all__ = ["LinkLog", "read_link_records"]

_CHUNK = 1 << 20

# zstd's level 3 with a 4 MiB window: a block refers back to the site's earlier pages
# as far as level 9 did (its window), at a third of its CPU and 6 MB of memory rather
# than 15 (level 9's match tables). Measured on the extraction benchmark's real pages
# (100+ links each): 33 against 112 us a page seen once, and with three visits per
# site, interleaved, 12 against 39 us and 752 against 628 bytes a page; level 3's own
# 2 MiB window loses the revisits (1,505 bytes).
LEVEL = 3
WINDOW_LOG = 22
_PARAMS = zstandard.ZstdCompressionParameters.from_level(LEVEL, window_log=WINDOW_LOG)


class LinkLog:
    """The writer side, in the process that runs the parse stage."""

    def __init__(self, log: SegmentWriter) -> None:
        self._log = log
        self._zstd = zstandard.ZstdCompressor(compression_params=_PARAMS)
        self._stream: Any = None  # the compressor of this writer's current segment
        self._lines: list[bytes] = []
        self.pages = 0
        self.links = 0

    def add(
        self,
        source: str,
        fetched_at: float,
        links: Sequence[str],
        anchors: Sequence[str],
        unfollowed: Sequence[tuple[str, str]],
    ) -> None:
        """Buffer one page's links (``anchors`` of ``links``, in order; none: "")."""
        record: dict[str, Any] = {
            "u": source,
            "t": fetched_at,
            "l": [[url, anchors[i] if i < len(anchors) else ""] for i, url in enumerate(links)],
        }
        if unfollowed:
            record["n"] = [list(pair) for pair in unfollowed]
        self._lines.append(orjson.dumps(record) + b"\n")
        self.pages += 1
        self.links += len(links) + len(unfollowed)

    def flush(self) -> None:
        """Write what is buffered as the stream's next block (before the commit that
        covers it)."""
        if not self._lines:
            return
        data = b"".join(self._lines)
        self._lines.clear()
        block = self._block(data) if self._stream is not None else None
        if block is None or self._log.would_rotate(len(block)):
            if self._log.position().offset > 0:
                self._log.rotate()  # a new segment, a new stream
            self._stream = self._zstd.compressobj()
            block = self._block(data)
        self._log.append(block)

    def _block(self, data: bytes) -> bytes:
        stream = self._stream
        return bytes(stream.compress(data) + stream.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK))


def read_link_records(
    blobs: BlobStore, spec: LogSpec, end: Position, *, bad: list[int] | None = None
) -> Iterator[dict[str, Any]]:
    """Every committed record of one writer's link log (up to ``end``), in order.

    A line that is not a record is counted in ``bad[0]`` (none in a healthy log).
    """
    for index in range(1, end.index + 1):
        stop = end.offset if index == end.index else None
        with blobs.open_range(spec, spec.segment(index), 0, stop) as raw:
            for line in _lines(raw):
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    record = None
                if isinstance(record, dict) and isinstance(record.get("u"), str):
                    yield record
                elif bad is not None:
                    bad[0] += 1


def _lines(raw: Any) -> Iterator[bytes]:
    """The lines of one segment's stream (its frame may be left open at its end)."""
    stream = zstandard.ZstdDecompressor().decompressobj()
    rest = b""
    while chunk := raw.read(_CHUNK):
        lines = (rest + stream.decompress(chunk)).split(b"\n")
        rest = lines.pop()
        yield from (line for line in lines if line)
    if rest:
        yield rest
