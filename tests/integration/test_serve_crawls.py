"""One data directory, every crawl in it served, by two ``trawl serve`` at once.

The sample web is served by a child process; ``trawl crawl`` crawls two of its hosts
into DIR, then ``trawl serve --data DIR`` starts an API crawl of a third host. Both
crawls are listed, read (pages, hosts, events) and searched: 10 distinctive phrases
of each crawl's articles find their article, across crawls and with ``crawl=``. Then
a second ``trawl serve`` over DIR answers beside the first (a standby: control calls
get 503), both are asked searches from threads, the first (the manager) is killed
with SIGKILL, and the survivor answers every request it is sent, takes the crawls
over and answers control calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest

from tests.api.serveproc import trawl_serve
from trawl.testing.sampleweb import SampleWeb

TOKEN = "serve-crawls-token-0123456789"
WEB = SampleWeb(4, 20, seed=3)
MAIN_HOSTS = ("news-00.sample", "blog-00.sample")  # shop-00 asks for Crawl-delay: 2
API_HOST = "wiki-00.sample"


def _call(
    url: str, *, body: dict[str, Any] | None = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def _articles(host: str, port: int) -> list[str]:
    out = []
    for url in WEB.urls(port=port):
        if f"//{host}:" not in url:
            continue
        try:
            WEB.distinctive_phrase(url)
        except KeyError:
            continue
        if WEB.duplicate_of(url) is None and WEB.near_duplicate_of(url) is None:
            out.append(url)
    return out


@dataclass
class Setup:
    data: Path
    port: int
    api_crawl: str = ""
    main_articles: list[str] = field(default_factory=list)
    api_articles: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def sample_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    resolve = tmp_path_factory.mktemp("web") / "resolve.txt"
    cmd = [sys.executable, "-m", "trawl.testing.sampleweb", "serve", "--hosts", "4"]
    cmd += ["--pages", "20", "--seed", "3", "--resolve-file", str(resolve)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    port = int(first.split(":")[2].split("/")[0])
    try:
        yield port, resolve
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


@pytest.fixture(scope="module")
def setup(sample_web: tuple[int, Path], tmp_path_factory: pytest.TempPathFactory) -> Setup:
    port, resolve = sample_web
    data = tmp_path_factory.mktemp("serve-crawls")
    seeds = [WEB.url(h, port=port) for h in MAIN_HOSTS]
    cmd = [sys.executable, "-m", "trawl", "crawl", *seeds, "--data", str(data), "--quiet"]
    cmd += ["--delay", "0.02", "--allow-network", "127.0.0.0/8", "--resolve-file", str(resolve)]
    cmd += ["--scope", "allowlist", *(a for h in MAIN_HOSTS for a in ("--allow-host", h))]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    s = Setup(data, port)
    s.main_articles = [u for h in MAIN_HOSTS for u in _articles(h, port)][:10]
    s.api_articles = _articles(API_HOST, port)[:10]
    return s


def _serve(data: Path) -> Any:
    return trawl_serve(data, "--allow-network", "127.0.0.0/8", env={"TRAWL_TOKEN": TOKEN})


def _first(base: str, url: str, crawl: str | None = None) -> tuple[str, str] | None:
    """The crawl of the first hit for the article's phrase, if it is the article (or a
    copy of it in other furniture: which of the two is stored first is a race)."""
    for link, owner in _found(base, url, crawl)[:1]:
        if link == url or WEB.near_duplicate_of(link) == url:
            return url, owner
    return None


def _found(base: str, url: str, crawl: str | None = None) -> list[tuple[str, str]]:
    query = quote_plus(WEB.distinctive_phrase(url))
    narrow = f"&crawl={crawl}" if crawl else ""
    status, body = _call(f"{base}api/v1/search?query={query}{narrow}")
    assert status == 200, body
    return [(h["link"], h["crawl"]) for h in body["results"]]


def test_every_crawl_is_listed_read_and_searched_then_served_through_a_kill(
    setup: Setup,
) -> None:
    data, port = setup.data, setup.port
    with _serve(data) as (base, first):
        # An API crawl beside the directory's own.
        spec = {
            "seeds": [WEB.url(API_HOST, port=port)],
            "delay": 0.02,
            "allow_networks": ["127.0.0.0/8"],
            "resolve": {API_HOST: "127.0.0.1"},
        }
        status, made = _call(f"{base}v1/crawls", body=spec, token=TOKEN)
        assert status == 201, made
        crawl = made["id"]
        deadline = time.monotonic() + 60
        while _call(f"{base}v1/crawls/{crawl}")[1]["state"] != "finished":
            assert time.monotonic() < deadline, "the API crawl did not finish"
            time.sleep(0.2)

        status, listed = _call(f"{base}v1/crawls")
        views = {c["id"]: c for c in listed["crawls"]}
        assert set(views) == {"main", crawl}
        assert views["main"]["managed"] is False and views["main"]["state"] == "finished"
        assert views["main"]["progress"]["documents"] >= 20
        assert views[crawl]["managed"] is True
        page = setup.main_articles[0]
        status, copy = _call(f"{base}v1/pages?url={quote_plus(page)}&body=false")
        assert status == 200 and copy["crawl"] == "main"
        status, host = _call(f"{base}v1/hosts/{MAIN_HOSTS[0]}:{port}?crawl=main")
        assert status == 200 and host["pages_fetched"] > 0
        status, events = _call(f"{base}v1/events?crawl=main&limit=5")
        assert status == 200 and len(events["events"]) == 5
        status, refused = _call(f"{base}v1/crawls/main/stop", body={}, token=TOKEN)
        assert status == 409 and "trawl crawl" in refused["error"]

        # 10 of 10 distinctive phrases of each crawl find their article, first.
        for articles, owner in ((setup.main_articles, "main"), (setup.api_articles, crawl)):
            assert len(articles) == 10
            for url in articles:
                assert _first(base, url) == (url, owner)
                assert _first(base, url, owner) == (url, owner)
                other = crawl if owner == "main" else "main"
                assert url not in [link for link, _c in _found(base, url, other)]

        with _serve(data) as (second, _proc):
            _drill(base, first, second, setup, crawl)


def _drill(base: str, first: subprocess.Popen[str], second: str, setup: Setup, crawl: str) -> None:
    """Two servers answer; the manager is killed; the survivor answers every request."""
    assert _call(f"{base}healthz")[1]["role"] == "manager"
    assert _call(f"{second}healthz")[1]["role"] == "standby"
    status, body = _call(f"{second}v1/crawls/{crawl}/stop", body={}, token=TOKEN)
    assert status == 503 and "standby" in body["error"]
    urls = setup.main_articles + setup.api_articles
    answered = {base: 0, second: 0}
    failed = {base: 0, second: 0}
    stop = threading.Event()
    counting = threading.Lock()

    def ask(server: str) -> None:
        n = 0
        while not stop.is_set():
            url = urls[n % len(urls)]
            n += 1
            try:
                ok = _first(server, url) == (url, "main" if url in urls[:10] else crawl)
            except (OSError, AssertionError):
                ok = False
            with counting:
                (answered if ok else failed)[server] += 1

    threads = [threading.Thread(target=ask, args=(s,)) for s in (base, second, second)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    before = dict(answered)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    killed_at = time.monotonic()
    time.sleep(1.0)
    during = answered[second] - before[second]
    # The survivor takes over the crawls and answers control calls itself.
    deadline = time.monotonic() + 15
    while _call(f"{second}healthz")[1]["role"] != "manager":
        assert time.monotonic() < deadline, "the standby did not take over"
        time.sleep(0.1)
    took_over = time.monotonic() - killed_at
    stop.set()
    for t in threads:
        t.join(timeout=20)
    status, body = _call(f"{second}v1/crawls/{crawl}/stop", body={}, token=TOKEN)
    assert status == 409 and "finished" in body["error"]  # no longer 503: it manages
    print(
        f"\ndrill: survivor answered {answered[second]} searches ({during} in the second "
        f"after the kill), failed {failed[second]}; the killed one answered "
        f"{answered[base]} before; the survivor managed the crawls {took_over:.1f} s "
        "after the kill"
    )
    assert failed[second] == 0
    assert during > 0 and answered[base] > 0
