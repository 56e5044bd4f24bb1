"""One crawl started through the API, in its own process: ``python -m trawl.service.runner DIR``.

``DIR`` holds ``spec.json`` (the checked request). The same command starts the crawl
and resumes it (the seeds are offered again; the seen set makes that a no-op), so a
crawl killed before its first commit loses nothing either. While it runs it writes
``progress.json`` about once a second and obeys the ``pause`` file; SIGINT or SIGTERM
stops it gracefully (a second one aborts). At the end it writes ``exit.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from trawl.crawl import Crawl
from trawl.errors import ConfigError, StorageError
from trawl.logs import CRAWL_ID, setup_logging
from trawl.records import CrawlSummary
from trawl.service.spec import PRIORITIES, to_config
from trawl.storage.open import open_reader
from trawl.telemetry import PROGRESS_FILE, Telemetry, write_json_atomic

log = logging.getLogger("trawl.service.runner")

PAUSE_FILE = "pause"
EXIT_FILE = "exit.json"
SPEC_FILE = "spec.json"
INTERVAL = 1.0


def _progress(telemetry: Telemetry, crawl: Crawl, *, state: str, crawl_id: str) -> dict[str, Any]:
    return telemetry.progress(
        snapshot=asdict(crawl.snapshot()),
        counters=crawl.counters.all(),
        state=state,
        crawl_id=crawl_id,
    )


async def _watch(crawl: Crawl, telemetry: Telemetry, directory: Path, crawl_id: str) -> None:
    """Follow the pause file and publish progress, once a second."""
    pause = directory / PAUSE_FILE
    while True:
        wanted = pause.exists()
        if wanted and not crawl.paused:
            crawl.pause()
            log.info("paused: no new URLs; in-flight work finishes")
        elif not wanted and crawl.paused:
            crawl.resume()
            log.info("resumed")
        state = "paused" if crawl.paused else "running"
        write_json_atomic(
            directory / PROGRESS_FILE,
            _progress(telemetry, crawl, state=state, crawl_id=crawl_id),
        )
        await asyncio.sleep(INTERVAL)


async def _run(crawl: Crawl, telemetry: Telemetry, directory: Path, crawl_id: str) -> CrawlSummary:
    loop = asyncio.get_running_loop()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        log.info("stopping" if signals == 1 else "aborting", extra={"signal": signals})
        if signals == 1:
            crawl.request_stop()
        else:
            crawl.abort()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    if (directory / PAUSE_FILE).exists():
        crawl.pause()  # a crawl paused before a restart comes back paused
    watcher = asyncio.create_task(_watch(crawl, telemetry, directory, crawl_id))
    try:
        return await crawl.run()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        # From here to exit a signal must not tear the close in half.
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_IGN)


def run(directory: Path) -> int:
    crawl_id = directory.name
    CRAWL_ID.set(crawl_id)
    setup_logging()
    try:
        spec = orjson.loads((directory / SPEC_FILE).read_bytes())
        os.nice(PRIORITIES.get(spec.get("priority", "normal"), 0))
        telemetry = Telemetry()
        crawl = Crawl(to_config(spec, directory), telemetry=telemetry)
        reader = open_reader(crawl.config.data_dir)
        try:
            telemetry.seed_hosts(reader)
        finally:
            reader.close()
    except (OSError, ValueError, ConfigError, StorageError) as exc:
        log.error("cannot start: %s", exc)
        write_json_atomic(directory / EXIT_FILE, {"stopped": "error", "error": str(exc)})
        return 2
    log.info("crawl starting", extra={"pid": os.getpid(), "seeds": len(spec["seeds"])})
    try:
        summary = asyncio.run(_run(crawl, telemetry, directory, crawl_id))
        final = _progress(telemetry, crawl, state="exited", crawl_id=crawl_id)
    finally:
        crawl.close()
    snap = summary.snapshot
    write_json_atomic(directory / PROGRESS_FILE, {**final, "stopped": summary.stopped})
    write_json_atomic(directory / EXIT_FILE, {"stopped": summary.stopped, "at": time.time()})
    log.info(
        "crawl %s",
        summary.stopped,
        extra={"fetched": snap.fetched, "failed": snap.failed, "known": snap.known},
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m trawl.service.runner CRAWL_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(run(Path(sys.argv[1])))
