"""The search page of a server whose reads need a token, in real headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Error, expect

from tests.api.fakes import FakeSearcher, fake_index
from tests.api.threadserve import serve_in_thread
from trawl.api.app import create_app
from trawl.api.guard import Guard
from trawl.api.search import SearchRoutes

READ = "browser-read-token-0123456789"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = fake_index(tmp_path_factory.mktemp("guarded"))
    searcher = FakeSearcher()
    routes = SearchRoutes(data, searcher_factory=lambda _d: searcher)
    yield from serve_in_thread(
        lambda: create_app(data, route_sets=[routes], guard=Guard(read_token=READ))
    )


def test_the_browser_logs_in_with_the_token(browser: Browser, site: str) -> None:
    # The login prompt's answer: any user name, the token as the password.
    context = browser.new_context(http_credentials={"username": "reader", "password": READ})
    try:
        page = context.new_page()
        answers: dict[str, int] = {}
        page.on("response", lambda r: answers.__setitem__(r.url.removeprefix(site), r.status))
        assert (response := page.goto(site + "?query=python+crawler")) is not None
        assert response.status == 200
        expect(page.locator("li.hit")).to_have_count(10)
        assert answers["static/search.css"] == 200
    finally:
        context.close()


def test_without_the_token_the_browser_is_asked_for_it(browser: Browser, site: str) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        answers: list[tuple[int, str]] = []
        page.on("response", lambda r: answers.append((r.status, r.headers["www-authenticate"])))
        # Chromium asks for a login; with none to give, Playwright cancels the prompt.
        with pytest.raises(Error, match="AUTH"):
            page.goto(site + "?query=python")
        assert answers and answers[0][0] == 401
        assert "Basic" in answers[0][1]
    finally:
        context.close()
