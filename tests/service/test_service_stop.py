"""A stop asked while the crawl's process is still starting: it stops, it does not die.

A SIGINT that reaches a Python process while it still imports kills it (a
KeyboardInterrupt in an import: exit -2, the crawl "failed"); on a loaded machine a
crawl's process takes seconds to start. The manager sends the signal only once the
runner writes progress; before that the runner reads the wanted state itself.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

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
