"""A full disk, as the crawl's writes report it, becomes one DiskFullError.

The real thing (a small tmpfs filled by a real crawl) is in
tests/integration/test_disk_full.py; here the classification and the messages.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from trawl.config import CrawlConfig
from trawl.config_load import parse_size
from trawl.crawl import Crawl
from trawl.errors import ConfigError, DiskFullError, StorageError, as_disk_full, free_space
from trawl.space import SpaceGuard


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EDQUOT, "Disk quota exceeded"),
        sqlite3.OperationalError("database or disk is full"),
        ValueError("An IO error occurred: 'No space left on device (os error 28)'"),
        ValueError("Internal error: 'Disk quota exceeded (os error 122)'"),
    ],
)
def test_the_ways_a_full_disk_is_reported(tmp_path: Path, exc: Exception) -> None:
    full = as_disk_full(exc, tmp_path / "state.db")
    assert isinstance(full, DiskFullError)
    assert isinstance(full, StorageError)
    assert full.path == tmp_path / "state.db"
    assert full.reserve is None
    assert str(full).startswith(f"disk full writing {tmp_path / 'state.db'} (")


def test_the_file_named_by_the_os_error_wins_and_causes_are_followed(tmp_path: Path) -> None:
    inner = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "warc" / "x"))
    try:
        try:
            raise inner
        except OSError as exc:
            raise RuntimeError("writing the record failed") from exc
    except RuntimeError as outer:
        full = as_disk_full(outer, tmp_path)
    assert full is not None and full.path == tmp_path / "warc" / "x"


def test_other_errors_are_not_a_full_disk(tmp_path: Path) -> None:
    assert as_disk_full(OSError(errno.EACCES, "Permission denied"), tmp_path) is None
    assert as_disk_full(sqlite3.OperationalError("database is locked"), tmp_path) is None
    # An I/O error is taken for a full disk only when there is no space left.
    assert as_disk_full(sqlite3.OperationalError("disk I/O error"), tmp_path) is None
    writer = ValueError("An index writer was killed.. (io::Error most likely) or panicked.")
    assert as_disk_full(writer, tmp_path) is None


def test_the_message_says_how_much_is_free_where(tmp_path: Path) -> None:
    free, mount = free_space(tmp_path / "not" / "yet" / "there.gz")
    assert free > 0
    assert mount.is_dir() and Path(mount).is_mount()
    full = DiskFullError(tmp_path / "t.gz", free=12_900_000, mount=Path("/srv"))
    assert str(full) == f"disk full writing {tmp_path / 't.gz'} (12.3 MB free on /srv)"
    low = DiskFullError(tmp_path, free=100 * 1024, mount=Path("/srv"), reserve=256 * 1024**2)
    assert str(low) == (
        f"low disk space for {tmp_path}: 100.0 KB free on /srv, less than the 256.0 MB "
        "reserve (min_free_space)"
    )


def test_the_reserve(tmp_path: Path) -> None:
    assert SpaceGuard(tmp_path, 0).check() is None
    assert SpaceGuard(tmp_path, 1).check() is None
    low = SpaceGuard(tmp_path, 1 << 62).check()  # more than any disk has
    assert low is not None and low.reserve == 1 << 62 and low.path == tmp_path
    with pytest.raises(DiskFullError) as raised:
        Crawl(CrawlConfig(data_dir=tmp_path / "data", min_free_space=1 << 62, parse_workers=0))
    assert raised.value.reserve == 1 << 62
    assert not (tmp_path / "data" / "state.db").exists()  # nothing written first
    assert CrawlConfig(data_dir=tmp_path).min_free_space == 256 * 1024**2


def test_sizes() -> None:
    assert parse_size("256M") == parse_size("256MiB") == 256 * 1024**2
    assert parse_size("1.5G") == 3 * 1024**3 // 2
    assert parse_size("0") == 0
    assert parse_size(4096) == 4096
    with pytest.raises(ConfigError):
        parse_size("lots")
