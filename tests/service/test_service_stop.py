"""A crawl process's start and end as the manager sees them.

A stop asked while the crawl's process is still starting: it stops, it does not die.

A SIGINT that reaches a Python process while it still imports kills it (a
KeyboardInterrupt in an import: exit -2, the crawl "failed"); on a loaded machine a
crawl's process takes seconds to start. The manager sends the signal only once the
runner writes progress; before that the runner reads the wanted state itself.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from trawl.service.manager import CrawlManager
from trawl.service.spec import check_spec


async def test_a_stop_before_the_process_is_up_stops_it_cleanly(tmp_path: Path) -> None:
    slow = tmp_path / "slow-python"  # a Python that takes a while to start, as under load
    slow.write_text(f'#!/bin/sh\nsleep 1.5\nexec "{sys.executable}" "$@"\n')
    slow.chmod(0o755)
    manager = CrawlManager(tmp_path / "data", python=str(slow), politeness_dir=None)
    await manager.start()
    try:
        spec = check_spec({"seeds": ["http://crawl.invalid/"], "delay": 5})
        crawl_id = await manager.create(spec)
        await manager.stop(crawl_id)  # the process is still starting
        for _ in range(600):
            if manager.status(crawl_id) not in ("running", "stopping"):
                break
            await asyncio.sleep(0.1)
        state = manager.state(crawl_id)
        assert (state["desired"], state.get("stopped")) == ("finished", "stopped by request"), state
    finally:
        await manager.close()


class _Watched(dict[str, Any]):
    """The manager's children, asking the crawl's status the moment before one is
    known and the moment after it is forgotten."""

    def __init__(self, manager: CrawlManager) -> None:
        super().__init__()
        self.manager = manager
        self.before: list[str] = []
        self.seen: list[str] = []

    def __setitem__(self, key: str, value: Any) -> None:
        self.before.append(self.manager.status(key))
        super().__setitem__(key, value)

    def pop(self, key: str, *default: Any) -> Any:
        found = super().pop(key, *default)
        self.seen.append(self.manager.status(key))
        return found


async def test_a_crawl_never_reads_as_failed_while_it_starts_or_ends(tmp_path: Path) -> None:
    # The API reads a crawl's status from its threads while the event loop starts its
    # process or ends it: at no moment between may it read "failed" (a CI run saw it
    # at the end).
    done = tmp_path / "done-python"  # a crawl process that ends at once, "done"
    done.write_text('#!/bin/sh\nprintf \'{"stopped": "done"}\' > "$3/exit.json"\n')
    done.chmod(0o755)
    manager = CrawlManager(tmp_path / "data", python=str(done), politeness_dir=None)
    watched = _Watched(manager)
    manager._children = watched
    await manager.start()
    try:
        crawl_id = await manager.create(check_spec({"seeds": ["http://crawl.invalid/"]}))
        for _ in range(600):
            if watched.seen:
                break
            await asyncio.sleep(0.05)
        assert watched.before == ["running"]
        assert watched.seen == ["finished"]
        assert manager.state(crawl_id)["stopped"] == "done"
        # Resumed (as after a failure), it is "running" again before its process is.
        manager._set(crawl_id, desired="failed")
        await manager.resume(crawl_id)
        for _ in range(600):
            if len(watched.seen) == 2:
                break
            await asyncio.sleep(0.05)
        assert watched.before == ["running", "running"]
        assert watched.seen == ["finished", "finished"]
    finally:
        await manager.close()
