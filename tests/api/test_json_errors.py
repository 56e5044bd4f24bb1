"""Errors aiohttp makes itself (413, 404, 405) are JSON under /v1, /api and /metrics too."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient

from tests.api.conftest import serving
from trawl.api.app import create_app

MAX_BODY_BYTES = 1024**2

Client = TestClient[web.Request, web.Application]
TOKEN = "json-errors-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Client]:
    monkeypatch.setenv("TRAWL_TOKEN", TOKEN)
    async with serving(create_app(tmp_path)) as c:
        yield c


async def _error(resp: ClientResponse, status: int) -> dict[str, object]:
    assert resp.status == status, await resp.text()
    assert resp.content_type == "application/json", await resp.text()
    body = await resp.json()
    assert isinstance(body, dict) and isinstance(body["error"], str) and body["error"]
    return body


async def test_a_too_large_body_is_a_json_413(client: Client) -> None:
    big = b'{"seeds": ["http://a.test/"], "name": "' + b"x" * MAX_BODY_BYTES + b'"}'
    resp = await client.post("/v1/crawls", data=io.BytesIO(big), headers=AUTH)
    body = await _error(resp, 413)
    assert "1 MiB" in str(body["error"])


@pytest.mark.parametrize("path", ["/v1/nothing", "/v1", "/v1/crawls/x/y/z", "/api/v1/x", "/api"])
async def test_unknown_routes_are_json_404(client: Client, path: str) -> None:
    await _error(await client.get(path), 404)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/v1/pages", "GET,HEAD"),
        ("DELETE", "/v1/crawls", "GET,HEAD,POST"),
        ("GET", "/v1/crawls/x/pause", "POST"),
        ("POST", "/metrics", "GET,HEAD"),
        ("PUT", "/api/v1/search", "GET"),
    ],
)
async def test_wrong_methods_are_json_405(
    client: Client, method: str, path: str, allow: str
) -> None:
    resp = await client.request(method, path, headers=AUTH)
    await _error(resp, 405)
    assert set(resp.headers["Allow"].split(",")) == set(allow.split(","))


async def test_bad_json_is_a_json_400(client: Client) -> None:
    for data in (b"{not json", b"\xff\xfe", b""):
        resp = await client.post("/v1/crawls", data=data, headers=AUTH)
        body = await _error(resp, 400)
        assert body["fields"] == {"body": "not JSON"}


async def test_pages_keep_their_own_errors(client: Client) -> None:
    resp = await client.get("/no-such-page")
    assert resp.status == 404
    assert resp.content_type != "application/json"


async def test_the_openapi_document_lists_the_413(client: Client) -> None:
    doc = await (await client.get("/api/v1/openapi.json")).json()
    answer = doc["paths"]["/v1/crawls"]["post"]["responses"]["413"]
    assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert "413" not in doc["paths"]["/v1/crawls"]["get"]["responses"]
