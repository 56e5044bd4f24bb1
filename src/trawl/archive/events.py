"""Page events: a durable, rotating JSONL log of new and changed pages.

Each event is one JSON line ``{"id", "type", "time", "url", "status", "content_hash",
"cluster", "warc"}`` with a strictly increasing integer id. The log is the blob
store's event log (``.jsonl`` segments, rotated), committed with the crawl's state:
readers see only committed events (the store holds the committed end), so a
consumer that reconnects with its last event id misses nothing and sees nothing
twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from trawl.models import Position
from trawl.storage.blobs import EVENT_LOG, LogSpec, SegmentWriter

if TYPE_CHECKING:
    from trawl.storage.blobs import BlobStore


class EventLog:
    """The writer side, in the crawler process."""

    def __init__(self, log: SegmentWriter, *, next_id: int) -> None:
        self._log = log
        self.next_id = next_id

    def publish(self, event_type: str, fields: dict[str, Any]) -> int:
        event_id = self.next_id
        self.next_id += 1
        record = {"id": event_id, "type": event_type, **fields}
        self._log.append(orjson.dumps(record) + b"\n")
        return event_id


def read_span(
    blobs: BlobStore,
    start: Position,
    end: Position,
    *,
    after: int = 0,
    limit: int | None = None,
    log: LogSpec = EVENT_LOG,
) -> tuple[list[dict[str, Any]], Position]:
    """Events with an id above ``after`` (at most ``limit``) from ``start`` up to ``end``
    (a committed end) of ``log`` (one writer's), and the position after the last line
    read, to go on from there.
    """
    out: list[dict[str, Any]] = []
    index, offset = start.index, start.offset
    while (index, offset) < (end.index, end.offset):
        stop = end.offset if index == end.index else None
        data = blobs.read_range(log, log.segment(index), offset, stop)
        # Whole lines only, each line's end tracked so a limit resumes exactly there.
        pos = 0
        while (nl := data.find(b"\n", pos)) >= 0:
            line, pos = data[pos:nl], nl + 1
            if not line:
                continue
            event = orjson.loads(line)
            if int(event["id"]) > after:
                out.append(event)
                if limit is not None and len(out) >= limit:
                    return out, Position(index, offset + pos)
        offset += pos
        if index == end.index:
            break
        index, offset = index + 1, 0
    return out, Position(index, offset)


def read_events(
    blobs: BlobStore, *, committed: Position | None, after: int = 0
) -> Iterator[dict[str, Any]]:
    """Committed events with an id above ``after``, oldest first."""
    if committed is None:
        return
    yield from read_span(blobs, Position(1, 0), committed, after=after)[0]
