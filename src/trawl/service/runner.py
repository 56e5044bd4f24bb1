"""One crawl started through the API, in its own process: ``python -m trawl.service.runner DIR``.

``DIR`` holds ``spec.json`` (the checked request, with the changes made since:
``service/steer.py``). The same command starts the crawl and resumes it (the seeds are
offered again; the seen set makes that a no-op), so a crawl killed before its first
commit loses nothing either. While it runs it writes ``progress.json`` about once a
second, obeys the ``pause`` file, and follows the spec's revisions (new seeds, limits,
delay), each applied, published as an event and recorded as applied in one commit;
SIGINT or SIGTERM stops it gracefully (a second one aborts). At the end it writes
``exit.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from trawl.config import parse_politeness_dir
from trawl.crawl import Crawl
from trawl.errors import ConfigError, StorageError
from trawl.logs import CRAWL_ID, setup_logging
from trawl.parse.stage import iso_time
from trawl.records import CrawlSummary
from trawl.service.spec import PRIORITIES, seed_lines, to_config
from trawl.service.steer import changes_after
from trawl.storage.open import open_reader
from trawl.telemetry import PROGRESS_FILE, Telemetry, read_json, write_json_atomic

log = logging.getLogger("trawl.service.runner")

PAUSE_FILE = "pause"
EXIT_FILE = "exit.json"
SPEC_FILE = "spec.json"
STATE_FILE = "state.json"  # what the operator wants (the manager writes it)
REVISION_META = "spec.revision"  # the last revision of the spec the crawl applied
INTERVAL = 1.0
# The host leases the server's crawls share (set by the manager; default DATA/hosts).
POLITENESS_ENV = "TRAWL_POLITENESS_DIR"


def _progress(telemetry: Telemetry, crawl: Crawl, *, state: str, crawl_id: str) -> dict[str, Any]:
    return telemetry.progress(
        snapshot=asdict(crawl.snapshot()),
        counters=crawl.counters.all(),
        state=state,
        crawl_id=crawl_id,
    )


class SpecFollower:
    """Applies the revisions of ``spec.json`` the crawl has not applied yet."""

    def __init__(self, crawl: Crawl, directory: Path) -> None:
        self._crawl = crawl
        self._path = directory / SPEC_FILE
        self._directory = directory
        self.applied = int(crawl.store.meta.get(REVISION_META) or 0)
        self._seen: float | None = None  # the spec's mtime at the last look

    def poll(self) -> int:
        """Apply what is new; how many revisions were applied."""
        try:
            mtime = self._path.stat().st_mtime
        except OSError:
            return 0
        if mtime == self._seen:
            return 0
        self._seen = mtime
        spec = read_json(self._path) or {}
        changes = changes_after(spec, self.applied)
        if not changes:
            return 0
        crawl = self._crawl
        if any("set" in change for change in changes):
            config = to_config(spec, self._directory)
            crawl.reconfigure(config.with_changes(politeness_dir=crawl.config.politeness_dir))
        events = crawl.events  # beside the page events (the runner runs every role)
        for change in changes:
            fields: dict[str, Any] = {
                "time": iso_time(change["at"]),
                "revision": change["revision"],
            }
            if "seeds" in change:
                added = crawl.add_seeds(seed_lines(change["seeds"]))
                events.publish("crawl.seeds", {**fields, "seeds": change["seeds"], "added": added})
            else:
                events.publish("crawl.changed", {**fields, "set": change.get("set", {})})
            log.info("spec revision %d applied", change["revision"])
        self.applied = int(changes[-1]["revision"])
        # In the same commit as the changes' effects and their events.
        crawl.store.meta.set(REVISION_META, str(self.applied))
        return len(changes)


async def _watch(crawl: Crawl, telemetry: Telemetry, directory: Path, crawl_id: str) -> None:
    """Follow the pause file and the spec, and publish progress, once a second."""
    pause = directory / PAUSE_FILE
    follower = SpecFollower(crawl, directory)
    stopping = False
    while True:
        follower.poll()
        # A stop asked before this process could take a signal (the manager sends
        # SIGINT only once this process writes progress: one sent while Python still
        # imports would kill it mid-import) is read from the wanted state.
        if not stopping and (read_json(directory / STATE_FILE) or {}).get("desired") == "stopping":
            stopping = True
            log.info("stopping: asked for")
            crawl.request_stop()
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


def politeness_dir(directory: Path, env: Mapping[str, str]) -> Path | None:
    """The server's, shared by all its crawls: the manager's choice, else DATA/hosts
    (``directory`` is DATA/crawls/<id>)."""
    if POLITENESS_ENV in env:
        return parse_politeness_dir(env[POLITENESS_ENV])
    return directory.resolve().parent.parent / "hosts"


def run(directory: Path) -> int:
    crawl_id = directory.name
    CRAWL_ID.set(crawl_id)
    setup_logging()
    try:
        spec = orjson.loads((directory / SPEC_FILE).read_bytes())
        os.nice(PRIORITIES.get(spec.get("priority", "normal"), 0))
        telemetry = Telemetry()
        config = to_config(spec, directory).with_changes(
            politeness_dir=politeness_dir(directory, os.environ)
        )
        crawl = Crawl(config, telemetry=telemetry)
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
    urls, hosts = summary.robots_waiting
    log.info(
        "crawl %s",
        summary.stopped,
        extra={
            "fetched": snap.fetched,
            "failed": snap.failed,
            "known": snap.known,
            "robots_waiting_urls": urls,
            "robots_waiting_hosts": hosts,
        },
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m trawl.service.runner CRAWL_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(run(Path(sys.argv[1])))
