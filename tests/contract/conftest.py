"""Backends under contract: every storage Protocol runs the same tests on each backend."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from trawl.storage.base import Frontier
from trawl.storage.sqlite.db import Database
from trawl.storage.sqlite.frontier import SqliteFrontier


class SqliteBackend:
    """Opens stores over one data directory; ``restart`` simulates a crash or a clean stop."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: Database | None = None

    def frontier(
        self, *, max_per_host: int | None = None, lease_seconds: float = 600.0
    ) -> Frontier:
        if self._db is None:
            self._db = Database(self.path / "state.db")
        return SqliteFrontier(self._db, max_per_host=max_per_host, lease_seconds=lease_seconds)

    def commit(self) -> None:
        assert self._db is not None
        self._db.commit()

    def restart(self, *, crash: bool) -> None:
        """Close (committing unless ``crash``); the next store opened sees what survived."""
        assert self._db is not None
        self._db.close(commit=not crash)
        self._db = None

    def close(self) -> None:
        if self._db is not None:
            self._db.close(commit=False)
            self._db = None


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqliteBackend]:
    b = SqliteBackend(tmp_path)
    yield b
    with contextlib.suppress(Exception):
        b.close()
