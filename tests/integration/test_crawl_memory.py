"""A whole crawl with nothing on disk but its index: memory store, memory blobs, a fake
client. What the storage seam promises: the crawl does not know where it keeps things."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from trawl.archive.textstore import decode_record
from trawl.archive.warc import read_response
from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.fetch.http import FetchResponse
from trawl.models import Location, UrlStatus
from trawl.storage.blobs import TEXT_LOG, WARC_LOG
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.testing import FakeClock
from trawl.testing.fakeclient import FakeClient, FakePage

WORDS = "The river bends slowly past the old mill where the miller kept his records. "


def _article(title: str, links: list[str], n: int) -> FakePage:
    body = " ".join(f"{WORDS}{title} paragraph {i}." for i in range(n))
    anchors = "".join(f'<a href="{u}">{u}</a> ' for u in links)
    return FakePage.html(
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"<p>{body}</p></article><nav>{anchors}</nav></body></html>"
    )


def _trimming() -> bool:
    return any(t.name == "trawl-trim" for t in threading.enumerate())


PAGES = {
    "https://site.example/robots.txt": FakePage(
        b"User-agent: *\nDisallow: /private\n", 200, (("Content-Type", "text/plain"),)
    ),
    "https://site.example/": _article("Home", ["/a", "/b", "/private/x", "/old"], 8),
    "https://site.example/a": _article("Alpha", ["/b", "/"], 9),
    "https://site.example/b": _article("Beta", ["/a"], 10),
    "https://site.example/old": FakePage.redirect("/a"),
}


def test_a_whole_crawl_on_memory_stores_and_a_fake_client(tmp_path: Path) -> None:
    store, blobs = MemoryCrawlStore(), MemoryBlobStore()
    client = FakeClient(PAGES)
    config = CrawlConfig(
        data_dir=tmp_path,
        seeds=("https://site.example/",),
        delay=0.0,
        parse_workers=0,
        commit_interval=0.05,
        fsync=False,
        min_free_space=0,
    )

    async def go() -> None:
        crawl = Crawl(config, store=store, blobs=blobs, client=client)
        try:
            summary = await crawl.run()
            # The heap is trimmed until the files are closed: the shutdown's last index
            # batches and merges come after the group commits have stopped.
            assert _trimming()
        finally:
            crawl.close()
        assert not _trimming()
        assert summary.stopped == "done"

    asyncio.run(go())
    assert client.closed
    fetched = [u for _t, u in client.requests]
    assert fetched.count("https://site.example/robots.txt") == 1
    assert "https://site.example/private/x" not in fetched
    reader = store.reader()
    states = {u: (s, r) for u, s, r in reader.url_states()}
    assert states["https://site.example/private/x"] == (UrlStatus.SKIPPED, "robots")
    assert states["https://site.example/old"][0] is UrlStatus.REDIRECTED
    for path in ("/", "/a", "/b"):
        assert states["https://site.example" + path] == (UrlStatus.PARSED, "stored")
    pages = list(reader.pages())
    assert sorted(p.title for p in pages) == ["Alpha", "Beta", "Home"]
    for p in pages:
        record = decode_record(blobs.read(TEXT_LOG, p.text), p.text)
        assert p.title in record["text"]
        response = read_response(blobs.read(WARC_LOG, p.warc))
        assert response.url == p.url and response.status == 200
    # Nothing but the index went to the data directory.
    assert sorted(x.name for x in tmp_path.iterdir()) == ["index"]
    # The committed log ends are where the records end.
    logs = reader.committed_logs()
    assert logs[TEXT_LOG.name].offset == len(
        blobs.read_range(TEXT_LOG, TEXT_LOG.segment(1), 0, None)
    )
    assert isinstance(pages[0].warc, Location)


def test_max_duration_is_measured_on_the_injected_clock(tmp_path: Path) -> None:
    """Each response takes 30 s of fake time: a 100 s crawl stops after a few pages,
    at once in real time, whatever the wall clock did."""
    clock = FakeClock()

    def page(i: int) -> FakePage:  # distinct text: a near-duplicate's links are not followed
        words = random.Random(i).choices(WORDS.split(), k=300)
        return FakePage.html(f"<title>{i}</title><p>{' '.join(words)}</p><a href='/{i + 1}'>n</a>")

    pages = {f"https://slow.example/{i}": page(i) for i in range(50)}

    class SlowClient(FakeClient):
        async def get(self, url: str, **kw: Any) -> FetchResponse:
            clock.advance(30.0)
            return await super().get(url, **kw)

    client = SlowClient(pages, clock=clock)
    config = CrawlConfig(
        data_dir=tmp_path,
        seeds=("https://slow.example/0",),
        delay=0.0,
        parse_workers=0,
        commit_interval=0.05,
        fsync=False,
        min_free_space=0,
        max_duration=100.0,
    )

    async def go() -> str:
        crawl = Crawl(
            config, store=MemoryCrawlStore(), blobs=MemoryBlobStore(), client=client, clock=clock
        )
        try:
            return (await asyncio.wait_for(crawl.run(), 20)).stopped
        finally:
            crawl.close()

    assert asyncio.run(go()) == "max duration"
    # robots.txt and pages at 30 s each: the loop saw 100 s pass after the 4th request.
    assert 3 <= len(client.requests) <= 6


_NO_HEAVY_MODULES = """
import asyncio, sys
from pathlib import Path
from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.dedup.minhash import MinHasher
from trawl.dedup.near import best
from trawl.testing.fakeclient import FakeClient, FakePage

def page(i):
    # Words of their own, but the last page a near copy of the one before it: the
    # crawl process checks a near-duplicate candidate.
    words = " ".join(f"w{min(i, 4)}x{k}" if k != 7 else f"odd{i}" for k in range(400))
    nav = f'<a href="/p{i + 1}">next</a>' if i < 5 else ""
    return FakePage.html(f"<html><title>P{i}</title><body><p>{words}</p>{nav}</body></html>")

web = {"https://one.example/" + (f"p{i}" if i else ""): page(i) for i in range(6)}
web["https://one.example/robots.txt"] = FakePage(b"", 404)
config = CrawlConfig(
    data_dir=Path(sys.argv[1]), seeds=("https://one.example/",), scope="any", delay=0.0,
    parse_workers=1, commit_interval=0.05, fsync=False, min_free_space=0,
)

async def go():
    crawl = Crawl(config, client=FakeClient(web))
    try:
        return await crawl.run()
    finally:
        crawl.close()

summary = asyncio.run(go())
assert summary.stopped == "done" and summary.snapshot.documents == 5, summary
assert summary.counters["parse:near"] == 1, summary
m = MinHasher()
s = m.signature("one two three four five six seven")
assert best(m, s, [(1, s)]) == (1.0, 1)
m.coefficients()
loaded = {"numpy", "selectolax", "pycld2"} & set(sys.modules)
assert not loaded, loaded
"""


def test_the_crawl_process_loads_no_numpy_nor_the_parsers(tmp_path: Path) -> None:
    # numpy is some 20 MB of RSS: the crawl process's MinHash coefficients, candidate
    # checks and index term filters do without it. Lexbor and CLD2 (some 6 MB) are
    # its parse workers' (and a rendering crawl's). A whole crawl (indexed, checked for
    # near duplicates, parsed by a worker) in a fresh interpreter, then its modules.
    done = subprocess.run(
        [sys.executable, "-c", _NO_HEAVY_MODULES, str(tmp_path / "data")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
