"""Raw pages as WARC/1.1: a response and a request record per fetch, gzip per record.

Records are built with warcio (digests, headers) and appended to the blob store's
WARC log (a ``SegmentWriter``), so files rotate at a size limit and are cut back to the
last commit after a crash. Each
rotated file starts with a warcinfo record.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from warcio.archiveiterator import ArchiveIterator
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

    def _serialise(self, record: object) -> bytes:
        buf = io.BytesIO()
        self._writer.out = buf
        self._writer.write_record(record)
        return gzip_member(buf.getvalue())

    def _write_info(self) -> None:
        record = self._writer.create_warcinfo_record(self._log.current, self._info)
        self._log.append(self._serialise(record))

    def write(self, ex: HttpExchange) -> Location:
        """Store the exchange; returns where the response record lies."""
        date = warc_date(ex.fetched_at)
        resp_headers = StatusAndHeaders(
            f"{ex.status} {ex.reason}".strip(),
            [(_RENAMED.get(k.lower(), k), v) for k, v in ex.response_headers],
            protocol=f"HTTP/{ex.http_version}",
        )
        warc_headers = {"WARC-Date": date}
        if ex.ip:
            warc_headers["WARC-IP-Address"] = ex.ip
        if ex.truncated:
            warc_headers["WARC-Truncated"] = ex.truncated
        w = self._writer
        response = w.create_warc_record(
            ex.url,
            "response",
            payload=io.BytesIO(ex.body),
            length=len(ex.body),
            http_headers=resp_headers,
            warc_headers_dict=warc_headers,
        )
        target = _request_target(ex.url)
        req_headers = StatusAndHeaders(
            f"{ex.method} {target} HTTP/{ex.http_version}",
            list(ex.request_headers),
            is_http_request=True,
        )
        request_warc = {
            "WARC-Date": date,
            "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
        }
        if ex.ip:
            request_warc["WARC-IP-Address"] = ex.ip
        request = w.create_warc_record(
            ex.url,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            http_headers=req_headers,
            warc_headers_dict=request_warc,
        )
        data = self._serialise(response)
        extra = self._serialise(request)
        if self._log.would_rotate(len(data) + len(extra)):
            self._log.rotate()
            self._write_info()
        location = self._log.append(data)
        self._log.append(extra)
        return location

    def read(self, location: Location) -> StoredResponse:
        return read_response(self._log.read(location))


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
