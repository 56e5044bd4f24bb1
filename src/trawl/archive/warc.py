"""Raw pages as WARC/1.1: a response and a request record per fetch, gzip per record.

A fetch's response and request records are written here, byte for byte as warcio
writes them (the same headers in the same order, its encoding of the HTTP header
block, its digests) but without its record objects, which cost some 0.4 CPU-ms a
fetch (``tests/unit/test_warc.py`` compares the two); the rarer records (warcinfo,
conversion) are built with warcio. Each record is gzipped on its own and appended
to the blob store's WARC log (a ``SegmentWriter``), so files rotate at a size limit
and are cut back to the last commit after a crash. Each rotated file starts with a
warcinfo record.

A page rendered in headless Chromium gets a third record, written with the other two:
a ``conversion`` record (an alternative form of another record's content, made by
the archiving process, WARC 1.1 section 6.8) holding the rendered DOM as
``text/html; charset=utf-8``, whose ``WARC-Refers-To`` is the response record's id
and whose ``WARC-Rendered-By`` names the browser (``WARC-Render-Reason`` says why it
was rendered and how the render ended).
"""

from __future__ import annotations

import hashlib
import io
import uuid
from base64 import b32encode
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from trawl._version import __version__
from trawl.archive.gz import gzip_member
from trawl.models import Location
from trawl.storage.blobs import SegmentWriter

# The body we store has had its chunked transfer coding removed by the HTTP client, so
# the header that announced it is renamed, as other crawlers' WARC writers do; a reader
# would otherwise try to de-chunk a plain body.
_RENAMED = {"transfer-encoding": "X-Crawler-Transfer-Encoding"}
RENDERED_TYPE = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class HttpExchange:
    """One request and its response, as sent and received."""

    url: str
    fetched_at: float
    ip: str | None
    request_headers: Sequence[tuple[str, str]]
    status: int
    reason: str
    response_headers: Sequence[tuple[str, str]]
    body: bytes  # the payload as received (content coding kept, transfer coding removed)
    method: str = "GET"
    http_version: str = "1.1"
    truncated: str | None = None  # WARC-Truncated reason: "length", "time", ...


@dataclass(frozen=True, slots=True)
class RenderedDom:
    """A page's DOM as a browser left it, stored beside the response it was built from."""

    dom: bytes  # the serialised DOM, UTF-8
    rendered_at: float
    rendered_by: str  # e.g. "Chromium/156.0.8078.114"
    note: str  # why it was rendered and how the render ended (one line)


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A response read back from its WARC record."""

    url: str
    date: str
    ip: str | None
    status: int
    headers: list[tuple[str, str]]
    body: bytes  # payload as stored (still content-encoded if it was on the wire)
    record_id: str
    payload_digest: str | None


def warc_date(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WarcWriter:
    """Appends fetches to rotating WARC files."""

    def __init__(self, log: SegmentWriter, *, operator: str | None = None) -> None:
        self._log = log
        # warcio builds the records (headers, digests); we gzip each one ourselves,
        # much faster than warcio's level-9 zlib (see archive/gz.py).
        self._writer = WARCWriter(io.BytesIO(), gzip=False, warc_version="1.1")
        self._info = {
            "software": f"trawl/{__version__}",
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        }
        if operator:
            self._info["operator"] = operator
        if log.position().offset == 0:
            self._write_info()

    def _serialise(self, record: ArcWarcRecord) -> bytes:
        buf = io.BytesIO()
        self._writer.out = buf
        self._writer.write_record(record)
        return gzip_member(buf.getvalue())

    def _write_info(self) -> None:
        record = self._writer.create_warcinfo_record(self._log.current, self._info)
        self._log.append(self._serialise(record))

    def write(self, ex: HttpExchange) -> Location:
        """Store the exchange; returns where the response record lies."""
        response, request, _ = exchange_records(ex)
        return self._append(gzip_member(response), gzip_member(request))[0]

    def write_rendered(self, ex: HttpExchange, rendered: RenderedDom) -> tuple[Location, Location]:
        """Store the exchange and the DOM rendered from it (a ``conversion`` record
        referring to the response); returns where the response and the DOM lie."""
        response, request, response_id = exchange_records(ex)
        warc_headers = {
            "WARC-Date": warc_date(rendered.rendered_at),
            "WARC-Refers-To": response_id,
            "WARC-Rendered-By": rendered.rendered_by,
            "WARC-Render-Reason": " ".join(rendered.note.split())[:500],
        }
        conversion = self._writer.create_warc_record(
            ex.url,
            "conversion",
            payload=io.BytesIO(rendered.dom),
            length=len(rendered.dom),
            warc_content_type=RENDERED_TYPE,
            warc_headers_dict=warc_headers,
        )
        response_at, dom_at = self._append(
            gzip_member(response), gzip_member(request), self._serialise(conversion)
        )
        assert dom_at is not None
        return response_at, dom_at

    def _append(
        self, data: bytes, extra: bytes, dom: bytes = b""
    ) -> tuple[Location, Location | None]:
        """The gzipped records of one fetch, kept in one file (rotated before them if
        need be)."""
        if self._log.would_rotate(len(data) + len(extra) + len(dom)):
            self._log.rotate()
            self._write_info()
        location = self._log.append(data)
        self._log.append(extra)
        dom_at = self._log.append(dom) if dom else None
        return location, dom_at

    def read(self, location: Location) -> StoredResponse:
        return read_response(self._log.read(location))

    def read_rendered(self, location: Location) -> bytes:
        return read_rendered(self._log.read(location))


def exchange_records(ex: HttpExchange) -> tuple[bytes, bytes, str]:
    """The response and request records of an exchange (uncompressed) and the
    response's record id: what warcio's ``WARCWriter`` (WARC/1.1, no gzip) writes for
    ``create_warc_record(url, "response" | "request", ...)`` with these headers."""
    date = warc_date(ex.fetched_at)
    http = StatusAndHeaders(
        f"{ex.status} {ex.reason}".strip(),
        [(_RENAMED.get(k.lower(), k), v) for k, v in ex.response_headers],
        protocol=f"HTTP/{ex.http_version}",
    ).to_ascii_bytes()  # warcio's encoding of the header block (non-ASCII %-encoded)
    extra = [("WARC-IP-Address", ex.ip)] if ex.ip else []
    if ex.truncated:
        extra.append(("WARC-Truncated", ex.truncated))
    response_id = f"<urn:uuid:{uuid.uuid4()}>"
    response = _record(ex.url, "response", date, extra, response_id, http, ex.body)
    target = _request_target(ex.url)
    http = StatusAndHeaders(
        f"{ex.method} {target} HTTP/{ex.http_version}",
        list(ex.request_headers),
        is_http_request=True,
    ).to_ascii_bytes()
    extra = [("WARC-Concurrent-To", response_id)]
    if ex.ip:
        extra.append(("WARC-IP-Address", ex.ip))
    request_id = f"<urn:uuid:{uuid.uuid4()}>"
    request = _record(ex.url, "request", date, extra, request_id, http, b"")
    return response, request, response_id


def _sha1(*parts: bytes) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in parts:
        digest.update(part)
    return "sha1:" + b32encode(digest.digest()).decode("ascii")


def _record(
    url: str,
    kind: str,
    date: str,
    extra: list[tuple[str, str]],
    record_id: str,
    http: bytes,
    payload: bytes,
) -> bytes:
    """One record as warcio writes it: the headers given at creation in their order
    (the date first), then the type, id and target URI, the digests, the content type
    and the length."""
    lines = [f"WARC-Date: {date}", *(f"{k}: {v}" for k, v in extra)]
    lines += [
        f"WARC-Type: {kind}",
        f"WARC-Record-ID: {record_id}",
        f"WARC-Target-URI: {url}",
        f"WARC-Payload-Digest: {_sha1(payload)}",
        f"WARC-Block-Digest: {_sha1(http, payload)}",
        f"Content-Type: application/http; msgtype={kind}",
        f"Content-Length: {len(http) + len(payload)}",
    ]
    head = ("WARC/1.1\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode("utf-8")
    return b"".join((head, http, payload, b"\r\n\r\n"))


def _request_target(url: str) -> str:
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else "/"


def read_response(record_bytes: bytes) -> StoredResponse:
    """Parse one gzip'd WARC response record (as located by ``WarcWriter.write``)."""
    for record in ArchiveIterator(io.BytesIO(record_bytes), arc2warc=False):
        if record.rec_type != "response":
            continue
        http = record.http_headers
        status = int(http.get_statuscode() or 0) if http is not None else 0
        headers = list(http.headers) if http is not None else []
        body = record.raw_stream.read()
        rec = record.rec_headers
        return StoredResponse(
            url=rec.get_header("WARC-Target-URI"),
            date=rec.get_header("WARC-Date"),
            ip=rec.get_header("WARC-IP-Address"),
            status=status,
            headers=[(str(k), str(v)) for k, v in headers],
            body=body,
            record_id=rec.get_header("WARC-Record-ID"),
            payload_digest=rec.get_header("WARC-Payload-Digest"),
        )
    raise ValueError("no WARC response record at that location")


def read_rendered(record_bytes: bytes) -> bytes:
    """The DOM of one gzip'd WARC conversion record (as located by ``write_rendered``)."""
    for record in ArchiveIterator(io.BytesIO(record_bytes), arc2warc=False):
        if record.rec_type == "conversion":
            data: bytes = record.content_stream().read()
            return data
    raise ValueError("no WARC conversion record at that location")
