"""The exception tree: every error trawl raises on purpose derives from TrawlError."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path


class TrawlError(Exception):
    """Base class of every error trawl raises on purpose."""


class UrlError(TrawlError, ValueError):
    """A URL that cannot be put in normal form (no scheme, bad port, bad IDN, ...)."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(f"{reason}: {url[:200]!r}")
        self.reason = reason
        self.url = url


class BlockedAddressError(TrawlError):
    """The address guard refused a host or IP (SSRF protection)."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        super().__init__(f"{host} -> {address}: {reason}")
        self.host = host
        self.address = address
        self.reason = reason


class ConfigError(TrawlError, ValueError):
    """A setting that is invalid or inconsistent."""


class StorageError(TrawlError):
    """The durable store is unusable (corrupt, locked by another crawl, ...)."""


class DataDirInUseError(StorageError):
    """Another trawl process holds the data directory's lock (a crawl is running)."""


class SessionLostError(StorageError):
    """A fleet worker's session was rolled back by another worker (it was silent too
    long): nothing since its last commit may be kept; a new session may go on."""


class DiskFullError(StorageError):
    """A write failed for want of space, or free space fell below the crawl's reserve.

    The first covers ENOSPC, EDQUOT and SQLite's "database or disk is full" from any
    of the crawl's files (WARC, text and event segments, the database, the index);
    the second is the crawl's own guard (``reserve`` set). Either stops the crawl
    cleanly; it resumes where it stopped once there is space.
    """

    def __init__(self, path: Path, *, free: int, mount: Path, reserve: int | None = None) -> None:
        if reserve is None:
            message = f"disk full writing {path} ({_size(free)} free on {mount})"
        else:
            message = (
                f"low disk space for {path}: {_size(free)} free on {mount}, less than "
                f"the {_size(reserve)} reserve (min_free_space)"
            )
        super().__init__(message)
        self.path = path
        self.free = free
        self.mount = mount
        self.reserve = reserve

    @classmethod
    def at(cls, path: Path, *, reserve: int | None = None) -> DiskFullError:
        """The error for ``path``, with the free space of its file system now."""
        free, mount = free_space(path)
        return cls(path, free=free, mount=mount, reserve=reserve)


# What a full disk (or a full quota) looks like when it comes back as text: SQLite's
# message, and the OS error that tantivy (Rust) reports in its own words.
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_FULL_TEXTS = (
    "database or disk is full",
    "no space left on device",
    "disk quota exceeded",
    f"os error {errno.ENOSPC})",
    f"os error {errno.EDQUOT})",
)
# An I/O error with (almost) no space left is taken for a full disk: SQLite reports a
# full disk while growing its shared-memory file as "disk I/O error", and tantivy's
# indexing thread, killed by one, as a writer killed by "io::Error most likely".
_IO_TEXTS = ("disk i/o error", "io error", "io::error", "index writer was killed")
_NEARLY_NOTHING = 1024 * 1024


def as_disk_full(exc: BaseException, path: Path) -> DiskFullError | None:
    """The ``DiskFullError`` that ``exc`` (or an exception it was raised from) is, if
    any; ``path`` names the file or directory being written when ``exc`` does not."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFullError):
            return current
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return DiskFullError.at(Path(current.filename) if current.filename else path)
        text = str(current).lower()
        if any(t in text for t in _FULL_TEXTS):
            return DiskFullError.at(path)
        io_error = any(t in text for t in _IO_TEXTS) or (
            isinstance(current, OSError) and current.errno == errno.EIO
        )
        if io_error and free_space(path)[0] < _NEARLY_NOTHING:
            return DiskFullError.at(path)
        current = current.__cause__ or current.__context__
    return None


def free_space(path: Path) -> tuple[int, Path]:
    """Bytes free (to this user) on the file system holding ``path``, and its mount point."""
    existing = Path(os.path.realpath(path))  # a symlinked directory: where it leads
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    mount = existing if existing.is_dir() else existing.parent
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    return free, mount


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"
