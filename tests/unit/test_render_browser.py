"""Playwright is an optional extra: imported lazily, with a clear message when missing."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.errors import ConfigError
from trawl.fetch.render.browser import (
    DEBIAN_CHROMIUM,
    _sweep,
    find_browser,
    require_playwright,
)
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.testing.fakeclient import FakeClient


def test_without_playwright_the_message_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)  # import fails
    with pytest.raises(ConfigError, match=r"pip install 'trawl\[render\]'"):
        require_playwright()
    config = CrawlConfig(data_dir=tmp_path, render="auto", min_free_space=0)
    with pytest.raises(ConfigError, match="Playwright"):
        Crawl(config, store=MemoryCrawlStore(), blobs=MemoryBlobStore(), client=FakeClient({}))
    # A crawl that never renders needs none of it.
    never = config.with_changes(render="never")
    Crawl(never, store=MemoryCrawlStore(), blobs=MemoryBlobStore(), client=FakeClient({})).close()


def test_the_browser_is_found_or_named() -> None:
    if DEBIAN_CHROMIUM.exists():
        assert find_browser() == str(DEBIAN_CHROMIUM)
    with pytest.raises(ConfigError, match="does not exist"):
        find_browser("/nonexistent/chromium")


def test_wrapper_folders_of_dead_browsers_are_swept(tmp_path: Path) -> None:
    gone, alive, starting = (tmp_path / f"trawl-browser-{n}" for n in ("gone", "alive", "new"))
    for folder in (gone, alive, starting):
        folder.mkdir()
    (gone / "pid").write_text("999999999")  # no such process
    (alive / "pid").write_text(str(os.getpid()))
    # The profiles Playwright's driver made for them (the wrapper notes each path);
    # only a path named as the driver names a profile is removed.
    profiles = {}
    for folder in (gone, alive):
        profiles[folder] = tmp_path / f"playwright_chromiumdev_profile-{folder.name}"
        (profiles[folder] / "Default").mkdir(parents=True)
        (folder / "profile").write_text(str(profiles[folder]))
    other = tmp_path / "gone-elsewhere"
    other.mkdir()
    (other / "keep").write_text("not a profile")
    elsewhere = tmp_path / "trawl-browser-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pid").write_text("999999999")
    (elsewhere / "profile").write_text(str(other))
    _sweep(tmp_path)
    assert not gone.exists() and not profiles[gone].exists()
    assert alive.exists() and starting.exists() and profiles[alive].exists()
    assert not elsewhere.exists() and (other / "keep").exists()
