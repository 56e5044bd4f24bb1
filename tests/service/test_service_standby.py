"""Two service apps over one data directory: one manages the crawls, the other is a
standby (reads yes, control 503 naming the manager) and takes over when the lock is
let go; the directory's own crawl (``main``) is read-only to both."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.api.conftest import serving
from tests.unit.test_index_corpus import Page, index_all, write_pages
from trawl.api.app import create_app, default_route_sets
from trawl.service.leader import ManagerLock
from trawl.service.routes import ServiceRoutes

TOKEN = "standby-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_one_process_at_a_time_holds_the_lock(tmp_path: Path) -> None:
    a, b = ManagerLock(tmp_path), ManagerLock(tmp_path)
    assert a.try_take() and a.try_take()
    assert not b.try_take()  # another open file: flock refuses it, as another process
    assert b.holder()["pid"] == os.getpid()
    a.release()
    assert b.try_take() and not a.try_take()
    b.release()


async def test_a_standby_reads_refuses_control_and_takes_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAWL_TOKEN", TOKEN)
    write_pages(tmp_path, [Page("https://a.example/", "Kites", "Kites over the harbour.")])
    index_all(tmp_path)  # the directory holds a crawl of its own: main

    def app() -> tuple[ServiceRoutes, object]:
        sets = default_route_sets(tmp_path)
        service = next(s for s in sets if isinstance(s, ServiceRoutes))
        service._takeover_interval = 0.05
        return service, create_app(tmp_path, route_sets=sets)

    first, first_app = app()
    second, second_app = app()
    first_cm, second_cm = serving(first_app), serving(second_app)  # type: ignore[arg-type]
    one = await first_cm.__aenter__()
    first_open = True
    try:
        two = await second_cm.__aenter__()
    except BaseException:
        await first_cm.__aexit__(None, None, None)
        raise
    try:
        assert (await (await one.get("/healthz")).json())["role"] == "manager"
        health = await (await two.get("/healthz")).json()
        assert health["role"] == "standby" and health["search"] == "ready"
        for client in (one, two):
            listed = await (await client.get("/v1/crawls")).json()
            assert [(c["id"], c["managed"]) for c in listed["crawls"]] == [("main", False)]
            found = await (await client.get("/api/v1/search?query=kites")).json()
            assert [(h["link"], h["crawl"]) for h in found["results"]] == [
                ("https://a.example/", "main")
            ]
        refused = await two.post("/v1/crawls", json={"seeds": ["http://x.test/"]}, headers=AUTH)
        assert refused.status == 503 and refused.headers["Retry-After"] == "1"
        assert f"pid {os.getpid()}" in (await refused.json())["error"]
        assert (await one.post("/v1/crawls/main/stop", headers=AUTH)).status == 409
        await first_cm.__aexit__(None, None, None)  # the manager stops: the standby takes over
        first_open = False
        for _ in range(200):
            if second.role == "manager":
                break
            await asyncio.sleep(0.05)
        assert (await (await two.get("/healthz")).json())["role"] == "manager"
        bad = await two.post("/v1/crawls", json={"seeds": []}, headers=AUTH)
        assert bad.status == 400  # checked, no longer refused as a standby
    finally:
        await second_cm.__aexit__(None, None, None)
        if first_open:
            await first_cm.__aexit__(None, None, None)
    assert not first.lock.held and not second.lock.held
