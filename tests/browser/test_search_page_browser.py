"""The search page in real headless Chromium: search, highlights, paging, typos, screenshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.api.threadserve import serve_in_thread
from tests.browser.png import read_png
from tests.browser.site import make_site_app


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("site")
    yield from serve_in_thread(lambda: make_site_app(data))


def _search(page: Page, site: str, query: str) -> None:
    page.goto(site)
    box = page.get_by_role("searchbox", name="Search the crawl")
    expect(box).to_be_focused()
    box.fill(query)
    box.press("Enter")
    page.wait_for_load_state()


def test_search_shows_highlighted_results(page: Page, site: str) -> None:
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    _search(page, site, "python crawler")
    assert "query=python+crawler" in page.url
    hits = page.locator("li.hit")
    expect(hits).to_have_count(10)
    expect(page.locator(".stats")).to_contain_text("About 35 results")
    expect(page.locator(".stats")).to_contain_text(" ms)")
    marks = hits.first.locator("mark")
    assert marks.count() >= 2
    assert {m.lower() for m in marks.all_inner_texts()} <= {"python", "crawler"}
    expect(hits.first.locator("h2 a")).to_have_attribute("href", "http://site0.test/page/0")
    expect(page.get_by_role("searchbox")).to_have_value("python crawler")
    assert all(url.startswith(site) for url in requests), requests
    assert not [c for c in console if c.startswith("error")], console


def test_paging(page: Page, site: str) -> None:
    _search(page, site, "python")
    pager = page.get_by_role("navigation", name="Result pages")
    pager.get_by_role("link", name="Next").click()
    expect(pager.locator('[aria-current="page"]')).to_have_text("2")
    expect(page.locator(".stats")).to_contain_text("Page 2 of about 35 results")
    first_title = page.locator("li.hit h2").first.inner_text()
    assert first_title == "Python crawler notes 10"
    pager.get_by_role("link", name="4", exact=True).click()
    expect(page.locator("li.hit")).to_have_count(5)
    expect(pager.get_by_role("link", name="Next")).to_have_count(0)
    pager.get_by_role("link", name="Previous").click()
    expect(pager.locator('[aria-current="page"]')).to_have_text("3")


def test_typo_shows_showing_results_for(page: Page, site: str) -> None:
    _search(page, site, "pythn")
    line = page.locator(".corrected")
    expect(line).to_contain_text("Showing results for python")
    expect(line.get_by_role("link", name="pythn")).to_have_attribute("href", "/?query=pythn")
    expect(page.locator("li.hit").first.locator("mark").first).to_have_text("python")


def test_bad_query_gets_a_clear_message(page: Page, site: str) -> None:
    _search(page, site, '"unbalanced')
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("That query cannot be read")
    expect(page.get_by_role("searchbox")).to_have_value('"unbalanced')


def test_works_without_javascript(browser: Browser, site: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(site)
        page.get_by_role("searchbox").fill("python")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("li.hit")).to_have_count(10)
        page.get_by_role("link", name="Next").click()
        expect(page.locator('[aria-current="page"]')).to_have_text("2")
    finally:
        context.close()


def test_results_page_screenshot(page: Page, site: str, tmp_path: Path) -> None:
    _search(page, site, "python crawler")
    expect(page.locator("li.hit")).to_have_count(10)
    shot = tmp_path / "results.png"
    page.screenshot(path=str(shot))
    pixels = read_png(shot.read_bytes())
    assert pixels.shape[:2] == (900, 1280)
    rgb = pixels[..., :3].astype(np.float64)
    assert rgb.std() > 20, "the screenshot is (nearly) one colour"
    # Some pixels carry the highlight colour of <mark> (light yellow).
    yellow = (rgb[..., 0] > 240) & (rgb[..., 1] > 225) & (rgb[..., 2] < 190)
    assert yellow.sum() > 200
    # and the link blue of the titles
    blue = (rgb[..., 2] > 150) & (rgb[..., 0] < 80) & (rgb[..., 1] < 130)
    assert blue.sum() > 500
