"""Which ``trawl serve`` manages the crawls of a data directory: the holder of a lock.

Any number of ``trawl serve`` processes may serve one data directory at once: search
and every read go to the index and the crawls' stores, which take many readers beside
their one writer. Starting, pausing and stopping crawls, and running them, is one
process's job, or a crawl could be started twice: the process holding an exclusive
``flock`` on ``DATA/service.lock`` is the manager; the others are standbys, which answer
control calls with 503 (naming the manager) and try to take the lock once a second.
The kernel lets go of a lock when its process dies, even of kill -9, so a standby takes
over within about a second and adopts the crawls still running (each crawl runs in a
process of its own session, which the manager's death does not end) or starts again
those that should run. The lock file also says who holds it (pid, host, since when).
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

import orjson

from trawl.locks import release, try_lock

LOCK_FILE = "service.lock"


class ManagerLock:
    """The lock on ``DATA/service.lock`` (not thread-safe: the event loop's)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_take(self) -> bool:
        """Take the lock if no other process holds it; whether this one holds it now."""
        if self._fd is not None:
            return True
        fd = try_lock(self.path)
        if fd is None:
            return False
        about = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, orjson.dumps(about), 0)
        self._fd = fd
        return True

    def holder(self) -> dict[str, Any]:
        """Who holds (or last held) the lock, as it wrote it ({} if unknown)."""
        try:
            found = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return found if isinstance(found, dict) else {}

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            release(fd)
