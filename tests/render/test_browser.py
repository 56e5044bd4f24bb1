"""The browser itself: no network of its own, restarted when it crashes, hangs or grows,
and never outliving a crawl killed with SIGKILL.

Real Chromium against the JavaScript site of the test web; each test a page or four.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil  # type: ignore[import-untyped]
import pytest
from playwright.async_api import Error as PlaywrightError

from tests.integration.crawlkit import text_records, web_config
from tests.testweb import TestWeb
from trawl.config import MIB, Timeouts
from trawl.crawl import Crawl
from trawl.fetch.render.browser import find_browser, launch
from trawl.fetch.render.step import RenderStep
from trawl.stats import url_states

TRAWL = str(Path(sys.executable).with_name("trawl"))
JS = "js.test"


def _pages(states: dict[str, tuple[str, str | None]]) -> dict[str, tuple[str, str | None]]:
    """The pages' states (js.test's /sitemap.xml, a 404, is a sitemap item of its own)."""
    return {u: v for u, v in states.items() if "#sitemap" not in u}


def _alive_in_group(pgid: int) -> list[int]:
    out = []
    for proc in psutil.process_iter(["pid", "status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        try:
            if os.getpgid(proc.info["pid"]) == pgid:
                out.append(proc.info["pid"])
        except OSError:
            continue
    return out


async def test_a_request_that_escapes_the_routing_reaches_no_server() -> None:
    """A context with no routing at all: the browser's own network goes nowhere."""
    async with TestWeb() as web:
        launched = await launch(find_browser())
        try:
            context = await launched.browser.new_context()
            page = await context.new_page()
            for url in (
                f"http://127.0.0.1:{web.port}/",
                f"http://localhost:{web.port}/",
                web.url(JS, "/"),
            ):
                with pytest.raises(PlaywrightError, match="ERR_PROXY_CONNECTION_FAILED"):
                    await page.goto(url, timeout=5_000)
            page = await context.new_page()
            await page.set_content("<p>here</p>")
            reached = await page.evaluate(
                f"""async () => {{
                    const out = [];
                    for (const u of ["http://127.0.0.1:{web.port}/secret",
                                     "http://[::1]:{web.port}/secret"]) {{
                        try {{ await fetch(u); out.push(u); }} catch (e) {{}}
                    }}
                    return out;
                }}"""
            )
            assert reached == []
            await context.close()
        finally:
            await launched.close()
        assert len(web.log) == 0  # not one request reached the server


def _config(web: TestWeb, data: Path, seeds: list[str], **changes: object) -> object:
    return web_config(
        web,
        data,
        seeds,
        render="always",
        render_deadline=2.0,
        allow_networks=(ipaddress.ip_network("127.0.0.1/32"),),
        timeouts=Timeouts(connect=1.0, first_byte=2.0, total=3.0),
        **changes,
    )


def _left_behind(folder: Path, profile: Path) -> list[Path]:
    """What a browser leaves in the temporary directory: its wrapper's folder (and in
    it Chromium's TMPDIR, where the singleton socket's folder goes) and its profile."""
    return [p for p in (folder, profile) if p.exists()]


def _profile_of(folder: Path) -> Path:
    """The profile the wrapper in ``folder`` noted (it exists while the browser runs)."""
    profile = Path((folder / "profile").read_text())
    assert profile.name.startswith("playwright_chromiumdev_profile-") and profile.exists()
    return profile


async def _crawl_with(
    data: Path, web: TestWeb, seeds: list[str], trouble: str, **changes: object
) -> tuple[Crawl, RenderStep]:
    """Crawl ``seeds``; the first browser gets SIGKILL (``crashed``) or SIGSTOP
    (``hung``) while its first page renders. Asserts that the struck browser's folder
    and profile are gone once the crawl is closed."""
    crawl = Crawl(_config(web, data, seeds, **changes))  # type: ignore[arg-type]
    render = crawl.fetcher.render
    assert render is not None
    struck: list[Path] = []

    async def strike() -> None:
        for _ in range(3000):  # until the first page is open in the browser
            if render.pool.browser is not None and render.pool.browser.active:
                break
            await asyncio.sleep(0.01)
        browser = render.pool.browser
        assert browser is not None and browser.pid is not None
        struck.extend((browser.folder, _profile_of(browser.folder)))
        os.killpg(browser.pid, signal.SIGKILL if trouble == "crashed" else signal.SIGSTOP)

    striker = asyncio.create_task(strike())
    try:
        await crawl.run()
    finally:
        crawl.close()
        striker.cancel()
    assert len(struck) == 2 and _left_behind(*struck) == []
    return crawl, render


async def test_a_crashed_browser_is_restarted_and_its_page_rendered_again(tmp_path: Path) -> None:
    async with TestWeb() as web:
        seeds = [web.url(JS, "/app/about")]
        # A 64 MiB cap: every browser is past it after a page (a restart each time).
        crawl, render = await _crawl_with(
            tmp_path, web, seeds, "crashed", max_depth=1, render_memory=64 * MIB
        )
        counters = crawl.counters.all()
    assert render.pool.restarts == {"crashed": 1, "memory": 2}
    assert render.pool.launches == 3
    assert counters["render:restart:crashed"] == 1
    assert counters["render:browser lost"] == 1  # the one page in it: retried
    assert counters["render:restart:memory"] == 2
    states = _pages(url_states(tmp_path))
    assert len(states) == 2  # /app/about and /hidden, which its script links
    assert set(states.values()) == {("parsed", "stored")}  # retried, not failed
    texts = {r["url"]: r for r in text_records(tmp_path)}
    assert all(r["provenance"]["render"].startswith("rendered: always") for r in texts.values())
    assert "A page only the script links" in texts[seeds[0]]["text"]
    for pid in render.pool.pids:
        assert _alive_in_group(pid) == []


async def test_a_hung_browser_is_killed_and_its_page_rendered_again(tmp_path: Path) -> None:
    async with TestWeb() as web:
        seeds = [web.url(JS, "/app/about")]
        crawl, render = await _crawl_with(tmp_path, web, seeds, "hung", max_depth=1)
        counters = crawl.counters.all()
        hidden = web.url(JS, "/hidden")  # the one link of /app/about (added by its script)
    assert render.pool.restarts == {"hung": 1}
    assert counters["render:restart:hung"] == 1
    assert counters["render:browser lost"] == 1
    assert _pages(url_states(tmp_path)) == {
        seeds[0]: ("parsed", "stored"),
        hidden: ("parsed", "stored"),
    }
    for text in text_records(tmp_path):
        assert "; settled in " in text["provenance"]["render"]
    assert _alive_in_group(render.pool.pids[0]) == []  # the stopped browser was killed


async def test_a_crawl_killed_with_sigkill_leaves_no_browser_and_renders_again(
    tmp_path: Path,
) -> None:
    async with TestWeb() as web:
        data = tmp_path / "data"
        cmd = [TRAWL, "crawl", "--data", str(data), "--quiet", "--delay", "0.05"]
        cmd += ["--allow-network", "127.0.0.1/32", "--render", "always", "--max-depth", "1"]
        # The host the killed crawl held waits a fetch's whole timeout before the run
        # after it contacts it (its last request may still run at the server): 8 s.
        cmd += ["--render-deadline", "3", "--parse-workers", "0", "--timeout", "8"]
        cmd += [f"--resolve={h}=127.0.0.1" for h in web.resolve_map()]
        cmd += [web.url(JS, "/app/articles")]
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        browser = None
        for _ in range(600):  # until Chromium renders a page
            await asyncio.sleep(0.05)
            # The crawl's own Chromium (a descendant), not one of a test run beside it.
            with contextlib.suppress(psutil.Error):
                for p in psutil.Process(proc.pid).children(recursive=True):
                    # The browser itself, once its wrapper (a script named chromium)
                    # has become it: its helpers (crashpad's handler among them) have
                    # no profile, and the wrapper has not set TMPDIR yet.
                    named = [a for a in p.cmdline() if a.startswith("--user-data-dir=")]
                    tmp = p.environ().get("TMPDIR") if named else None
                    if "chrom" in p.name() and tmp and "trawl-browser-" in tmp:
                        profile = Path(named[0].partition("=")[2])
                        folder = Path(tmp)  # the wrapper's
                        browser = os.getpgid(p.pid)
                        break
            if browser is not None or proc.returncode is not None:
                break
        assert browser is not None, "no browser started"
        # The crawler, its Playwright driver, everything in its process group at once.
        os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        for _ in range(100):
            if not _alive_in_group(browser):
                break
            await asyncio.sleep(0.05)
        assert _alive_in_group(browser) == []
        again = await asyncio.create_subprocess_exec(
            *cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _out, err = await again.communicate()
        assert again.returncode == 0, err.decode()
    # The killed crawl could not remove its browser's folder and profile; the next
    # launch swept them.
    assert folder.name.startswith("trawl-browser-")
    assert _left_behind(folder, profile) == []
    states = _pages(url_states(data))
    assert len(states) == 4 and set(states.values()) == {("parsed", "stored")}
    texts = text_records(data)
    assert {r["url"] for r in texts} == set(states)
    assert all(r["provenance"]["render"].startswith("rendered: always") for r in texts)
