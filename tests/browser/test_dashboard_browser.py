"""The crawl dashboard in real headless Chromium: what an operator sees and does.

The service serves a crawl that really ran (a fake client answering for three hosts,
with 404s, a 500 and a redirect loop, into the crawl's own SQLite store and event log)
with five minutes of progress samples, and a failed crawl (no process) to steer and
delete. Screenshots of both pages are checked by their pixels (the chart's blue line,
the status mix's green and orange), and the console stays free of errors (CSP).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import ConsoleMessage, Page, Response, expect

from tests.api.threadserve import serve_in_thread
from tests.browser.png import read_png
from trawl.api.app import create_app, default_route_sets
from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.service.spec import check_spec
from trawl.storage.open import open_reader
from trawl.telemetry import Telemetry, read_json, write_json_atomic
from trawl.testing.fakeclient import FakeClient, FakePage

TOKEN = "dashboard-control-token-0123456789"
DONE, FAILED = "20260101-000000-aaaaaa", "20260101-000100-bbbbbb"
HOSTS = ("news.example", "shop.example", "wiki.example")


def _site(host: str, n: int) -> dict[str, FakePage]:
    links = "".join(f'<a href="/p/{i}">page {i}</a> ' for i in range(n))
    pages = {
        f"https://{host}/": FakePage.html(
            f"<title>{host}</title><p>Welcome to {host}.</p>{links}"
            '<a href="/gone">gone</a> <a href="/loop">loop</a> <a href="/down">down</a>'
        ),
        f"https://{host}/loop": FakePage.redirect("/loop"),
        f"https://{host}/down": FakePage(b"", 500),
    }
    for i in range(n):
        words = " ".join(f"{host.split('.')[0]}{i}word{j}" for j in range(40))
        pages[f"https://{host}/p/{i}"] = FakePage.html(f"<title>{host} {i}</title><p>{words}</p>")
    return pages


def _crawl_that_ran(data: Path) -> None:
    directory = data / "crawls" / DONE
    pages = {k: v for i, h in enumerate(HOSTS) for k, v in _site(h, 6 + 4 * i).items()}
    config = CrawlConfig(
        data_dir=directory,
        seeds=tuple(f"https://{h}/" for h in HOSTS),
        delay=0.0,
        parse_workers=0,
        fsync=False,
        min_free_space=0,
        max_attempts=1,
        politeness_dir=data / "hosts",  # the server's, as its crawls share
    )

    async def run() -> Any:
        crawl = Crawl(config, client=FakeClient(pages))
        try:
            summary = await crawl.run()
            return crawl.snapshot(), crawl.counters.all(), summary
        finally:
            crawl.close()

    # In a thread of its own: Playwright's sync API runs an event loop in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        snapshot, counters, _summary = pool.submit(asyncio.run, run()).result()
    telemetry = Telemetry()
    reader = open_reader(directory)
    try:
        telemetry.seed_hosts(reader)
    finally:
        reader.close()
    doc = telemetry.progress(
        snapshot=dataclasses.asdict(snapshot),
        counters=counters,
        state="exited",
        crawl_id=DONE,
    )
    start = time.time() - 300
    doc["history"] = [
        [start + t, round(12 + 6 * math.sin(t / 40) + (t % 7) * 0.4, 2)] for t in range(300)
    ]
    write_json_atomic(directory / "progress.json", doc)
    spec = check_spec({"seeds": list(config.seeds), "name": "three sites", "delay": 0.5})
    write_json_atomic(directory / "spec.json", spec)
    finished = {"desired": "finished", "stopped": "done", "created": start, "finished": time.time()}
    write_json_atomic(directory / "state.json", finished)


def _failed_crawl(data: Path) -> None:
    directory = data / "crawls" / FAILED
    directory.mkdir(parents=True)
    write_json_atomic(directory / "state.json", {"desired": "failed", "error": "test"})
    spec = check_spec({"seeds": ["https://later.example/"], "name": "to steer"})
    write_json_atomic(directory / "spec.json", spec)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("dashboard")
    _crawl_that_ran(data)
    _failed_crawl(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAWL_TOKEN", TOKEN)
        for url in serve_in_thread(lambda: create_app(data, route_sets=default_route_sets(data))):
            yield url.rstrip("/"), data


def _errors(page: Page, *, expected: tuple[int, ...] = ()) -> list[str]:
    """Console errors (a CSP violation is one) and failed requests, as they come; the
    browser's own line about a failed request is left to the request's status."""
    found: list[str] = []

    def console(m: ConsoleMessage) -> None:
        if m.type == "error" and not m.text.startswith("Failed to load resource"):
            found.append(m.text)

    def response(r: Response) -> None:
        if r.status >= 400 and r.status not in expected:
            found.append(f"{r.status} {r.url}")

    page.on("console", console)
    page.on("response", response)
    return found


def _shot(page: Page, path: Path) -> np.ndarray:
    page.screenshot(path=str(path), full_page=True)
    return read_png(path.read_bytes())


def _has(pixels: np.ndarray, rgb: tuple[int, int, int], at_least: int = 200) -> bool:
    near = np.abs(pixels[..., :3].astype(int) - np.array(rgb)).sum(axis=2) < 30
    return int(near.sum()) >= at_least


def test_a_crawl_as_the_operator_sees_it(
    page: Page, service: tuple[str, Path], tmp_path: Path
) -> None:
    base, _data = service
    errors = _errors(page)
    page.goto(f"{base}/crawls/{DONE}")
    expect(page.locator("#state")).to_have_text("finished")
    expect(page.locator("[data-k=fetched]")).not_to_have_text("0")
    expect(page.locator("svg.chart polyline")).to_have_count(1)
    expect(page.locator("svg.mix rect")).to_have_count(4)  # 200, 301, 404, 500
    failures = page.locator("section", has_text="failures by reason")
    expect(failures).to_contain_text("http 404")
    expect(failures).to_contain_text("redirect loop")
    # Drill down into a host: its robots.txt, its queue and the shared lease.
    page.locator("a[data-host='wiki.example']").first.click()
    panel = page.locator("#hostpanel")
    expect(panel).to_contain_text("host wiki.example")
    expect(panel).to_contain_text("no-rules")  # the fake client's robots.txt is a 404
    expect(panel).to_contain_text("across crawls: idle")
    expect(page.locator("#delete button")).to_be_enabled()
    expect(page.locator("#why")).to_have_text("stopped: done")
    expect(page.locator("#events")).to_contain_text("page.new")  # the live event stream
    pixels = _shot(page, tmp_path / "crawl.png")
    assert _has(pixels, (0x3B, 0x6F, 0xD8))  # the pages/s line
    assert _has(pixels, (0x3A, 0x9D, 0x5D)) and _has(pixels, (0xE5, 0x9A, 0x2F), 20)  # 2xx, 4xx
    assert not errors, errors


def test_steer_then_delete_a_crawl(page: Page, service: tuple[str, Path], tmp_path: Path) -> None:
    base, data = service
    errors = _errors(page, expected=(400, 404))  # refused seeds and confirmation; deleted
    page.goto(f"{base}/crawls/{FAILED}")
    page.fill("#token", TOKEN)
    page.dispatch_event("#token", "change")
    expect(page.locator("#state")).to_have_text("failed")
    page.fill("#limits input[name=max_pages]", "250")
    page.fill("#limits input[name=delay]", "0.25")
    page.click("#limits button")
    expect(page.locator("#msg")).to_have_text("change recorded (revision 1)")
    page.fill("#seeds textarea", "https://later.example/more\nftp://nope/")
    page.click("#seeds button")
    expect(page.locator("#msg")).to_contain_text("seeds[1]")  # refused, field named
    page.fill("#seeds textarea", "https://later.example/more")
    page.click("#seeds button")
    expect(page.locator("#msg")).to_have_text("seeds recorded (revision 2)")
    page.fill("#hostrule input[name=host]", "Slow.example")
    page.fill("#hostrule input[name=delay]", "5")
    page.fill("#hostrule input[name=priority]", "-2")
    page.click("#hostrule button")
    expect(page.locator("#msg")).to_have_text("change recorded (revision 3)")
    page.fill("#hostrule input[name=host]", "no host/")
    page.click("#hostrule button")
    expect(page.locator("#msg")).to_contain_text("hosts.no host/")  # refused, field named
    page.fill("#hostrule input[name=host]", "ads.example")
    page.fill("#hostrule input[name=delay]", "")
    page.fill("#hostrule input[name=priority]", "")
    page.check("#hostrule input[name=block]")
    page.click("#hostrule button")
    expect(page.locator("#msg")).to_have_text("change recorded (revision 4)")
    spec = read_json(data / "crawls" / FAILED / "spec.json") or {}
    assert spec["limits"] == {"max_pages": 250} and spec["delay"] == 0.25
    assert spec["seeds"] == ["https://later.example/", "https://later.example/more"]
    assert spec["hosts"] == {
        "slow.example": {"delay": 5.0, "priority": -2},
        "ads.example": {"block": True},
    }
    page.fill("#hostrule input[name=host]", "slow.example")
    page.check("#hostrule input[name=remove]")
    page.click("#hostrule button")
    expect(page.locator("#msg")).to_have_text("change recorded (revision 5)")
    spec = read_json(data / "crawls" / FAILED / "spec.json") or {}
    assert spec["hosts"] == {"ads.example": {"block": True}}
    _shot(page, tmp_path / "steer.png")
    page.fill("#delete input", "not-the-id")
    page.click("#delete button")
    expect(page.locator("#msg")).to_contain_text("confirm")
    page.fill("#delete input", FAILED)
    page.click("#delete button")
    page.wait_for_url(f"{base}/crawls")
    expect(page.locator("#crawls")).to_contain_text("three sites")
    expect(page.locator("#crawls")).not_to_contain_text("to steer")
    assert not (data / "crawls" / FAILED).exists()
    assert not errors, errors


def test_the_new_crawl_form_says_what_is_wrong(
    page: Page, service: tuple[str, Path], tmp_path: Path
) -> None:
    base, _data = service
    errors = _errors(page, expected=(400,))
    page.goto(f"{base}/crawls")
    page.fill("#token", TOKEN)
    page.dispatch_event("#token", "change")
    form = page.locator("#newcrawl")
    form.locator("textarea[name=seeds]").fill("ftp://not-crawlable/")
    form.locator("input[name=max_pages]").fill("100")
    form.locator("textarea[name=more]").fill('{"purpose": "training", "bogus": 1}')
    form.locator("button").click()
    message = page.locator("#msg")
    expect(message).to_contain_text("400")
    expect(message).to_contain_text("seeds[0]")
    expect(message).to_contain_text("bogus")
    pixels = _shot(page, tmp_path / "list.png")
    assert pixels.shape[0] > 300
    assert not errors, errors
