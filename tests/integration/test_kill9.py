"""kill -9 at random moments loses nothing and duplicates nothing.

The real ``trawl crawl`` command crawls a sample web twice: once without
interruption, once killed with SIGKILL several times at random points of its
progress (after a random number of requests, not seconds: a loaded machine starts
processes slowly) and run again each time. Both must end with the same URLs fetched
and the same texts stored, each text once, every WARC file valid, and the search
index holding exactly the stored pages, none twice. Each host has sitemaps and pages
only they list: every sitemap file ends as in the reference, and every sitemap-only
page is found.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import tantivy

from tests.integration.crawlkit import assert_same_states, assert_same_texts_and_events
from trawl.archive.events import read_events
from trawl.index.layout import index_parts, volume_dirs
from trawl.models import Position
from trawl.stats import read_meta, url_states
from trawl.storage.open import open_blobs, open_reader
from trawl.testing.requestlog import RequestLog
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

TRAWL = str(Path(sys.executable).with_name("trawl"))
WARCIO = str(Path(sys.executable).with_name("warcio"))
KILLS = 6


def _command(
    srv: SampleWebServer,
    web: SampleWeb,
    data: Path,
    hosts: list[str],
    config: Path | None = None,
) -> list[str]:
    cmd = [TRAWL, "crawl", "--data", str(data), "--quiet", "--delay", "0.03"]
    if config is not None:
        cmd += ["--config", str(config)]
    cmd += ["--allow-network", "127.0.0.0/8", "--scope", "allowlist", "--parse-workers", "1"]
    for host in hosts:
        cmd += ["--allow-host", host, "--resolve", f"{host}=127.0.0.1"]
    cmd += [web.url(h, "/", port=srv.port) for h in hosts]
    return cmd


async def _run(
    cmd: list[str], *, kill_when: Callable[[], bool] | None = None, limit: float = 60.0
) -> int:
    """Run ``cmd`` to its end, or SIGKILL it as soon as ``kill_when()`` holds."""
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    if kill_when is None:
        _out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        return 0
    deadline = time.monotonic() + limit
    while proc.returncode is None and not kill_when() and time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=0.02)
    if proc.returncode is not None:
        return proc.returncode
    # The whole process group: the crawler and its parse workers die at once.
    os.killpg(proc.pid, signal.SIGKILL)
    await proc.wait()
    return -9


def _parsed(data: Path) -> int:
    """Pages parsed in what the crawl at ``data`` committed (0 before its first commit)."""
    if not (data / "state.db").exists():
        return 0
    return sum(s == "parsed" for s in _outcomes(data).values())


def _after(log: RequestLog, n: int, data: Path) -> Callable[[], bool]:
    """True once the web has served ``n`` more requests than now and the crawl at
    ``data`` has committed a page parsed since (a loaded machine may start its parse
    worker only after many requests: a kill before then would show no progress)."""
    start = len(log)
    before = _parsed(data)
    return lambda: len(log) - start >= n and _parsed(data) > before


def _texts(data: Path) -> list[dict[str, object]]:
    out = []
    for f in sorted((data / "text").glob("*.jsonl.gz")):
        out += [orjson.loads(line) for line in gzip.decompress(f.read_bytes()).splitlines()]
    return out


def _events(data: Path) -> list[dict[str, object]]:
    committed = read_meta(data, "log.events")
    assert committed is not None
    return list(read_events(open_blobs(data), committed=Position.load(committed)))


def _index_urls(data: Path) -> list[str]:
    """The URL of every document in the crawl's search index, in all its volumes."""
    urls = []
    for part in index_parts(data / "index"):
        searcher = tantivy.Index.open(str(part)).searcher()
        hits = searcher.search(tantivy.Query.all_query(), limit=max(1, searcher.num_docs)).hits
        urls += [str(searcher.doc(addr).get_first("url")) for _score, addr in hits]
    return urls


def _stored_urls(data: Path) -> list[str]:
    reader = open_reader(data)
    try:
        pages = list(reader.pages())
    finally:
        reader.close()
    assert not [p.url for p in pages if not p.indexed]
    return [p.url for p in pages]


def _outcomes(data: Path) -> dict[str, str]:
    """URL -> status, with stored/duplicate folded: which copy comes first may differ."""
    return {url: status for url, (status, _reason) in url_states(data).items()}


async def test_sigkill_several_times_then_resume(tmp_path: Path) -> None:
    web = SampleWeb(hosts=8, pages_per_host=60, seed=3, sitemap_only=2)
    # Host index 1 asks for Crawl-delay 2: leave it out to keep the test short.
    hosts = [h for i, h in enumerate(web.hosts) if i != 1][:7]
    rng = random.Random(9)
    async with SampleWebServer(web, log=True) as srv:
        reference = tmp_path / "reference"
        await _run(_command(srv, web, reference, hosts))
        log = srv.log
        assert log is not None
        # Killed at random moments of its progress (after a random number of requests),
        # not of the wall clock: on a loaded machine a process may start slowly.
        served = len(log)
        killed = tmp_path / "killed"
        # The killed crawl's index in volumes of 40 pages: kills land in volumes' ends
        # and in the deletes of pages written again across them. A host the killed
        # process held waits a fetch's whole timeout before the next run contacts it
        # (its last request may still run at the server): 8 s here, not 60. Its frontier
        # holds 3 of the 7 hosts in its schedule: the others wait on disk (parked) as
        # the kills land.
        small = tmp_path / "volumes.toml"
        small.write_text(
            "[crawl.memory]\nindex_volume = 40\nfrontier_hosts = 3\n[crawl.timeouts]\ntotal = 8.0\n"
        )
        kills = 0
        progress = []
        for _ in range(KILLS):
            when = _after(log, rng.randint(15, served // 8), killed)
            rc = await _run(_command(srv, web, killed, hosts, small), kill_when=when)
            kills += rc == -9
            if (killed / "state.db").exists():
                progress.append(sum(s == "parsed" for s in _outcomes(killed).values()))
        await _run(_command(srv, web, killed, hosts, small))
    total = sum(s == "parsed" for s in _outcomes(reference).values())
    # The crawl really was cut off several times, mid-way, and moved on each time.
    assert kills >= 3
    assert sum(0 < n < total for n in progress) >= 3, (progress, total)
    print("parsed after each kill:", progress, "of", total)

    ref_states, got_states = _outcomes(reference), _outcomes(killed)
    assert_same_states(got_states, ref_states, web)
    hidden = {
        u for u in web.sitemap_only_urls(port=srv.port) if u.split("/")[2].split(":")[0] in hosts
    }
    assert len(hidden) == 2 * len(hosts)
    assert all(got_states[u] == "parsed" for u in hidden)
    assert sum("#sitemap" in u for u in got_states) == 3 * len(hosts)  # index, gz, text
    assert "queued" not in got_states.values()
    assert "in flight" not in got_states.values()

    got_texts, events = _texts(killed), _events(killed)
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert_same_texts_and_events((got_texts, events), (_texts(reference), _events(reference)), web)

    # The search index holds exactly the stored pages, each once, kills or not.
    for data in (reference, killed):
        indexed = _index_urls(data)
        assert len(indexed) == len(set(indexed)), "a page was indexed twice"
        assert sorted(indexed) == sorted(_stored_urls(data))
    assert len(_index_urls(killed)) == len(got_texts)
    assert len(volume_dirs(killed / "index")) >= 3  # batches of 2 s fill a volume past 40
    assert len(volume_dirs(reference / "index")) == 1

    for f in sorted((killed / "warc").glob("*.warc.gz")):
        check = await asyncio.create_subprocess_exec(
            WARCIO, "check", str(f), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        out, _ = await check.communicate()
        assert check.returncode == 0, out.decode()
