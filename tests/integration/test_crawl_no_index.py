"""A crawl without the search index (``index = false``, ``--no-index``): every page is
stored as with it, none is indexed, and the pages wait in the store until a crawl with
the index (or ``trawl index``) makes the index of them: the same hits as a crawl that
kept it up all along."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.integration.test_crawl_roles import _config
from trawl.cli import build_parser, main
from trawl.cli._crawl import _overrides
from trawl.cli._fleet import ROLES, check_roles
from trawl.config import CrawlConfig
from trawl.config_load import load_config
from trawl.crawl import Crawl
from trawl.errors import ConfigError
from trawl.index.search import Searcher
from trawl.storage.open import open_store
from trawl.testing.fakeclient import FakeClient, FakePage

_WORDS = (
    "lanterns", "harbour", "ferrymen", "almanac", "quarry", "orchards", "tidewater",
    "bellfounder", "saltmarsh", "millrace", "weavers", "cobblestones",
)  # fmt: skip


def _page(i: int, links: list[str]) -> FakePage:
    # Each page its own words (no near-duplicates): a word of its own and the rest.
    words = [f"topic{i}", *(_WORDS[(i + k) % len(_WORDS)] for k in range(len(_WORDS)))]
    body = ". ".join(" ".join(words[(j % 5) :] + words[: (j % 5)]) for j in range(40))
    anchors = "".join(f'<a href="{u}">{u}</a> ' for u in links)
    return FakePage.html(
        f"<html><head><title>Page {i}</title></head><body><article><h1>Page {i}</h1>"
        f"<p>{body}</p></article><nav>{anchors}</nav></body></html>"
    )


def _web() -> dict[str, FakePage]:
    pages = {
        "https://one.example/robots.txt": FakePage(
            b"User-agent: *\nAllow: /\n", 200, (("Content-Type", "text/plain"),)
        )
    }
    for i in range(8):
        links = [f"/p{i + 1}"] if i < 7 else ["/"]
        pages["https://one.example/" + (f"p{i}" if i else "")] = _page(i, links)
    return pages


def _crawl(config: CrawlConfig, client: FakeClient) -> int:
    async def go() -> int:
        crawl = Crawl(config, client=client)
        try:
            summary = await crawl.run()
        finally:
            crawl.close()
        assert summary.stopped == "done"
        return summary.snapshot.documents

    return asyncio.run(go())


def _unindexed(data: Path) -> set[str]:
    store = open_store(data)
    try:
        return {p.url for p in store.pages.unindexed(1000)}
    finally:
        store.close()


def _hits(index: Path, query: str) -> list[str]:
    with Searcher(index) as s:
        return [h.link for h in s.search(query, size=50).results]


def test_a_crawl_without_the_index_leaves_its_pages_to_the_next_with_it(
    tmp_path: Path,
) -> None:
    data, reference = tmp_path / "later", tmp_path / "always"
    assert _crawl(_config(reference, index=True), FakeClient(_web())) == 8
    assert _crawl(_config(data, index=False), FakeClient(_web())) == 8
    assert not (data / "index").exists()
    assert len(_unindexed(data)) == 8
    assert _unindexed(reference) == set()

    # The same data directory crawled again with the index: nothing new to fetch, and
    # the pages stored before are indexed.
    again = FakeClient(_web())
    assert _crawl(_config(data, index=True), again) == 8
    assert _unindexed(data) == set()
    for query in ("topic3", "lanterns harbour", '"ferrymen almanac"'):
        expected = sorted(_hits(reference / "index", query))
        assert expected and sorted(_hits(data / "index", query)) == expected
    assert _hits(data / "index", "topic3") == ["https://one.example/p3"]


def test_trawl_index_builds_the_index_a_crawl_left_out(tmp_path: Path) -> None:
    data = tmp_path / "crawl"
    _crawl(_config(data, index=False), FakeClient(_web()))
    assert main(["index", "--data", str(data), "--quiet"]) == 0
    assert _unindexed(data) == set()
    assert _hits(data / "index", "topic5") == ["https://one.example/p5"]


@pytest.mark.parametrize(
    ("argv", "expected"), [([], True), (["--no-index"], False), (["--index"], True)]
)
def test_the_index_flag(tmp_path: Path, argv: list[str], expected: bool) -> None:
    args = build_parser().parse_args(["crawl", "--data", str(tmp_path), *argv])
    assert load_config(env={}, overrides=_overrides(args, tmp_path)).index is expected
    env = {"TRAWL_INDEX": "false"}
    from_env = load_config(env=env, overrides=_overrides(args, tmp_path)).index
    assert from_env is (expected if argv else False)


def test_an_index_worker_of_a_crawl_without_the_index_is_refused(tmp_path: Path) -> None:
    without, with_index = _config(tmp_path, index=False), _config(tmp_path, index=True)
    with pytest.raises(ConfigError, match="no search index"):
        check_roles(without, ROLES["index"])
    for role in ("all", "fetch", "parse"):
        check_roles(without, ROLES[role])
    check_roles(with_index, ROLES["index"])
