"""Headless Debian Chromium driven by Playwright, against a search server on loopback.

The tests skip only when /usr/bin/chromium is absent (``make test`` installs it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.threadserve import serve_in_thread
from tests.chromium import CHROMIUM, CHROMIUM_ARGS

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Browser, Page, sync_playwright

__all__ = ["CHROMIUM_ARGS", "serve_in_thread"]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    try:
        yield pg
    finally:
        context.close()
