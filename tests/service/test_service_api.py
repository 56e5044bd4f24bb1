"""The crawl service against a real ``trawl serve`` process and the test web."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.testweb import TestWeb

TRAWL = str(Path(sys.executable).with_name("trawl"))
TOKEN = "test-token-0123456789"


class Server:
    def __init__(self, data: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.data = data
        self.extra = extra
        self.env = env or {}
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> None:
        env = {**os.environ, "TRAWL_TOKEN": TOKEN, **self.env}
        self.proc = await asyncio.create_subprocess_exec(
            TRAWL,
            "serve",
            "--data",
            str(self.data),
            "--port",
            "0",
            "--allow-network",  # the operator lets API crawls reach the test web
            "127.0.0.0/8",
            *self.extra,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert self.proc.stdout is not None
        while True:
            line = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode()
            assert line, "server exited"
            m = re.search(r"listening on (http://\S+/)", line)
            if m:
                self.url = m.group(1).rstrip("/")
                return

    async def stop(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(2)
        await asyncio.wait_for(self.proc.wait(), 40)


@pytest.fixture
async def web() -> AsyncIterator[TestWeb]:
    async with TestWeb() as w:
        yield w


def crawl_body(web: TestWeb, **more: Any) -> dict[str, Any]:
    return {
        "seeds": [web.url("books.test")],
        "allow_networks": ["127.0.0.0/8"],
        "resolve": web.resolve_map(),
        "delay": 0.02,
        "parse_workers": 0,
        "timeout": 2,
        **more,
    }


AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def wait_state(
    s: aiohttp.ClientSession, url: str, states: set[str], limit: float = 60
) -> Any:
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while True:
        async with s.get(url) as r:
            doc = await r.json()
        if doc["state"] in states:
            return doc
        assert loop.time() < end, doc
        await asyncio.sleep(0.2)


async def test_crawl_lifecycle_pages_hosts_events_metrics(tmp_path: Path, web: TestWeb) -> None:
    server = Server(tmp_path)
    await server.start()
    try:
        async with aiohttp.ClientSession() as s:
            base = server.url
            async with s.post(f"{base}/v1/crawls", json=crawl_body(web)) as r:
                assert r.status == 401
            async with s.post(
                f"{base}/v1/crawls",
                json={"seeds": ["ftp://x"], "delay": -1, "scope": "nope", "bogus": 1},
                headers=AUTH,
            ) as r:
                assert r.status == 400
                fields = (await r.json())["fields"]
                assert set(fields) >= {"seeds[0]", "delay", "scope", "bogus"}
            async with s.post(f"{base}/v1/crawls", json=crawl_body(web), headers=AUTH) as r:
                assert r.status == 201, await r.text()
                crawl_id = (await r.json())["id"]
            doc = await wait_state(s, f"{base}/v1/crawls/{crawl_id}", {"finished", "failed"})
            assert doc["state"] == "finished", doc
            assert doc["stopped"] == "done"
            assert doc["progress"]["parsed"] == 38
            assert doc["progress"]["status_codes"]["200"] >= 38
            async with s.get(f"{base}/v1/crawls") as r:
                assert [c["id"] for c in (await r.json())["crawls"]] == [crawl_id]
            async with s.get(f"{base}/v1/pages", params={"url": web.url("books.test")}) as r:
                page = await r.json()
                assert r.status == 200, page
            assert page["status"] == 200 and page["content_hash"]
            assert "<html" in page["body"].lower()
            assert page["provenance"]["robots"] == "allowed"
            async with s.get(f"{base}/v1/pages", params={"url": "http://nowhere.test/"}) as r:
                assert r.status == 404
            host = web.url("books.test").split("//")[1].rstrip("/")
            async with s.get(f"{base}/v1/hosts/{host}") as r:
                h = await r.json()
                assert r.status == 200, h
            assert h["pages_fetched"] >= 38 and h["robots"][0]["outcome"]
            assert isinstance(h["equivalences"], list)
            # Events: a JSON page, then SSE resumed from an id: nothing lost, nothing twice.
            async with s.get(f"{base}/v1/events", params={"limit": 10}) as r:
                first = (await r.json())["events"]
            assert [e["id"] for e in first] == list(range(1, 11))
            ids = await sse_ids(s, f"{base}/v1/events", last=10, want=28)
            assert ids == list(range(11, 39))
            async with s.get(f"{base}/metrics") as r:
                text = await r.text()
            names = {m.name for m in text_string_to_metric_families(text)}
            assert {"trawl_fetch_latency_seconds", "trawl_fetch_responses", "trawl_urls"} <= names
            async with s.post(f"{base}/v1/crawls/{crawl_id}/pause", headers=AUTH) as r:
                assert r.status == 409
    finally:
        await server.stop()


async def sse_ids(s: aiohttp.ClientSession, url: str, *, last: int, want: int) -> list[int]:
    headers = {"Accept": "text/event-stream", "Last-Event-ID": str(last)}
    ids: list[int] = []
    async with s.get(url, headers=headers) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        async for raw in r.content:
            line = raw.decode().strip()
            if line.startswith("id: "):
                ids.append(int(line[4:]))
                if len(ids) >= want:
                    break
    return ids


async def test_pause_resume_stop_and_restart(tmp_path: Path, web: TestWeb) -> None:
    server = Server(tmp_path)
    await server.start()
    try:
        async with aiohttp.ClientSession() as s:
            body = crawl_body(web, delay=0.3)
            async with s.post(f"{server.url}/v1/crawls", json=body, headers=AUTH) as r:
                crawl_id = (await r.json())["id"]
            url = f"{server.url}/v1/crawls/{crawl_id}"
            async with s.post(f"{url}/pause", headers=AUTH) as r:
                assert r.status == 202
                assert (await r.json())["state"] == "paused"
            await asyncio.sleep(1.5)
            async with s.get(url) as r:
                before = (await r.json())["progress"]["fetched"]
            await asyncio.sleep(1.5)
            async with s.get(url) as r:
                assert (await r.json())["progress"]["fetched"] == before  # nothing new
            async with s.post(f"{url}/resume", headers=AUTH) as r:
                assert r.status == 202
    finally:
        await server.stop()
    # The server restarts: the crawl that was running goes on, then is stopped.
    await server.start()
    try:
        async with aiohttp.ClientSession() as s:
            url = f"{server.url}/v1/crawls/{crawl_id}"
            doc = await wait_state(s, url, {"running"})
            # It goes on: pages fetched after the restart (robots.txt and the sitemap
            # file first, each a delay apart; however slow the machine is).
            deadline = asyncio.get_running_loop().time() + 60
            while doc["progress"]["fetched"] <= before:
                assert asyncio.get_running_loop().time() < deadline, doc
                await asyncio.sleep(0.2)
                async with s.get(url) as r:
                    doc = await r.json()
                assert doc["state"] == "running", doc
            async with s.post(f"{url}/stop", headers=AUTH) as r:
                assert r.status == 202
            doc = await wait_state(s, url, {"finished", "failed"})
            assert doc["state"] == "finished" and doc["stopped"] == "stopped by request"
            assert doc["progress"]["fetched"] > before
    finally:
        await server.stop()


async def test_schemathesis_finds_no_server_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAWL_MAX_CRAWLS", "2")  # its valid bodies start real crawls
    server = Server(tmp_path)
    await server.start()
    try:
        st = str(Path(sys.executable).with_name("schemathesis"))
        proc = await asyncio.create_subprocess_exec(
            st,
            "run",
            f"{server.url}/api/v1/openapi.json",
            "-H",
            f"Authorization: Bearer {TOKEN}",
            "--checks",
            "not_a_server_error,response_schema_conformance",
            "--max-examples",
            "15",
            "--request-timeout",
            "10",
            "--exclude-path",
            "/api/v1/search",
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 240)
        text = out.decode()
        (tmp_path / "schemathesis.txt").write_text(text)
        assert proc.returncode == 0, text[-4000:]
    finally:
        await server.stop()
