"""Advisory file locks (``flock``): held while their process lives, dropped by the kernel
when it dies, however it dies (SIGKILL too). The data directory's writer, the service's
manager and the scratch folders' sweep all decide "is its process alive" this way."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

__all__ = ["release", "try_lock"]


def try_lock(path: Path, *, create: bool = True, mode: int = 0o600) -> int | None:
    """A descriptor of ``path`` holding its exclusive lock, or None if another open file
    holds it. Raises ``OSError`` if the file cannot be opened (missing, with ``create``
    off)."""
    flags = os.O_RDWR | os.O_CREAT if create else os.O_RDONLY
    fd = os.open(path, flags, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def release(fd: int) -> None:
    """Drop a lock ``try_lock`` took and close its descriptor."""
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    with contextlib.suppress(OSError):
        os.close(fd)
