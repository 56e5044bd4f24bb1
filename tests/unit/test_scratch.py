"""Scratch folders: removed by their process, or after it was killed by the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from trawl.cli._fleet import ROLES, scratch_for
from trawl.scratch import Scratch, sweep

_CHILD = """
import sys, time
from pathlib import Path
from trawl.scratch import Scratch
s = Scratch("trawl-test-", tmp=Path(sys.argv[1]))
(s.path / "spool").write_bytes(b"x" * 4096)
print(s.path, flush=True)
time.sleep(60)
"""


def _killed_holder(tmp: Path) -> Path:
    """The folder of a process that made a Scratch in ``tmp`` and was killed (SIGKILL)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    try:
        assert (folder / "spool").exists()
        assert sweep(tmp, "trawl-test-") == []  # its process lives: left alone
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    return folder


def test_a_scratch_is_removed_when_closed(tmp_path: Path) -> None:
    with Scratch("trawl-test-", tmp=tmp_path) as s:
        (s.path / "a" / "b").mkdir(parents=True)
        assert s.path.parent == tmp_path and s.path.name.startswith("trawl-test-")
        assert sweep(tmp_path, "trawl-test-") == []  # held by this process
    assert not s.path.exists()
    s.close()  # twice is harmless


def test_a_killed_process_folder_is_removed_by_the_next_scratch(tmp_path: Path) -> None:
    # Made first: the child that makes ``killed`` would sweep a killed one of its
    # prefix, and the Scratch below must be the one that removes ``killed``.
    other_kind = _killed_holder(tmp_path).rename(tmp_path / "trawl-other-x")
    killed = _killed_holder(tmp_path)
    assert killed.exists()  # nobody could remove it at the kill
    # Not a Scratch's (no lock file): being made, or someone else's.
    foreign = tmp_path / "trawl-test-foreign"
    foreign.mkdir()
    with Scratch("trawl-test-", tmp=tmp_path) as mine:
        assert not killed.exists()
        assert foreign.exists() and other_kind.exists() and mine.path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trawl-other-x", "trawl-test-foreign"]
    assert sweep(tmp_path, "trawl-other-") == [other_kind]


def test_a_fleet_process_without_data_works_in_a_scratch_unless_it_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    given = tmp_path / "data"
    with scratch_for(given, ROLES["all"], "trawl-worker-", "trawl worker") as where:
        assert where == given
    with scratch_for(None, ROLES["fetch+parse"], "trawl-worker-", "trawl worker") as where:
        assert where.parent == tmp_path and (where / ".trawl-lock").exists()
    assert not where.exists()  # the spool and the rest went with it
    # The index is what lasts of an index worker: kept, and where is said.
    with scratch_for(None, ROLES["index"], "trawl-crawl-", "trawl crawl") as where:
        (where / "index").mkdir()
    assert (where / "index").exists()
    assert f"trawl crawl: no --data: the index is kept under {where}" in capsys.readouterr().err
