"""Reading a crawl's page events as they are committed, for ``GET /v1/events``.

The crawler appends events to ``events/events-NNNNN.jsonl`` and stores the committed
end of that log in its database at every commit. A tail reads only up to that end,
so it never sees an event that a crash could still take back; it keeps its own
position, so each poll reads only the new bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trawl.archive.events import read_span
from trawl.errors import StorageError
from trawl.models import Position
from trawl.storage.blobs import EVENT_LOG
from trawl.storage.open import open_blobs, open_reader


def committed_end(directory: Path) -> Position | None:
    try:
        reader = open_reader(directory)
    except StorageError:
        return None
    try:
        return reader.committed_logs().get(EVENT_LOG.name)
    except StorageError:
        return None
    finally:
        reader.close()


class EventTail:
    """Committed events of one crawl, in order, from wherever the last read stopped."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._blobs = open_blobs(directory)
        self._pos = Position(1, 0)

    def read(self, *, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """New committed events with an id above ``after`` (at most ``limit``)."""
        end = committed_end(self._directory)
        if end is None or end <= self._pos:
            return []
        found, self._pos = read_span(self._blobs, self._pos, end, after=after, limit=limit)
        return found
