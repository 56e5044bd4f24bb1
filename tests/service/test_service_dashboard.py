"""The dashboard in headless Chromium: live counts, the pause button, a screenshot."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.service.test_service_api import AUTH, TOKEN, Server, crawl_body
from tests.testweb import TestWeb

READ = "dashboard-read-token-0123456789"


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")
@pytest.mark.parametrize("read_token", [False, True], ids=["open-reads", "read-token"])
async def test_dashboard_live_and_pause(tmp_path: Path, read_token: bool) -> None:
    """With a read token, the browser sends it as HTTP Basic (its login prompt): the
    page, its fetches and its event stream all carry it, and the buttons still work."""
    from playwright.async_api import HttpCredentials, async_playwright

    async with TestWeb() as web:
        if read_token:
            server = Server(tmp_path, "--require-read-token", env={"TRAWL_READ_TOKEN": READ})
        else:
            server = Server(tmp_path)
        await server.start()
        try:
            async with aiohttp.ClientSession() as s:
                body = crawl_body(web, delay=0.4, name="books")
                async with s.post(f"{server.url}/v1/crawls", json=body, headers=AUTH) as r:
                    crawl_id = (await r.json())["id"]
                async with s.get(f"{server.url}/v1/crawls/{crawl_id}") as r:
                    assert r.status == (401 if read_token else 200)
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
                )
                login: HttpCredentials | None = (
                    {"username": "operator", "password": READ} if read_token else None
                )
                page = await browser.new_page(
                    viewport={"width": 1100, "height": 900}, http_credentials=login
                )
                await page.goto(f"{server.url}/crawls")
                await page.wait_for_selector(f"a[href='/crawls/{crawl_id}']")
                await page.goto(f"{server.url}/crawls/{crawl_id}")
                await page.fill("#token", TOKEN)
                await page.dispatch_event("#token", "change")
                first = int((await page.text_content("[data-k=fetched]") or "0").replace(",", ""))
                for _ in range(100):  # CSP forbids wait_for_function's eval: poll
                    text = await page.text_content("[data-k=fetched]") or "0"
                    if int(text.replace(",", "")) > first:
                        break
                    await asyncio.sleep(0.1)
                else:
                    pytest.fail("the fetched count did not move")
                for _ in range(100):  # the event stream fills "recent events"
                    if "page.new" in (await page.text_content("#events") or ""):
                        break
                    await asyncio.sleep(0.1)
                else:
                    pytest.fail("no page events reached the dashboard")
                await page.click("button[data-a=pause]")
                try:
                    await page.wait_for_selector("#state.paused", timeout=10_000)
                except Exception:
                    await page.screenshot(path=str(tmp_path / "dashboard-fail.png"))
                    raise
                await asyncio.sleep(1.5)
                shot = tmp_path / "dashboard.png"
                await page.screenshot(path=str(shot), full_page=True)
                await browser.close()
            data = shot.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        finally:
            await server.stop()
