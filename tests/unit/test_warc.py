"""WARC writing: standard tools read our files; rotation; crash recovery."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from base64 import b32encode
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from trawl.archive.warc import (
    HttpExchange,
    RenderedDom,
    WarcWriter,
    read_rendered,
    read_response,
)
from trawl.models import Location, Position
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


def test_rendered_dom_is_a_conversion_record_referring_to_the_response(tmp_path: Path) -> None:
    log = open_log(tmp_path, None, max_bytes=1_000_000)
    writer = WarcWriter(log)
    ex = exchange(7, body=b'<html><body><div id="root"></div></body></html>')
    dom = '<html><body><div id="root"><p>Rendered café</p></div></body></html>'.encode()
    rendered = RenderedDom(dom, 1_700_000_009.5, "Chromium/156.0", "auto: empty mount point")
    response_at, dom_at = writer.write_rendered(ex, rendered)
    assert writer.read(response_at).body == ex.body
    assert writer.read_rendered(dom_at) == dom
    log.close()
    path = next(tmp_path.glob("*.warc.gz"))
    check = subprocess.run([WARCIO, "check", "-v", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    with path.open("rb") as f:
        records = {
            r.rec_type: r.rec_headers
            for r in ArchiveIterator(f)
            if r.rec_type in ("response", "conversion")
        }
    conversion = records["conversion"]
    assert conversion.get_header("WARC-Refers-To") == records["response"].get_header(
        "WARC-Record-ID"
    )
    assert conversion.get_header("WARC-Target-URI") == ex.url
    assert conversion.get_header("Content-Type") == "text/html; charset=utf-8"
    assert conversion.get_header("WARC-Rendered-By") == "Chromium/156.0"
    assert conversion.get_header("WARC-Render-Reason") == "auto: empty mount point"
    with pytest.raises(ValueError, match="conversion"):
        read_rendered(log_bytes(tmp_path, response_at))


def log_bytes(folder: Path, at: Location) -> bytes:
    with (folder / at.file).open("rb") as f:
        f.seek(at.offset)
        return f.read(at.length)


def _warcio_records(ex: HttpExchange) -> tuple[bytes, bytes]:
    """The two records as warcio's own writer makes them (what WarcWriter used to do)."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from trawl.archive.warc import _request_target, warc_date

    w = WARCWriter(io.BytesIO(), gzip=False, warc_version="1.1")
    renamed = {"transfer-encoding": "X-Crawler-Transfer-Encoding"}
    warc = {"WARC-Date": warc_date(ex.fetched_at)}
    if ex.ip:
        warc["WARC-IP-Address"] = ex.ip
    if ex.truncated:
        warc["WARC-Truncated"] = ex.truncated
    http = StatusAndHeaders(
        f"{ex.status} {ex.reason}".strip(),
        [(renamed.get(k.lower(), k), v) for k, v in ex.response_headers],
        protocol=f"HTTP/{ex.http_version}",
    )
    response = w.create_warc_record(
        ex.url,
        "response",
        payload=io.BytesIO(ex.body),
        length=len(ex.body),
        http_headers=http,
        warc_headers_dict=warc,
    )
    request_warc = {
        "WARC-Date": warc["WARC-Date"],
        "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
    }
    if ex.ip:
        request_warc["WARC-IP-Address"] = ex.ip
    request_http = StatusAndHeaders(
        f"{ex.method} {_request_target(ex.url)} HTTP/{ex.http_version}",
        list(ex.request_headers),
        is_http_request=True,
    )
    request = w.create_warc_record(
        ex.url,
        "request",
        payload=io.BytesIO(b""),
        length=0,
        http_headers=request_http,
        warc_headers_dict=request_warc,
    )
    out = []
    for record in (response, request):
        buf = io.BytesIO()
        w.out = buf
        w.write_record(record)
        out.append(buf.getvalue())
    return out[0], out[1]


@pytest.mark.parametrize(
    "ex",
    [
        exchange(3),
        exchange(4, body=b""),
        HttpExchange(
            url="http://h\u00e9.test/p?q=1",  # not a normal form, but any text goes through
            fetched_at=1_700_000_000.123456,
            ip=None,
            request_headers=[("Host", "h.test"), ("Accept-Language", "d\u00e9")],
            status=404,
            reason="",
            response_headers=[
                ("Content-Type", "text/html; charset=\u00e9"),
                ("X-Name", "caf\u00e9"),
                ("transfer-encoding", "chunked"),
            ],
            body=b"\x00\xff" * 100,
            method="GET",
            http_version="1.0",
            truncated="length",
        ),
    ],
)
def test_records_are_byte_for_byte_what_warcio_writes(
    ex: HttpExchange, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uuid

    from trawl.archive.warc import exchange_records

    def ids() -> object:
        n = iter(range(1, 100))
        return lambda: uuid.UUID(int=next(n), version=4)

    monkeypatch.setattr(uuid, "uuid4", ids())
    ours = exchange_records(ex)
    monkeypatch.setattr(uuid, "uuid4", ids())
    theirs = _warcio_records(ex)
    assert (ours[0], ours[1]) == theirs
    assert ours[2] == f"<urn:uuid:{uuid.UUID(int=1, version=4)}>"
