"""An index in volumes (``layout.py``, ``volumes.py``): a full volume is closed and the
next begun; a page written again replaces its copy in whichever volume holds it; a
searcher reads every volume as one index, including volumes begun while it runs."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
import tantivy

from tests.unit.test_index_corpus import add_docs, write_pages
from tests.unit.test_index_gather import PAGES, dirs, ranks_as_whole  # noqa: F401
from trawl.config_load import parse_memory
from trawl.errors import ConfigError
from trawl.index import Searcher
from trawl.index.layout import index_parts, volume_dir, volume_dirs
from trawl.index.schema import open_index
from trawl.index.sharded import fresh_indexer
from trawl.index.writer import CommittedTexts, IndexDoc, Indexer
from trawl.models import Location
from trawl.storage.open import open_blobs, open_store


def _index_in_volumes(data: Path, volume_docs: int, batch: int) -> None:
    store = open_store(data)
    indexer = Indexer(data / "index", volume_docs=volume_docs)
    texts = CommittedTexts(open_blobs(data))
    try:
        while indexer.index_pending(store.pages, texts, limit=batch):
            store.commit()
    finally:
        indexer.close()
        store.close()


def _live(index_dir: Path) -> dict[str, list[str]]:
    """url -> the content hashes of its live documents, over every volume."""
    held: dict[str, list[str]] = {}
    for part in index_parts(index_dir):
        index = open_index(part)
        index.reload()
        searcher = index.searcher()
        hits = searcher.search(tantivy.Query.all_query(), limit=10_000).hits
        for _score, address in hits:
            doc = searcher.doc(address)
            held.setdefault(doc["url"][0], []).append(doc["key"][0])
    return held


def _doc(url: str, key: str, text: str) -> IndexDoc:
    return IndexDoc(
        key=key,
        url=url,
        host="example.org",
        title=f"title {key}",
        text=text,
        language="en",
        fetched_at=1.7e9,
        cluster=key,
        where=Location("", 0, 0),
    )


def test_volume_dirs_are_the_directory_then_its_numbered_volumes(tmp_path: Path) -> None:
    index = tmp_path / "index"
    assert volume_dirs(index) == [index]  # not there yet: one (empty) volume
    index.mkdir()
    for name in ("vol-0002", "vol-0010", "vol-0001", "vol-0000", "vol-x", "lexicon"):
        (index / name).mkdir()
    (index / "vol-0003").write_text("a file, not a volume")
    assert volume_dirs(index) == [index, *(volume_dir(index, n) for n in (1, 2, 10))]


def test_an_index_in_volumes_ranks_as_the_whole(
    dirs: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    write_pages(tmp_path, PAGES)
    _index_in_volumes(tmp_path, volume_docs=40, batch=15)
    parts = index_parts(tmp_path / "index")
    assert len(parts) == 4  # 160 pages: 45 + 45 + 45 + 25
    volumes = Searcher(tmp_path / "index", cache_size=0, exact_budget=10_000)
    assert volumes.num_docs == len(PAGES)
    ranks_as_whole(dirs["union"], volumes, seed=5, pages=(3, 150))
    # A rebuild by ``trawl index`` starts again from one volume.
    indexer = fresh_indexer(tmp_path / "index", None)
    try:
        indexer.clear()
    finally:
        indexer.close()
    assert index_parts(tmp_path / "index") == [tmp_path / "index"]
    assert Searcher(tmp_path / "index").num_docs == 0


def write_again_and_again(
    index_dir: Path,
    rng: random.Random,
    *,
    steps: int = 30,
    reopen: float = 0.15,
    closed: Callable[[Path, random.Random], None] = lambda _dir, _rng: None,
) -> dict[str, list[str]]:
    """Random batches of pages, some written again (new text, new content hash; or the
    same content hash again, as after a crash), the writer reopened now and then
    (``closed`` runs while it is closed): what each URL's live documents should be."""
    want: dict[str, str] = {}
    indexer = Indexer(index_dir, volume_docs=rng.choice((3, 5, 8)))
    try:
        for step in range(steps):
            batch: dict[str, IndexDoc] = {}
            for _ in range(rng.randint(1, 6)):
                url = f"https://example.org/{rng.randrange(30)}"
                key = want[url] if url in want and rng.random() < 0.3 else f"{step}-{url[-2:]}"
                batch[url] = _doc(url, key, f"words of {url} at {step}")
            indexer.write(batch.values())
            want.update((u, d.key) for u, d in batch.items())
            if rng.random() < reopen:
                indexer.close()
                closed(index_dir, rng)
                indexer = Indexer(index_dir, volume_docs=rng.choice((3, 5, 8)))
    finally:
        indexer.close()
    return {url: [key] for url, key in want.items()}


@pytest.mark.parametrize("seed", range(2))
def test_a_page_written_again_replaces_its_copy_in_any_volume(tmp_path: Path, seed: int) -> None:
    """Each URL is one live document, its last version, wherever it is."""
    index_dir = tmp_path / "index"
    want = write_again_and_again(index_dir, random.Random(seed))
    assert len(volume_dirs(index_dir)) > 1
    assert _live(index_dir) == want


def test_a_searcher_finds_a_volume_begun_while_it_runs(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    first = add_docs(index_dir, [_doc("https://a.example/", "a", "blue tea kettle")])
    assert first
    searcher = Searcher(index_dir, reload_interval=0.0)
    assert searcher.search("kettle").total == 1
    indexer = Indexer(index_dir, volume_docs=1)  # the first volume is full already
    try:
        indexer.write([_doc("https://b.example/", "b", "green tea kettle")])
        indexer.write([_doc("https://a.example/", "a2", "red tea kettle")])
    finally:
        indexer.close()
    assert len(volume_dirs(index_dir)) == 3
    results = searcher.search("kettle")
    assert results.total == 2
    assert searcher.search("blue").total == 0  # replaced in the first volume


def test_a_split_index_has_volumes_in_each_shard(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    indexer = fresh_indexer(index_dir, 2)
    indexer.close()
    from trawl.index.sharded import open_indexer

    writer = open_indexer(index_dir, volume_docs=4)  # 2 a shard
    try:
        for n in range(12):
            writer.write([_doc(f"https://example.org/{n}", f"k{n}", f"page number {n}")])
    finally:
        writer.close()
    parts = index_parts(index_dir)
    assert len(parts) > 2
    assert {p.parent if p.name.startswith("vol-") else p for p in parts} == {
        index_dir / "shard-00",
        index_dir / "shard-01",
    }
    assert Searcher(index_dir).num_docs == 12


def test_the_volume_size_is_a_memory_limit() -> None:
    assert parse_memory({"index_volume": 1000}).index_volume == 1000
    assert parse_memory({"index_volume": 0}).index_volume == 0
    assert parse_memory({"parse_tags": 5}).parse_tags == 5
    for name in ("index_volume", "parse_tags"):
        with pytest.raises(ConfigError):
            parse_memory({name: -1})
