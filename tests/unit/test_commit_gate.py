"""The group commit's gate: the fsync runs in a thread, the event loop goes on, and only
the writers that would reference a log record wait until the store has committed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from trawl.models import Position
from trawl.storage.gate import CommitGate


class SlowLogs:
    """LogWriters whose fsync waits until the test lets it go."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.synced = False

    def flush(self) -> tuple[dict[str, Position], Any]:
        def durable() -> None:
            assert self.go.wait(10)
            self.synced = True

        return {"text": Position(1, 42)}, durable


def test_writers_wait_at_the_gate_while_the_loop_goes_on() -> None:
    async def go() -> None:
        gate, logs = CommitGate(), SlowLogs()
        order: list[str] = []
        await gate.passage()  # open: returns at once

        async def commit() -> None:
            ends = await gate.flush(logs)  # type: ignore[arg-type]
            assert logs.synced and ends == {"text": Position(1, 42)}
            order.append("store committed")  # synchronously after flush, as Crawl does

        async def writer() -> None:
            await gate.passage()
            order.append("record appended")

        async def ticker() -> None:
            for _ in range(5):
                await asyncio.sleep(0)
                order.append("tick")

        committing = asyncio.create_task(commit())
        await asyncio.sleep(0)  # the commit has flushed and closed the gate
        writing = asyncio.create_task(writer())
        await ticker()  # the loop is not blocked by the fsync
        assert order == ["tick"] * 5
        logs.go.set()
        await asyncio.gather(committing, writing)
        assert order[5:] == ["store committed", "record appended"]

    asyncio.run(go())


def test_a_failed_fsync_opens_the_gate_and_raises() -> None:
    class Broken(SlowLogs):
        def flush(self) -> tuple[dict[str, Position], Any]:
            def durable() -> None:
                raise OSError(5, "I/O error")

            return {}, durable

    async def go() -> None:
        gate = CommitGate()
        try:
            await gate.flush(Broken())  # type: ignore[arg-type]
        except OSError:
            pass
        else:
            raise AssertionError("the fsync's error is the commit's")
        await asyncio.wait_for(gate.passage(), 1.0)

    asyncio.run(go())
