"""No request waits on another's search: a slow typo correction holds up nothing.

The searcher runs over a real index with a corrector that blocks until the test lets
it go (a stand-in for a correction over a huge, odd vocabulary). While it is held, a
plain query on the same server must answer; nothing here is a timing assertion, only
which request finished first. And an answer whose correction ran out of its budget
says so in the JSON and on the page.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from tests.api.conftest import serving
from tests.api.test_search_real_index import PAGES, _doc
from tests.unit.test_index_corpus import add_docs
from trawl.api.app import create_app
from trawl.api.search import SearchRoutes
from trawl.index import Searcher
from trawl.index.correct import Corrector
from trawl.testing import FakeClock

HOLD = 20.0  # seconds the held correction waits at most (then the test has failed)


class HeldCorrector(Corrector):
    def __init__(self, index_dir: Path) -> None:
        super().__init__(index_dir)
        self.started = threading.Event()
        self.release = threading.Event()

    def candidates(self, *args: Any, **kwargs: Any) -> list[str]:
        self.started.set()
        self.release.wait(HOLD)
        return super().candidates(*args, **kwargs)


def _index(data: Path) -> None:
    add_docs(data / "index", [_doc(n, title, text) for n, (title, text) in enumerate(PAGES)])


async def test_a_plain_query_answers_while_a_correction_is_held(tmp_path: Path) -> None:
    _index(tmp_path)
    held = HeldCorrector(tmp_path / "index")

    def searcher(index_dir: Path) -> Searcher:
        return Searcher(index_dir, corrector=held, correction_budget=HOLD * 2)

    routes = SearchRoutes(tmp_path, searcher_factory=searcher)
    async with serving(create_app(tmp_path, route_sets=[routes])) as client:
        slow = asyncio.ensure_future(client.get("/api/v1/search", params={"query": "lighthuose"}))
        assert await asyncio.to_thread(held.started.wait, HOLD)
        try:
            plain = await client.get("/api/v1/search", params={"query": "espaliered pear"})
            assert plain.status == 200
            assert [h["link"] for h in (await plain.json())["results"]] == [
                "http://site0.test/page/0"
            ]
            # The held one is still correcting: the plain one did not wait for it.
            assert not slow.done()
        finally:
            held.release.set()
        body = await (await slow).json()
        assert body["corrected"] == "lighthouse" and body["correction_skipped"] is False


class _TickingCorrector(Corrector):
    """Each lookup takes a second of the fake clock."""

    def __init__(self, index_dir: Path, clock: FakeClock) -> None:
        super().__init__(index_dir)
        self.clock = clock

    def candidates(self, *args: Any, **kwargs: Any) -> list[str]:
        self.clock.advance(1.0)
        return super().candidates(*args, **kwargs)


async def test_a_correction_out_of_budget_is_said_in_json_and_on_the_page(
    tmp_path: Path,
) -> None:
    _index(tmp_path)
    clock = FakeClock()

    def searcher(index_dir: Path) -> Searcher:
        return Searcher(
            index_dir,
            clock=clock.now,
            reload_interval=1e9,
            corrector=_TickingCorrector(index_dir, clock),
            correction_budget=0.5,
        )

    routes = SearchRoutes(tmp_path, searcher_factory=searcher)
    async with serving(create_app(tmp_path, route_sets=[routes])) as client:
        query = {"query": "lighthuose tomatoez"}
        body = await (await client.get("/api/v1/search", params=query)).json()
        assert body["correction_skipped"] is True
        assert body["corrected"] == "lighthouse tomatoez"
        page = await (await client.get("/", params=query)).text()
        assert "Spelling correction ran out of time" in page
        plain = await (await client.get("/api/v1/search", params={"query": "garden"})).json()
        assert plain["correction_skipped"] is False
