"""A fetch client that answers from a dict: whole crawls in tests with no network.

Like httpx's MockTransport: ``Crawl(config, client=FakeClient(pages))``. Each page
is a ``FakePage`` (status, headers, body); any other URL is a 404. Requests are
recorded in order, with the clock's time, so tests can check pacing and counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trawl.clock import Clock
from trawl.fetch.http import FetchResponse
from trawl.fetch.sendcheck import check_send

__all__ = ["FakeClient", "FakePage"]


@dataclass(frozen=True, slots=True)
class FakePage:
    body: bytes = b""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/html; charset=utf-8"),)

    @classmethod
    def html(cls, html: str, *, status: int = 200) -> FakePage:
        return cls(html.encode(), status)

    @classmethod
    def redirect(cls, location: str, *, status: int = 301) -> FakePage:
        return cls(b"", status, (("Location", location),))


@dataclass
class FakeClient:
    pages: Mapping[str, FakePage]
    clock: Clock | None = None
    requests: list[tuple[float, str]] = field(default_factory=list)
    closed: bool = False

    async def get(
        self,
        url: str,
        *,
        accept: Any = None,
        headers: Any = None,
        etag: str | None = None,
        last_modified: str | None = None,
        max_body_bytes: int | None = None,
        refuse_oversized: bool = False,
    ) -> FetchResponse:
        check_send()  # as the real client does, right before a request goes out
        now = self.clock.now() if self.clock is not None else 0.0
        self.requests.append((now, url))
        page = self.pages.get(url, FakePage(b"not found", 404, (("Content-Type", "text/plain"),)))
        body = page.body if max_body_bytes is None else page.body[:max_body_bytes]
        ctype = next((v for k, v in page.headers if k.lower() == "content-type"), None)
        mime = ctype.split(";", 1)[0].strip().lower() if ctype else None
        skipped = accept is not None and page.status < 300 and not accept(mime)
        return FetchResponse(
            url=url,
            status=page.status,
            reason="OK" if page.status < 400 else "Error",
            http_version="1.1",
            headers=page.headers,
            request_headers=(("Host", url.split("/")[2]), ("User-Agent", "trawl-test")),
            raw_body=b"" if skipped else body,
            body=b"" if skipped else body,
            ip="192.0.2.1",
            mime_type=mime,
            charset=None,
            truncated=None,
            body_skipped=skipped,
            started_at=now,
            first_byte_at=now,
            elapsed=0.0,
        )

    async def close(self) -> None:
        self.closed = True
