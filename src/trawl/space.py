"""Free space on the file systems a crawl writes to, against a reserve."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trawl.errors import DiskFullError, free_space
from trawl.storage.open import disk_full_of

__all__ = ["DiskStop", "SpaceGuard"]


class SpaceGuard:
    """Free space on the file systems a crawl writes to, against a reserve."""

    def __init__(self, path: Path, reserve: int) -> None:
        self._reserve = reserve
        self._paths = [path]

    def watch(self, *paths: Path) -> None:
        """Check these too if they are on other file systems (a WARC disk, say)."""
        devices = {p.stat().st_dev for p in self._paths}
        for path in paths:
            device = path.stat().st_dev
            if device not in devices:
                devices.add(device)
                self._paths.append(path)

    def check(self) -> DiskFullError | None:
        """The error to stop with if a file system has less free space than the reserve."""
        if not self._reserve:
            return None
        for path in self._paths:
            free, _mount = free_space(path)
            if free < self._reserve:
                return DiskFullError.at(path, reserve=self._reserve)
        return None


class DiskStop:
    """A crawl's answer to a full disk, shared by all its parts.

    A write that finds the disk full stops the crawl at once and nothing more is
    written, not even a last commit (``halt``); what was written since the last commit
    is redone on resume, as after kill -9. Falling below the reserve stops it cleanly
    (``stop``: in-flight work finishes and is committed).
    """

    def __init__(
        self,
        data_dir: Path,
        guard: SpaceGuard,
        *,
        halt: Callable[[], None],
        stop: Callable[[], None],
    ) -> None:
        self._data_dir = data_dir
        self._guard = guard
        self._halt = halt
        self._stop = stop
        self.full: DiskFullError | None = None  # what stopped the crawl for want of space
        self.failed = False  # a write found the disk full: write nothing more

    def writable(self) -> bool:
        return not self.failed

    def stop_for(self, full: DiskFullError) -> None:
        if not self.failed:
            self.full = full  # also over the reserve's earlier, gentler stop
        self.failed = True
        self._halt()

    def dealt_with(self, exc: Exception) -> bool:
        """True if ``exc`` is a full disk, or comes after one: the caller gives up its
        work instead of recording anything. Other errors are the caller's."""
        full = disk_full_of(exc, self._data_dir)
        if full is not None:
            self.stop_for(full)
        return self.failed

    def check(self) -> None:
        """Below the reserve: stop cleanly."""
        if self.full is None and (low := self._guard.check()) is not None:
            self.full = low
            self._stop()
