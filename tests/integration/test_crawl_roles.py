"""Fetch and parse as separate roles over one store: what one role hands the other goes
through the store (the frontier and the durable parse queue), never through memory.

The same little web is crawled three ways; every way must end with the same URL states,
the same documents and the same text: both roles in one crawl (the default); the two
roles as two crawls running at once over one shared store; and the roles taking turns
over a SQLite data directory, each turn a fresh open of the store, as separate
processes would see it.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from trawl.archive.textstore import decode_record
from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.models import UrlStatus
from trawl.roles import Role
from trawl.storage.base import CrawlReader
from trawl.storage.blobs import LINK_LOG, TEXT_LOG, WARC_LOG, BlobStore
from trawl.storage.local.blobs import LocalBlobStore
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.storage.open import open_reader
from trawl.testing.fakeclient import FakeClient, FakePage

# A page's text: a random draw from these (a near-duplicate would not be kept, nor its
# links followed).
_TEXT = (
    "barges carried grain down the canal to a harbour each autumn morning while gulls "
    "circled above warehouses where clerks counted sacks and wrote ledgers by lamplight "
    "before dawn brought carts horses merchants sailors bakers and travelling musicians"
)
WORDS = _TEXT.split()


def _article(title: str, links: list[str]) -> FakePage:
    rng = random.Random(title)
    body = ". ".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(30))
    anchors = "".join(f'<a href="{u}">{u}</a> ' for u in links)
    return FakePage.html(
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"<p>{body}</p></article><nav>{anchors}</nav></body></html>"
    )


def _web() -> dict[str, FakePage]:
    pages = {
        "https://one.example/robots.txt": FakePage(
            b"User-agent: *\nDisallow: /private\n", 200, (("Content-Type", "text/plain"),)
        ),
        "https://one.example/": _article("Home", ["/p1", "/private/x", "https://two.example/"]),
        "https://two.example/": _article("Two", ["/q1", "https://one.example/p2"]),
        "https://two.example/q1": _article("Q one", ["/q2"]),
        "https://two.example/q2": _article("Q two", ["/"]),
        "https://one.example/moved": FakePage.redirect("/landing"),
        "https://one.example/landing": _article("Landing", ["/"]),
    }
    for i in range(1, 6):
        nxt = [f"/p{i + 1}", "/moved"] if i < 5 else ["/"]
        pages[f"https://one.example/p{i}"] = _article(f"Page {i}", nxt)
    return pages


class _SharedStore(MemoryCrawlStore):
    """One store that two crawls of this process hold: each one's close commits, the
    store stays open for the other (as a shared server would)."""

    def close(self, *, commit: bool = True) -> None:
        if commit:
            self.commit()


def _config(data: Path, **kw: object) -> CrawlConfig:
    return CrawlConfig(
        data_dir=data,
        seeds=("https://one.example/",),
        scope="any",
        delay=0.0,
        parse_workers=0,
        commit_interval=0.05,
        fsync=False,
        min_free_space=0,
        **kw,  # type: ignore[arg-type]
    )


def _outcome(reader: CrawlReader, blobs: BlobStore) -> tuple[object, ...]:
    states = sorted((u, s, r) for u, s, r in reader.url_states())
    texts = sorted(
        (p.url, p.title, decode_record(blobs.read(TEXT_LOG, p.text), p.text)["text"])
        for p in reader.pages()
    )
    return tuple(states), tuple(texts)


def _combined(tmp: Path) -> tuple[object, ...]:
    store, blobs = MemoryCrawlStore(), MemoryBlobStore()

    async def go() -> None:
        crawl = Crawl(_config(tmp / "one"), store=store, blobs=blobs, client=FakeClient(_web()))
        try:
            assert (await crawl.run()).stopped == "done"
        finally:
            crawl.close()

    asyncio.run(go())
    return _outcome(store.reader(), blobs)


def test_fetch_and_parse_roles_at_once_over_one_store(tmp_path: Path) -> None:
    store, blobs = _SharedStore(), MemoryBlobStore()
    client = FakeClient(_web())

    async def go() -> tuple[str, str]:
        # Each writes its own segments of the logs, as a fleet's workers do.
        fetcher = Crawl(
            _config(tmp_path / "f"),
            store=store,
            blobs=blobs,
            client=client,
            roles={Role.FETCH},
            writer="f1",
        )
        parser = Crawl(
            _config(tmp_path / "p"), store=store, blobs=blobs, roles={Role.PARSE}, writer="p1"
        )
        # Each role writes only its own logs: WARC for the fetcher, text and events
        # for the parser.
        assert fetcher.logs.names == {WARC_LOG.name}
        assert parser.logs.names == {TEXT_LOG.name, "events", LINK_LOG.name}
        assert parser.fetching is None and fetcher.parsing is None
        try:
            done = await asyncio.wait_for(asyncio.gather(fetcher.run(), parser.run()), 60)
        finally:
            fetcher.close()
            parser.close()
        return done[0].stopped, done[1].stopped

    assert asyncio.run(go()) == ("done", "done")
    assert _outcome(store.reader(), blobs) == _combined(tmp_path)
    assert set(store.committed_logs()) == {"warc@f1", "text@p1", "events@p1", "links@p1"}
    assert {p.warc.file for p in store.reader().pages()} == {"trawl-f1-00001.warc.gz"}
    states = {u: s for u, s, _r in store.reader().url_states()}
    assert states["https://one.example/private/x"] is UrlStatus.SKIPPED
    assert states["https://two.example/q2"] is UrlStatus.PARSED
    assert len(store.parse_queue) == 0
    fetched = [u for _t, u in client.requests]
    assert len(fetched) == len(set(fetched)), "a page fetched twice"


def test_roles_taking_turns_over_a_data_directory(tmp_path: Path) -> None:
    """Each turn opens the SQLite store afresh (a process of its own would): the fetch
    role stores what is ready and stops; the parse role finds those pages in the
    durable queue, parses them, and its links are the next fetch turn's work."""
    data = tmp_path / "crawl"
    client = FakeClient(_web())
    turns: list[tuple[str, str, int]] = []

    async def turn(role: Role) -> None:
        crawl = Crawl(_config(data), client=client, roles={role})

        def idle() -> bool:
            if role is Role.PARSE:
                return not len(crawl.parse_queue) and not crawl._backlog()
            return crawl.frontier.next_wake(crawl.clock.now()) is None and not crawl._in_flight()

        async def stop_when_idle() -> None:
            # The store is the only place to look: no event tells of its changes.
            while not idle():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            crawl.request_stop()

        watcher = asyncio.create_task(stop_when_idle())
        try:
            stopped = (await asyncio.wait_for(crawl.run(), 30)).stopped
        finally:
            watcher.cancel()
            crawl.close()
        turns.append((role.value, stopped, len(client.requests)))

    async def go() -> None:
        while len(turns) < 40:
            await turn(Role.FETCH)
            await turn(Role.PARSE)
            reader = open_reader(data)
            try:
                if reader.stats().urls[UrlStatus.QUEUED] == 0:
                    return
            finally:
                reader.close()

    asyncio.run(go())
    # Links found by one parse turn were fetched by the next fetch turn, several times
    # over; a parse turn never fetched anything.
    assert len(turns) >= 6, turns
    assert all(turns[i][2] == turns[i - 1][2] for i in range(1, len(turns), 2))
    assert turns[0][2] < turns[2][2] < turns[4][2]
    reader = open_reader(data)
    try:
        assert _outcome(reader, LocalBlobStore(data)) == _combined(tmp_path)
        assert reader.stats().parse_backlog == 0
    finally:
        reader.close()


def test_a_crawl_needs_a_role(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="role"):
        Crawl(_config(tmp_path), store=MemoryCrawlStore(), blobs=MemoryBlobStore(), roles=())
