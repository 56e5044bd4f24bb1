"""Working folders in the temporary directory that outlive no process, even one killed.

A fleet worker without ``--data`` spools the segments it writes (up to a segment's size
each, hundreds of MB) in a folder of its own; a worker killed with SIGKILL cannot remove
it, and a fleet's workers are killed and started again by design. Each such folder
holds a lock file its process keeps locked (``flock``) while it lives; the kernel drops
the lock when the process dies, however it dies. Making a scratch folder first removes
the folders of the same kind whose lock nobody holds, so a machine's temporary directory
holds at most the folders of the processes that run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from trawl.locks import release, try_lock

__all__ = ["Scratch", "sweep"]

_LOCK: Final = ".trawl-lock"


class Scratch:
    """A folder ``<tmp>/<prefix>XXXXXXXX`` of this process's own, removed by ``close``
    (or, if the process is killed, by the next ``Scratch`` of the same prefix)."""

    def __init__(self, prefix: str, *, tmp: Path | None = None) -> None:
        where = tmp or Path(tempfile.gettempdir())
        sweep(where, prefix)
        self.path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
        # Locked under another name, then renamed into place: a sweep that meets the
        # folder before its lock is held sees no lock file and leaves it alone.
        pending = self.path / f"{_LOCK}.new"
        self._fd = try_lock(pending)
        assert self._fd is not None  # a file just made, under a name no sweep opens
        os.rename(pending, self.path / _LOCK)

    def close(self) -> None:
        """Remove the folder and everything in it."""
        if self._fd is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        release(self._fd)
        self._fd = None

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def sweep(tmp: Path, prefix: str) -> list[Path]:
    """Remove the folders ``<tmp>/<prefix>*`` whose process is gone (their lock file
    is not held); returns them. A folder without a lock file is left alone: being
    made, or not a ``Scratch``."""
    removed = []
    for folder in tmp.glob(f"{prefix}*"):
        try:
            fd = try_lock(folder / _LOCK, create=False)
        except OSError:
            continue  # no lock file, or one that cannot be locked: left alone
        if fd is None:
            continue  # held: its process lives
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            release(fd)
    return removed
