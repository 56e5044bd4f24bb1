"""The commit gate: the group commit's fsync off the event loop, safely.

A group commit makes the logs durable (fsync) and then commits the store with their
ends. The fsync takes milliseconds to tenths of a second; on the event loop it would
hold up every host's next request. ``CommitGate.flush`` writes the logs out, takes
their ends, and runs the fsync in a thread while the loop goes on (requests go out,
responses come in). Meanwhile the gate is closed: a stage about to append a log
record and store a reference to it (a WARC record and its fetch row; a text record
and its page row) waits at ``passage``, since its record would lie past the ends
being committed while its reference went into this commit. Writes that reference no
log (leases, robots.txt rules, counters) go on and commit with it, which is harmless.

The caller commits the store right after ``flush`` returns, with no await between:
the gate is open again then, but the stages it releases run only at the next turn of
the loop, after that commit.
"""

from __future__ import annotations

import asyncio

from trawl.models import Position
from trawl.storage.blobs import LogWriters

__all__ = ["CommitGate"]


class CommitGate:
    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()

    async def passage(self) -> None:
        """Wait while a commit makes the logs durable (returns at once otherwise)."""
        if not self._open.is_set():
            await self._open.wait()

    async def flush(self, logs: LogWriters) -> dict[str, Position]:
        """Make ``logs`` durable with the fsync in a thread; the ends to commit."""
        ends, durable = logs.flush()
        self._open.clear()
        try:
            await asyncio.to_thread(durable)
        finally:
            self._open.set()
        return ends
