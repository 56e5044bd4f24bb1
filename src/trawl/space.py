"""Free space on the file systems a crawl writes to, against a reserve."""

from __future__ import annotations

from pathlib import Path

from trawl.errors import DiskFullError, free_space

__all__ = ["SpaceGuard"]


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
