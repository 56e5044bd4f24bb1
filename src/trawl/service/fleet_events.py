"""A fleet crawl's committed page events, for ``GET /v1/events`` of ``trawl serve --redis``.

Each worker writes its own event log (``events@<writer>``) and numbers its events
itself, so an event id alone does not say where a reader stands. The cursor is one
last-seen id per writer, written ``writer=id,writer=id`` (sorted, writers of a fleet
are host.pid.random names): the JSON page's ``last_id`` and each SSE event's ``id:``,
which a reconnecting client sends back as ``after`` or ``Last-Event-ID``. Each event
carries its ``writer``. Only committed events are read, as for a data directory.
"""

from __future__ import annotations

import re
from typing import Any

from trawl.archive.events import read_span
from trawl.models import Position
from trawl.storage.blobs import EVENT_LOG, committed_ends
from trawl.storage.place import CrawlPlace

Cursor = dict[str, int]  # writer -> the last event id read from its log

_PART = re.compile(r"([A-Za-z0-9._-]*)=(\d{1,18})")


class CursorError(ValueError):
    """An ``after`` / ``Last-Event-ID`` that is not a fleet event cursor."""


def parse_cursor(text: str | None) -> Cursor:
    """``writer=id,...`` (empty or ``0``: from the start)."""
    if not text or text == "0":
        return {}
    out: Cursor = {}
    for part in text.split(","):
        found = _PART.fullmatch(part.strip())
        if found is None:
            raise CursorError("after is a fleet event cursor: writer=id,writer=id")
        out[found[1]] = int(found[2])
    return out


def format_cursor(cursor: Cursor) -> str:
    return ",".join(f"{w}={n}" for w, n in sorted(cursor.items())) or "0"


class FleetEventTail:
    """Committed events of every writer of one fleet crawl, after a cursor."""

    def __init__(self, place: CrawlPlace, cursor: Cursor) -> None:
        self._place = place
        self._blobs = place.blob_store()
        self.cursor = dict(cursor)
        self._pos: dict[str, Position] = {}

    def read(self, *, limit: int) -> list[dict[str, Any]]:
        """New committed events (at most ``limit``), writer by writer; each with its
        ``writer`` and the ``cursor`` that stands just after it."""
        reader = self._place.reader()
        try:
            ends = committed_ends(reader.committed_logs(), EVENT_LOG)
        finally:
            reader.close()
        out: list[dict[str, Any]] = []
        for spec, end in ends:
            writer = spec.writer or ""
            start = self._pos.get(writer, Position(1, 0))
            if end <= start or len(out) >= limit:
                continue
            after = self.cursor.get(writer, 0)
            found, self._pos[writer] = read_span(
                self._blobs, start, end, after=after, limit=limit - len(out), log=spec
            )
            for event in found:
                self.cursor[writer] = int(event["id"])
                out.append({**event, "writer": writer, "cursor": format_cursor(self.cursor)})
        return out
