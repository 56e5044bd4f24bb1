"""Reading a crawl's page events as they are committed, for ``GET /v1/events``.

The crawler appends events to ``events/events-NNNNN.jsonl`` and stores the committed
end of that log in its database at every commit. A tail reads only up to that end,
so it never sees an event that a crash could still take back; it keeps its own
position, so each poll reads only the new bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from trawl.archive.segments import Position
from trawl.errors import StorageError
from trawl.stats import read_meta

PREFIX = "events"


def committed_end(directory: Path) -> Position | None:
    try:
        raw = read_meta(directory, "log.events")
    except StorageError:
        return None
    return Position.load(raw) if raw else None


class EventTail:
    """Committed events of one crawl, in order, from wherever the last read stopped."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._log = directory / PREFIX
        self._pos = Position(1, 0)

    def _path(self, index: int) -> Path:
        return self._log / f"{PREFIX}-{index:05d}.jsonl"

    def read(self, *, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """New committed events with an id above ``after`` (at most ``limit``)."""
        end = committed_end(self._directory)
        out: list[dict[str, Any]] = []
        if end is None or end <= self._pos:
            return out
        index, offset = self._pos.index, self._pos.offset
        full = False
        while not full and (index, offset) < (end.index, end.offset):
            stop = end.offset if index == end.index else None
            data = b""
            path = self._path(index)
            if path.exists():
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read() if stop is None else f.read(max(0, stop - offset))
            # Whole lines only, each line's end tracked so a limit resumes exactly there.
            start = 0
            while (nl := data.find(b"\n", start)) >= 0:
                event = orjson.loads(data[start:nl])
                start = nl + 1
                if int(event["id"]) > after:
                    out.append(event)
                    if limit is not None and len(out) >= limit:
                        full = True
                        break
            offset += start
            if full or index == end.index:
                break
            index, offset = index + 1, 0
        self._pos = Position(index, offset)
        return out
