"""File locks: one holder at a time, and a holder killed with SIGKILL holds nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from trawl.locks import release, try_lock

_CHILD = """
import sys, time
from pathlib import Path
from trawl.locks import try_lock
assert try_lock(Path(sys.argv[1])) is not None
print("held", flush=True)
time.sleep(60)
"""


def test_one_holder_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    fd = try_lock(path)
    assert fd is not None and path.exists()
    # Another open file of the same path, even in this process, is turned away.
    assert try_lock(path) is None
    assert try_lock(path, create=False) is None
    release(fd)
    again = try_lock(path, create=False)
    assert again is not None
    release(again)


def test_a_missing_file_is_not_made_without_create(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        try_lock(tmp_path / "none.lock", create=False)
    assert not (tmp_path / "none.lock").exists()


def test_a_new_lock_file_is_the_owner_s_alone_by_default(tmp_path: Path) -> None:
    fd = try_lock(tmp_path / "a.lock")
    assert fd is not None
    release(fd)
    assert (tmp_path / "a.lock").stat().st_mode & 0o077 == 0


def test_a_holder_killed_with_sigkill_holds_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "held"
        assert try_lock(path) is None  # its process lives
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    fd = try_lock(path)
    assert fd is not None
    release(fd)
