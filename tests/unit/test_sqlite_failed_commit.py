"""A commit of the SQLite store that fails (a full disk): nothing written after it is
ever committed, whether or not SQLite rolled the failed transaction back."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from trawl.errors import DiskFullError
from trawl.storage.sqlite.db import Database


def _rows(path: Path) -> list[str]:
    c = sqlite3.connect(path)
    try:
        return [r[0] for r in c.execute("SELECT value FROM meta ORDER BY key")]
    finally:
        c.close()


@pytest.mark.parametrize("rolled_back", [True, False])
def test_nothing_after_a_failed_commit_is_kept(tmp_path: Path, rolled_back: bool) -> None:
    path = tmp_path / "state.db"
    db = Database(path)
    db.set_meta("a", "committed")
    db.commit()
    failing = True

    def hook() -> None:
        # As a full disk does: SQLite may have rolled the transaction back already.
        if failing:
            if rolled_back:
                db.conn.execute("ROLLBACK")
            raise OSError(errno.ENOSPC, "No space left on device")

    db.before_commit(hook)
    db.set_meta("b", "in the failed commit")
    with pytest.raises(DiskFullError):
        db.commit()
    db.set_meta("c", "written after it")  # a task that ran on before the crawl stopped
    assert _rows(path) == ["committed"]  # not committed on its own
    failing = False
    with pytest.raises(DiskFullError):  # the disk has room again: still refused
        db.commit()
    db.close(commit=False)
    assert _rows(path) == ["committed"]
    again = Database(path)
    assert again.get_meta("c") is None and again.get_meta("a") == "committed"
    again.close(commit=False)
