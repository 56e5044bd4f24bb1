"""The crawls of ``trawl serve``: each in ``DATA/crawls/<id>/``, each its own process.

A crawl's directory holds ``spec.json`` (what was asked), ``state.json`` (what the
operator wants now: running, paused, stopping, finished, failed), and the crawl's own
data (state.db, WARC, text, events, ``progress.json``). A child process gives real
isolation: a crawl that dies (even of kill -9) takes nothing else with it, and its
own crash safety brings it back. The child runs in its own session, so Ctrl-C at the
server's terminal reaches it only through the manager, and a server killed outright
leaves it running; the next server adopts it (the database lock says it is alive).

Stopping the server stops the children gracefully but leaves their wanted state
alone: the next start resumes every crawl that was running or paused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trawl.fetch.robots_wait import ROBOTS_STOP
from trawl.service.runner import EXIT_FILE, PAUSE_FILE, POLITENESS_ENV, SPEC_FILE, STATE_FILE
from trawl.service.steer import revise
from trawl.storage.open import in_use
from trawl.telemetry import PROGRESS_FILE, read_json, write_json_atomic

log = logging.getLogger("trawl.service")

LOG_FILE = "crawl.log"
RUNTIME_FILE = "runtime.json"
FINISHED_REASONS = ("done", "max pages", "max duration", "interrupted", "aborted", ROBOTS_STOP)
LIVE = ("running", "paused", "stopping")


class CrawlConflictError(Exception):
    """The request does not fit the crawl's state (e.g. pausing a finished crawl)."""


class TooManyCrawlsError(Exception):
    pass


@dataclass
class _Child:
    pid: int
    process: asyncio.subprocess.Process | None  # None: adopted from an earlier server
    monitor: asyncio.Task[None] | None = None


def lock_held(directory: Path) -> bool:
    """Whether a crawl process holds ``directory``'s store right now."""
    return in_use(directory)


class CrawlManager:
    def __init__(
        self,
        root: Path,
        *,
        max_running: int = 8,
        python: str | None = None,
        politeness_dir: Path | None = None,
    ) -> None:
        """``politeness_dir``: the host leases every child crawl shares (None: none)."""
        self.root = root / "crawls"
        self.max_running = max_running
        self._python = python or sys.executable
        self.politeness_dir = politeness_dir
        self._children: dict[str, _Child] = {}
        # Crawls whose process is being started (``_launching``): alive too.
        self._starting: set[str] = set()
        self._spec_lock = asyncio.Lock()  # one revision of a spec at a time
        self._closing = False
        # Whether this process manages the crawls (``start`` was called); a standby
        # server (``leader.py``) only reads them and knows no child.
        self.managing = False

    # -- reading -------------------------------------------------------------------

    def ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / SPEC_FILE).is_file())

    def directory(self, crawl_id: str) -> Path | None:
        if not crawl_id or "/" in crawl_id or crawl_id.startswith("."):
            return None
        path = self.root / crawl_id
        return path if (path / SPEC_FILE).is_file() else None

    def state(self, crawl_id: str) -> dict[str, Any]:
        directory = self.root / crawl_id
        return read_json(directory / STATE_FILE) or {"desired": "failed", "error": "no state"}

    def status(self, crawl_id: str) -> str:
        desired = str(self.state(crawl_id).get("desired"))
        if desired in LIVE and self.managing and not self._alive(crawl_id):
            return "failed"  # wanted alive, but nothing runs it (it could not start)
        return desired

    def running(self) -> int:
        return len(self._children.keys() | self._starting)

    def _alive(self, crawl_id: str) -> bool:
        return crawl_id in self._children or crawl_id in self._starting

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """On server start (or when it takes over from another): adopt live crawls,
        start again those wanted alive."""
        self.managing = True
        for crawl_id in self.ids():
            directory = self.root / crawl_id
            desired = self.state(crawl_id).get("desired")
            if desired not in LIVE:
                continue
            runtime = read_json(directory / RUNTIME_FILE) or {}
            pid = runtime.get("pid")
            if isinstance(pid, int) and lock_held(directory):
                child = _Child(pid=pid, process=None)
                self._children[crawl_id] = child
                child.monitor = asyncio.create_task(self._monitor(crawl_id, child))
                log.info("adopted a running crawl", extra={"crawl": crawl_id, "pid": pid})
                continue
            if desired == "stopping":
                self._set(crawl_id, desired="finished", stopped="stopped by request")
                continue
            log.info("resuming crawl", extra={"crawl": crawl_id, "was": desired})
            with self._launching(crawl_id):
                await self._start_process(crawl_id)

    async def close(self, *, grace: float = 20.0) -> None:
        """On server stop: stop every child gracefully; their wanted state stays."""
        self._closing = True
        children = list(self._children.items())
        for _crawl_id, child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGINT)
        monitors = [c.monitor for _, c in children if c.monitor is not None]
        if monitors:
            _done, pending = await asyncio.wait(monitors, timeout=grace)
            for crawl_id, child in children:
                if child.monitor in pending:
                    log.warning("crawl did not stop in time; killed", extra={"crawl": crawl_id})
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
            if pending:
                await asyncio.wait(pending, timeout=5)

    # -- control -------------------------------------------------------------------

    async def create(self, spec: dict[str, Any]) -> str:
        if self.running() >= self.max_running:
            raise TooManyCrawlsError(
                f"{self.running()} crawls are running (at most {self.max_running})"
            )
        crawl_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)
        directory = self.root / crawl_id
        with self._launching(crawl_id):  # before it is visible: not "failed" while it starts
            directory.mkdir(parents=True)
            state = {"desired": "running", "created": time.time()}
            write_json_atomic(directory / STATE_FILE, state)
            write_json_atomic(directory / SPEC_FILE, spec)  # last: it makes the crawl visible
            log.info("crawl created", extra={"crawl": crawl_id, "seeds": len(spec["seeds"])})
            await self._start_process(crawl_id)
        return crawl_id

    async def pause(self, crawl_id: str) -> None:
        status = self.status(crawl_id)
        if status not in ("running", "paused"):
            raise CrawlConflictError(f"the crawl is {status}; only a running crawl can pause")
        (self.root / crawl_id / PAUSE_FILE).touch()
        self._set(crawl_id, desired="paused")

    async def resume(self, crawl_id: str) -> None:
        status = self.status(crawl_id)
        if status in ("finished", "stopping"):
            raise CrawlConflictError(f"the crawl is {status}; it cannot resume")
        (self.root / crawl_id / PAUSE_FILE).unlink(missing_ok=True)
        if self._alive(crawl_id):
            self._set(crawl_id, desired="running", error=None)
            return
        # Failed: start it again from its state, if there is room (else it stays failed).
        if self.running() >= self.max_running:
            raise TooManyCrawlsError(f"{self.running()} crawls are running")
        with self._launching(crawl_id):
            self._set(crawl_id, desired="running", error=None)
            await self._start_process(crawl_id)

    async def stop(self, crawl_id: str) -> None:
        status = self.status(crawl_id)
        if status in ("finished", "failed"):
            raise CrawlConflictError(f"the crawl is {status} already")
        self._set(crawl_id, desired="stopping")
        child = self._children.get(crawl_id)
        # A runner that has not written progress yet may still be importing, when a
        # SIGINT kills it: it reads the wanted state within its first second instead.
        if (
            child is not None
            and (read_json(self.root / crawl_id / PROGRESS_FILE) or {}).get("pid") == child.pid
        ):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGINT)

    async def steer(self, crawl_id: str, change: dict[str, Any]) -> dict[str, Any]:
        """Record ``change`` (``{"seeds": [...]}`` or ``{"set": {...}}``) as the next
        revision of the crawl's spec; its process applies it within a second (a failed
        crawl when it resumes). Returns the revised spec."""
        status = self.status(crawl_id)
        if status in ("finished", "stopping"):
            raise CrawlConflictError(f"the crawl is {status}; start a new crawl instead")
        path = self.root / crawl_id / SPEC_FILE
        async with self._spec_lock:
            spec = revise(read_json(path) or {}, change, at=time.time())
            write_json_atomic(path, spec)
        log.info("crawl steered", extra={"crawl": crawl_id, "revision": spec["revision"]})
        return spec

    async def delete(self, crawl_id: str) -> None:
        """Remove a crawl that has ended, with all its data."""
        status = self.status(crawl_id)
        if status not in ("finished", "failed") or self._alive(crawl_id):
            raise CrawlConflictError(f"the crawl is {status}; stop it before deleting it")
        directory = self.root / crawl_id
        if lock_held(directory):
            raise CrawlConflictError("a process still holds the crawl's data")
        # The spec first: without it the crawl is no longer listed, even if the rest
        # of the removal were cut short.
        (directory / SPEC_FILE).unlink(missing_ok=True)
        await asyncio.to_thread(shutil.rmtree, directory, ignore_errors=True)
        log.info("crawl deleted", extra={"crawl": crawl_id})

    # -- processes -----------------------------------------------------------------

    def _set(self, crawl_id: str, **changes: Any) -> None:
        path = self.root / crawl_id / STATE_FILE
        state = {**(read_json(path) or {}), **changes, "changed": time.time()}
        write_json_atomic(path, state)

    @contextlib.contextmanager
    def _launching(self, crawl_id: str) -> Iterator[None]:
        """The crawl counts as alive while its process is being started."""
        self._starting.add(crawl_id)
        try:
            yield
        finally:
            self._starting.discard(crawl_id)

    async def _start_process(self, crawl_id: str) -> None:
        directory = self.root / crawl_id
        (directory / EXIT_FILE).unlink(missing_ok=True)
        with open(directory / LOG_FILE, "ab") as out:  # noqa: ASYNC230 - a local append
            process = await asyncio.create_subprocess_exec(
                self._python,
                "-m",
                "trawl.service.runner",
                str(directory),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
                env={**os.environ, POLITENESS_ENV: str(self.politeness_dir or "none")},
            )
        write_json_atomic(directory / RUNTIME_FILE, {"pid": process.pid, "at": time.time()})
        child = _Child(pid=process.pid, process=process)
        self._children[crawl_id] = child
        child.monitor = asyncio.create_task(self._monitor(crawl_id, child))

    async def _monitor(self, crawl_id: str, child: _Child) -> None:
        directory = self.root / crawl_id
        if child.process is not None:
            rc: int | None = await child.process.wait()
        else:
            while lock_held(directory):  # noqa: ASYNC110 - not our child: nothing to await
                await asyncio.sleep(0.5)
            rc = None
        end = read_json(directory / EXIT_FILE) or {}
        stopped = end.get("stopped")
        log.info("crawl process ended", extra={"crawl": crawl_id, "rc": rc, "stopped": stopped})
        # The outcome is written before the child is forgotten: ``status`` (also read
        # from the API's threads) takes a live crawl without a child for one that
        # could not start, so the other order showed "failed" for a moment.
        if self._closing:
            self._children.pop(crawl_id, None)
            return  # the server is stopping: resume this crawl on its next start
        if stopped in FINISHED_REASONS and rc in (0, None):
            wanted = self.state(crawl_id).get("desired")
            reason = "stopped by request" if wanted == "stopping" else stopped
            self._set(crawl_id, desired="finished", stopped=reason, finished=time.time())
        else:
            error = end.get("error") or f"the crawl process exited with {rc}: {_tail(directory)}"
            self._set(crawl_id, desired="failed", error=error, finished=time.time())
        self._children.pop(crawl_id, None)


def _tail(directory: Path, size: int = 600) -> str:
    try:
        with open(directory / LOG_FILE, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""
