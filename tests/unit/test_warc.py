"""WARC writing: standard tools read our files; rotation; crash recovery."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from base64 import b32encode
from pathlib import Path

import pytest

from trawl.archive.warc import HttpExchange, WarcWriter, read_response
from trawl.models import Position
from trawl.storage.local.segments import SegmentLog

WARCIO = Path(sys.executable).with_name("warcio")


def exchange(i: int, body: bytes | None = None) -> HttpExchange:
    return HttpExchange(
        url=f"http://books.test:8080/page/{i}",
        fetched_at=1_700_000_000.0 + i,
        ip="127.0.0.1",
        request_headers=[("Host", "books.test:8080"), ("User-Agent", "trawl/0.1")],
        status=200,
        reason="OK",
        response_headers=[
            ("Content-Type", "text/html; charset=utf-8"),
            ("Transfer-Encoding", "chunked"),
        ],
        body=body if body is not None else f"<html><p>page {i}</p></html>".encode() * 50,
    )


def open_log(tmp: Path, committed: Position | None, max_bytes: int = 10_000) -> SegmentLog:
    return SegmentLog(
        tmp, prefix="trawl", suffix=".warc.gz", max_bytes=max_bytes, committed=committed
    )


def test_records_read_back_with_digests_and_ip(tmp_path: Path) -> None:
    log = open_log(tmp_path, None)
    writer = WarcWriter(log)
    ex = exchange(1)
    loc = writer.write(ex)
    stored = writer.read(loc)
    assert stored.url == ex.url
    assert stored.status == 200
    assert stored.ip == "127.0.0.1"
    assert stored.body == ex.body
    assert stored.date.startswith("2023-11-14T22:13:21")
    sha1 = "sha1:" + b32encode(hashlib.sha1(ex.body).digest()).decode()
    assert stored.payload_digest == sha1
    # The transfer coding was removed by the client, so its header is renamed.
    names = [k for k, _ in stored.headers]
    assert "Transfer-Encoding" not in names
    assert "X-Crawler-Transfer-Encoding" in names
    log.close()


def test_files_rotate_and_pass_warcio_check_and_index(tmp_path: Path) -> None:
    log = open_log(tmp_path, None, max_bytes=4_000)
    writer = WarcWriter(log)
    locations = [writer.write(exchange(i)) for i in range(20)]
    log.close()
    files = sorted(tmp_path.glob("*.warc.gz"))
    assert len(files) > 2
    for f in files:
        check = subprocess.run([WARCIO, "check", "-v", str(f)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        index = subprocess.run([WARCIO, "index", str(f)], capture_output=True, text=True)
        assert index.returncode == 0
        assert '"warc-type": "warcinfo"' in index.stdout.splitlines()[0]
    for i, loc in enumerate(locations):
        data = (tmp_path / loc.file).read_bytes()[loc.offset : loc.offset + loc.length]
        assert read_response(data).url.endswith(f"/page/{i}")
        assert gzip.decompress(data).startswith(b"WARC/1.1\r\n")


def test_uncommitted_and_torn_records_are_cut_on_reopen(tmp_path: Path) -> None:
    log = open_log(tmp_path, None, max_bytes=6_000)
    writer = WarcWriter(log)
    kept = [writer.write(exchange(i)) for i in range(5)]
    committed = log.sync()
    for i in range(5, 12):  # written, never committed: may have rotated into new files
        writer.write(exchange(i))
    log.sync()
    log.close()
    with open(tmp_path / log.current, "ab") as torn:
        torn.write(b"\x1f\x8b\x08\x00torn")  # a record cut off by kill -9

    reopened = open_log(tmp_path, committed, max_bytes=6_000)
    assert reopened.recovered_bytes > 0
    assert reopened.position() == committed
    writer = WarcWriter(reopened)
    fresh = writer.write(exchange(99))
    reopened.close()
    for path in sorted(tmp_path.glob("*.warc.gz")):
        check = subprocess.run([WARCIO, "check", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    for i, loc in enumerate(kept):
        data = (tmp_path / loc.file).read_bytes()[loc.offset : loc.offset + loc.length]
        assert read_response(data).url.endswith(f"/page/{i}")
    data = (tmp_path / fresh.file).read_bytes()[fresh.offset : fresh.offset + fresh.length]
    assert read_response(data).url.endswith("/page/99")


def test_nothing_committed_means_empty_log(tmp_path: Path) -> None:
    log = open_log(tmp_path, None)
    WarcWriter(log).write(exchange(1))
    log.close()
    again = open_log(tmp_path, None)
    assert again.position() == Position(1, 0)
    assert (tmp_path / again.current).stat().st_size == 0
    again.close()


def test_read_response_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="no WARC response"):
        read_response(b"")
