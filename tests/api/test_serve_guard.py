"""The Host allowlist (against DNS rebinding) and the read token of ``trawl serve``."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.api.conftest import serving
from tests.api.fakes import fake_index
from trawl.api.app import create_app
from trawl.api.guard import (
    Guard,
    HostAllowlist,
    host_name,
    is_loopback_bind,
    load_token,
    token_matches,
)

Client = TestClient[web.Request, web.Application]
TOKEN = "guard-control-token-0123456789"
READ = "guard-read-token-0123456789"

# Every kind of route: stored pages, a crawl spec, metrics, search, the pages, the
# assets, the event stream, an unknown path.
PATHS = [
    "/v1/pages?url=http://a.test/",
    "/v1/crawls/some-crawl",
    "/v1/crawls",
    "/v1/events",
    "/metrics",
    "/api/v1/search?query=python",
    "/api/v1/openapi.json",
    "/",
    "/?query=python",
    "/crawls",
    "/crawls/some-crawl",
    "/crawls/assets/dashboard.js",
    "/static/search.css",
    "/nothing",
]


def _app(data: Path, guard: Guard | None = None) -> web.Application:
    fake_index(data)
    return create_app(data, guard=guard) if guard else create_app(data)


@pytest.fixture
async def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Client]:
    monkeypatch.setenv("TRAWL_TOKEN", TOKEN)
    async with serving(create_app(tmp_path)) as c:
        yield c


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example"])
async def test_another_host_is_refused_everywhere(client: Client, path: str, host: str) -> None:
    resp = await client.get(path, headers={"Host": host, "Accept": "text/event-stream"})
    assert resp.status == 421, (path, await resp.text())
    assert resp.content_type == "application/json"
    assert "Host" in (await resp.json())["error"]


async def test_a_refusal_is_logged(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    await client.get("/v1/crawls", headers={"Host": "evil.example"})
    assert "evil.example" in caplog.text


async def test_the_loopback_names_are_served(client: Client) -> None:
    port = client.port
    for host in (
        f"127.0.0.1:{port}",
        "127.0.0.1",
        f"localhost:{port}",
        "LOCALHOST",
        "localhost.",
        f"[::1]:{port}",
        "[0:0::1]",
    ):
        resp = await client.get("/v1/crawls", headers={"Host": host})
        assert resp.status == 200, host
        resp = await client.get("/api/v1/search?query=x", headers={"Host": host})
        assert resp.status == 503, host  # served: no index in this data directory


async def test_a_request_without_a_host_is_refused(client: Client) -> None:
    # HTTP/1.0 may leave the Host out (aiohttp refuses an HTTP/1.1 request without one).
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    writer.write(b"GET /v1/crawls HTTP/1.0\r\n\r\n")
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split()[1] == b"421"
    assert b"application/json" in head and b'"error"' in body


async def test_an_allowed_host_is_served(tmp_path: Path) -> None:
    hosts = HostAllowlist.for_bind("127.0.0.1", ["search.example", ".corp.example"])
    async with serving(_app(tmp_path, Guard(hosts))) as c:
        for host in ("search.example:8080", "SEARCH.example", "corp.example", "a.b.corp.example"):
            assert (await c.get("/v1/crawls", headers={"Host": host})).status == 200, host
        for host in (
            "x.search.example",
            "evil.example",
            "notcorp.example",
            "x.localhost",
            "127.000.0.1",
            "2130706433",
        ):
            assert (await c.get("/v1/crawls", headers={"Host": host})).status == 421, host


# -- the read token ----------------------------------------------------------------


@pytest.fixture
async def guarded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Client]:
    monkeypatch.setenv("TRAWL_TOKEN", TOKEN)
    guard = Guard(HostAllowlist.for_bind("127.0.0.1"), read_token=READ)
    async with serving(_app(tmp_path, guard)) as c:
        yield c


def _basic(password: str, user: str = "anyone") -> dict[str, str]:
    raw = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


READS = [p for p in PATHS if not p.startswith(("/static/", "/crawls/assets/", "/api/v1/openapi"))]


@pytest.mark.parametrize("path", READS)
async def test_reads_need_the_token(guarded: Client, path: str) -> None:
    for headers in ({}, _bearer("wrong"), _basic("wrong"), _bearer(""), _basic("")):
        resp = await guarded.get(path, headers=headers)
        assert resp.status == 401, (path, headers)
        assert resp.content_type == "application/json"
        challenges = resp.headers.getall("WWW-Authenticate")
        assert any(c.startswith("Basic") for c in challenges)
        assert any(c.startswith("Bearer") for c in challenges)
    for headers in (
        _bearer(READ),
        _bearer(TOKEN),
        _basic(READ),
        _basic(READ, user=""),
        _basic(TOKEN),
    ):
        resp = await guarded.get(path, headers={**headers, "Accept": "application/json"})
        assert resp.status != 401, (path, headers, await resp.text())


async def test_the_package_files_need_no_token(guarded: Client) -> None:
    for path in ("/static/search.css", "/crawls/assets/dashboard.js", "/api/v1/openapi.json"):
        assert (await guarded.get(path)).status == 200, path


async def test_the_read_token_changes_nothing(guarded: Client) -> None:
    body = {"seeds": ["http://127.0.0.1:9/"]}
    for headers in (_bearer(READ), _basic(READ), _basic(TOKEN)):
        resp = await guarded.post("/v1/crawls", json=body, headers=headers)
        assert resp.status == 401, headers
    resp = await guarded.post("/v1/crawls/x/pause", headers=_bearer(TOKEN))
    assert resp.status == 404  # the control token passes both checks


async def test_the_host_is_checked_before_the_token(guarded: Client) -> None:
    resp = await guarded.get("/v1/crawls", headers={**_bearer(READ), "Host": "evil.example"})
    assert resp.status == 421


async def test_the_openapi_document_tells_the_truth(guarded: Client, client: Client) -> None:
    strict = await (await guarded.get("/api/v1/openapi.json")).json()
    search = strict["paths"]["/api/v1/search"]["get"]
    assert {"401", "421"} <= set(search["responses"])
    assert {"readBearer", "readBasic"} <= set(strict["components"]["securitySchemes"])
    assert {"readBearer": []} in search["security"]
    assert "401" not in strict["paths"]["/api/v1/openapi.json"]["get"]["responses"]
    # A write keeps the control token alone.
    assert strict["paths"]["/v1/crawls"]["post"]["security"] == [{"bearerAuth": []}]
    open_doc = await (await client.get("/api/v1/openapi.json")).json()
    open_search = open_doc["paths"]["/api/v1/search"]["get"]
    assert "421" in open_search["responses"] and "401" not in open_search["responses"]
    assert "security" not in open_search


# -- the rules, as functions ---------------------------------------------------------


@pytest.mark.parametrize(
    ("bind", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("10.0.0.5", False),
        ("fe80::1", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_reads_need_a_token_off_loopback(bind: str, loopback: bool) -> None:
    assert is_loopback_bind(bind) is loopback


def test_the_bind_address_is_a_name_but_a_wildcard_is_not() -> None:
    assert "192.168.1.10" in HostAllowlist.for_bind("192.168.1.10").exact
    assert "fd00::5" in HostAllowlist.for_bind("fd00:0::5").exact
    for wildcard in ("0.0.0.0", "::"):
        assert HostAllowlist.for_bind(wildcard).exact == {"localhost", "127.0.0.1", "::1"}
    with pytest.raises(ValueError, match="not a host name"):
        HostAllowlist(["bad name"])


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("Example.ORG:8080", "example.org"),
        ("example.org.", "example.org"),
        ("[::1]:80", "::1"),
        ("[0:0:0:0:0:0:0:1]", "::1"),
        ("", None),
        ("a b", None),
        ("user@example.org", None),
        ("example.org:http", None),
        ("example.org:123456", None),
        ("[::1", None),
        ("[::1]x", None),
        ("[nope]", None),
        ("-x.example", None),
        ("évil.example", None),
    ],
)
def test_host_names_are_read_strictly(header: str, name: str | None) -> None:
    assert host_name(header) == name


def test_token_matching() -> None:
    tokens = ["", READ]
    assert token_matches(f"Bearer {READ}", tokens, basic=False)
    assert token_matches(f"bearer  {READ} ", tokens, basic=False)
    assert not token_matches("Bearer ", tokens, basic=True)
    assert not token_matches(_basic(READ)["Authorization"], tokens, basic=False)
    assert token_matches(_basic(READ)["Authorization"], tokens, basic=True)
    assert not token_matches("Basic !!!", tokens, basic=True)
    assert not token_matches(f"Token {READ}", tokens, basic=True)


def test_two_servers_starting_at_once_share_one_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "service-token"
    link = os.link

    def racing(src: str | Path, dst: str | Path) -> None:
        path.write_text("theirs\n")  # the other server put its token in place first
        link(src, dst)

    monkeypatch.setattr(os, "link", racing)
    assert load_token(path, None) == ("theirs", False)
    assert list(tmp_path.iterdir()) == [path]  # nothing left aside
    monkeypatch.undo()
    path.unlink()
    token, new = load_token(path, None)
    assert new and path.read_text() == token + "\n" and path.stat().st_mode & 0o777 == 0o600
