"""The operator's ceiling on the networks an API crawl may reach (``--allow-network``)."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.api.conftest import serving
from trawl.api.app import create_app, default_route_sets
from trawl.service.spec import SpecError, check_spec

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)
TOKEN = "networks-token-0123456789"


def _body(**more: Any) -> dict[str, Any]:
    return {"seeds": ["http://books.test/"], **more}


def _refused(body: dict[str, Any], ceiling: Any = ()) -> dict[str, str]:
    with pytest.raises(SpecError) as info:
        check_spec(body, allow_networks=ceiling)
    return info.value.fields


def test_without_a_ceiling_no_network_may_be_asked_for() -> None:
    fields = _refused(_body(allow_networks=["0.0.0.0/0", "::/0"]))
    assert set(fields) == {"allow_networks[0]", "allow_networks[1]"}
    assert "--allow-network" in fields["allow_networks[0]"]
    assert set(_refused(_body(allow_networks=["127.0.0.0/8"]))) == {"allow_networks[0]"}
    assert check_spec(_body())["allow_networks"] == []


@pytest.mark.parametrize("net", ["127.0.0.0/8", "127.0.0.1/32", "127.0.0.1", "127.1.0.0/16"])
def test_a_network_within_the_ceiling_is_accepted(net: str) -> None:
    assert check_spec(_body(allow_networks=[net]), allow_networks=LOOPBACK)["allow_networks"]


@pytest.mark.parametrize(
    "net", ["0.0.0.0/0", "::/0", "127.0.0.0/7", "10.0.0.0/8", "::1/128", "::ffff:0:0/96"]
)
def test_a_wider_or_other_network_is_refused(net: str) -> None:
    fields = _refused(_body(allow_networks=["127.0.0.0/8", net]), LOOPBACK)
    assert set(fields) == {"allow_networks[1]"}
    assert "127.0.0.0/8" in fields["allow_networks[1]"]


@pytest.mark.parametrize(
    "ip", ["10.0.0.1", "169.254.169.254", "::1", "::ffff:10.0.0.1", "fd00::1", "0.0.0.0"]
)
def test_resolve_to_a_network_outside_the_ceiling_is_refused(ip: str) -> None:
    fields = _refused(_body(resolve={"books.test": ip}), LOOPBACK)
    assert set(fields) == {"resolve.books.test"}
    assert "--allow-network" in fields["resolve.books.test"]


@pytest.mark.parametrize("ip", ["127.0.0.2", "::ffff:127.0.0.1", "93.184.215.14", "2606:4700::1"])
def test_resolve_to_the_public_internet_or_within_the_ceiling_is_accepted(ip: str) -> None:
    spec = check_spec(_body(resolve={"books.test": ip}), allow_networks=LOOPBACK)
    assert spec["resolve"] == {"books.test": ip}


def test_resolve_to_loopback_is_refused_without_a_ceiling() -> None:
    assert set(_refused(_body(resolve={"books.test": "127.0.0.1"}))) == {"resolve.books.test"}


Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Client]:
    monkeypatch.setenv("TRAWL_TOKEN", TOKEN)
    sets = default_route_sets(tmp_path, allow_networks=LOOPBACK)
    async with serving(create_app(tmp_path, route_sets=sets)) as c:
        yield c


async def test_the_api_names_the_field_that_asks_too_much(client: Client) -> None:
    body = _body(allow_networks=["127.0.0.0/8", "0.0.0.0/0"], resolve={"books.test": "10.1.2.3"})
    resp = await client.post("/v1/crawls", json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status == 400
    fields = (await resp.json())["fields"]
    assert set(fields) == {"allow_networks[1]", "resolve.books.test"}
    assert (await (await client.get("/v1/crawls")).json())["crawls"] == []


async def test_a_server_started_without_a_ceiling_refuses_every_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAWL_TOKEN", TOKEN)
    body = {"seeds": ["http://127.0.0.1:9/"], "allow_networks": ["0.0.0.0/0", "::/0"]}
    async with serving(create_app(tmp_path)) as c:
        resp = await c.post("/v1/crawls", json=body, headers={"Authorization": f"Bearer {TOKEN}"})
        assert resp.status == 400, await resp.text()
        assert set((await resp.json())["fields"]) == {"allow_networks[0]", "allow_networks[1]"}
