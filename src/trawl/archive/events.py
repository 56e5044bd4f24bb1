"""Page events: a durable, rotating JSONL log of new and changed pages.

Each event is one JSON line ``{"id", "type", "time", "url", "status", "content_hash",
"cluster", "warc"}`` with a strictly increasing integer id. The log is a
``SegmentLog`` (plain ``.jsonl`` files, rotated), committed with the crawl's database:
readers see only committed events (the database holds the committed end), so a
consumer that reconnects with its last event id misses nothing and sees nothing
twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trawl.archive.segments import Position, SegmentLog


class EventLog:
    """The writer side, in the crawler process."""

    def __init__(self, log: SegmentLog, *, next_id: int) -> None:
        self._log = log
        self.next_id = next_id

    def publish(self, event_type: str, fields: dict[str, Any]) -> int:
        event_id = self.next_id
        self.next_id += 1
        record = {"id": event_id, "type": event_type, **fields}
        self._log.append(orjson.dumps(record) + b"\n")
        return event_id


def read_events(
    directory: Path, *, committed: Position | None, after: int = 0, prefix: str = "events"
) -> Iterator[dict[str, Any]]:
    """Committed events with an id above ``after``, oldest first."""
    if committed is None or not directory.exists():
        return
    files = []
    for path in directory.glob(f"{prefix}-*.jsonl"):
        try:
            index = int(path.name[len(prefix) + 1 : -len(".jsonl")])
        except ValueError:
            continue
        if index <= committed.index:
            files.append((index, path))
    for index, path in sorted(files):
        limit = committed.offset if index == committed.index else None
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit)
        for line in data.splitlines():
            if not line:
                continue
            event = orjson.loads(line)
            if int(event["id"]) > after:
                yield event
