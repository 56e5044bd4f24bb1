"""The filter of the terms a volume holds (``index/terms.py``): never a false "no", few
false "maybe"s; a closed volume it rules out is not queried; volumes without the file
(an older trawl's) and a write cut by a crash still leave one live copy of each page."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import pytest

from tests.unit.test_index_volumes import _doc, _live, write_again_and_again
from tests.unit.test_minhash import needs_native
from trawl.index.layout import volume_dirs
from trawl.index.terms import (
    TERMS_FILE,
    OpenTerms,
    TermFilter,
    append_terms,
    bloom_add,
    bloom_test,
    hash_count,
    repair_terms,
    term_hashes,
)
from trawl.index.volumes import ClosedVolume
from trawl.index.writer import Indexer


def test_the_filter_never_misses_a_term_and_rarely_claims_one() -> None:
    held = [f"https://example.org/page/{i}" for i in range(64_000)]
    keys = [f"{i:064x}" for i in range(64_000)]
    f = TermFilter(term_hashes(held, keys))
    assert all(f.may_hold(term_hashes(held, keys)))
    others = term_hashes([f"https://example.org/other/{i}" for i in range(100_000)], [])
    rate = sum(f.may_hold(others)) / hash_count(others)
    assert rate < 0.001, rate  # 24 bits a term: some 1 in 100,000
    assert f.nbytes == 64_000 * 2 * 24 // 8
    # A URL and a content hash spelled alike are different terms.
    assert term_hashes(["x"], []) != term_hashes([], ["x"])
    assert hash_count(term_hashes(held[:3], keys[:2])) == 5


@needs_native
def test_the_native_filter_sets_and_tests_the_bits_the_python_does() -> None:
    rng = random.Random(7)
    for size in (8, 24, 4096, 3 * 8 * 1001):
        hashes = b"".join(rng.getrandbits(64).to_bytes(8, "little") for _ in range(300))
        native, python = bytearray(size), bytearray(size)
        bloom_add(native, hashes[: 8 * 200])
        bloom_add(python, hashes[: 8 * 200], native=False)
        assert native == python
        assert bloom_test(native, hashes) == bloom_test(python, hashes, native=False)
        assert all(bloom_test(native, hashes[: 8 * 200]))
    # The bits of one hash, worked by hand: low 5, step 3 in 64 bits, 16 probes.
    bits = bytearray(8)
    bloom_add(bits, (5 | (1 << 33)).to_bytes(8, "little"), native=False)
    expected = {(5 + p * 3) % 64 for p in range(16)}
    assert {k for k in range(64) if bits[k >> 3] >> (k & 7) & 1} == expected


def test_a_volume_filter_is_built_in_little_memory() -> None:
    # A closed volume's filter is built from all its terms at once (128,000 at
    # 64,000 pages): the probes of all of them at once were ~7 arrays of 16 MB, a
    # spike the crawl process's peak RSS showed at each volume's close.
    hashes = term_hashes([f"https://example.org/page/{i}" for i in range(64_000)], [])
    tracemalloc.start()
    try:
        f = TermFilter(hashes)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < f.nbytes + 100_000, peak  # the filter and no temporaries
    assert all(f.may_hold(hashes))
    assert f.nbytes == 64_000 * 24 // 8


def test_a_write_cut_by_a_crash_is_repaired_before_the_next(tmp_path: Path) -> None:
    first, second = term_hashes(["a", "b"], ["k"]), term_hashes(["c"], [])
    append_terms(tmp_path, first)
    with (tmp_path / TERMS_FILE).open("ab") as f:
        f.write(b"\x01\x02\x03")  # the start of a batch's write, then the crash
    loaded = TermFilter.load(tmp_path)
    assert loaded is not None and all(loaded.may_hold(first))
    repair_terms(tmp_path)
    append_terms(tmp_path, second)
    again = TermFilter.load(tmp_path)
    assert again is not None and all(again.may_hold(first + second))
    assert (tmp_path / TERMS_FILE).stat().st_size == 4 * 8
    assert TermFilter.load(tmp_path / "none") is None


def _closed_volume(index_dir: Path, urls: list[str]) -> ClosedVolume:
    indexer = Indexer(index_dir, volume_docs=len(urls))
    try:
        indexer.write(_doc(u, f"key-{u}", f"text of {u}") for u in urls)
    finally:
        indexer.close()
    return ClosedVolume(volume_dirs(index_dir)[0])


class _NoSearch:
    def searcher(self) -> None:
        raise AssertionError("a volume its filter ruled out was queried")


def test_a_closed_volume_is_queried_only_for_terms_it_may_hold(tmp_path: Path) -> None:
    urls = [f"https://example.org/{i}" for i in range(50)]
    volume = _closed_volume(tmp_path / "index", urls)
    assert volume.filter is not None
    assert volume.holds_any([urls[3]], ["no such key"])
    assert volume.holds_any(["https://example.org/new"], ["key-https://example.org/7"])
    assert not volume.holds_any(["https://example.org/new"], ["no such key"])
    # New pages the filter rules out (all but some 1 in 100,000) cost no query.
    new = [f"https://example.org/new/{i}" for i in range(300)]
    new = [
        u for u, m in zip(new, volume.filter.may_hold(term_hashes(new, [])), strict=True) if not m
    ]
    assert len(new) >= 299
    volume._index = _NoSearch()  # type: ignore[assignment]
    assert not volume.holds_any(new, [])


def test_a_volume_without_its_terms_file_is_queried_as_before(tmp_path: Path) -> None:
    urls = [f"https://example.org/{i}" for i in range(20)]
    index_dir = tmp_path / "index"
    volume = _closed_volume(index_dir, urls)
    (volume.directory / TERMS_FILE).unlink()
    assert ClosedVolume(volume.directory).filter is None
    assert ClosedVolume(volume.directory).holds_any([urls[5]], [])


def _spoil(index_dir: Path, rng: random.Random) -> None:
    """Some volumes lose their terms file (an older trawl wrote them), or the open
    volume's last write to it was cut short (a crash in it)."""
    volumes = volume_dirs(index_dir)
    if rng.random() < 0.5:
        for v in rng.sample(volumes, rng.randint(1, len(volumes))):
            (v / TERMS_FILE).unlink(missing_ok=True)
    elif (volumes[-1] / TERMS_FILE).exists():
        with (volumes[-1] / TERMS_FILE).open("ab") as f:
            f.write(bytes(rng.randint(1, 7)))


@pytest.mark.parametrize("seed", range(3))
def test_older_volumes_and_cut_writes_leave_one_copy_a_page(tmp_path: Path, seed: int) -> None:
    """As test_index_volumes' replacement test, with the writer reopened now and then
    after its volumes' terms files were spoiled (``_spoil``)."""
    index_dir = tmp_path / "index"
    want = write_again_and_again(
        index_dir, random.Random(seed), steps=40, reopen=0.25, closed=_spoil
    )
    assert len(volume_dirs(index_dir)) > 2
    assert _live(index_dir) == want


def test_a_rebuild_gives_an_older_volume_its_terms_file(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    _closed_volume(index_dir, [f"https://example.org/{i}" for i in range(5)])
    (index_dir / TERMS_FILE).unlink()  # as an older trawl left it, with documents
    indexer = Indexer(index_dir)
    try:
        indexer.write([_doc("https://example.org/a", "ka", "more text")])
        assert not (index_dir / TERMS_FILE).exists()  # its earlier terms are not known
        indexer.clear()  # trawl index: the volume is emptied, then written anew
        indexer.write([_doc("https://example.org/b", "kb", "new text")])
    finally:
        indexer.close()
    again = TermFilter.load(index_dir)
    assert again is not None and all(again.may_hold(term_hashes(["https://example.org/b"], [])))


def test_the_open_volume_filter_grows_and_never_misses_a_term(tmp_path: Path) -> None:
    terms = OpenTerms(tmp_path)  # no file yet: an empty volume
    assert not terms.may_hold("https://example.org/0", "k0")
    small = terms.nbytes
    urls = [f"https://example.org/{i}" for i in range(40_000)]
    for start in range(0, len(urls), 1_000):  # batches, each appended then added
        batch = urls[start : start + 1_000]
        hashes = term_hashes(batch, [f"k-{u}" for u in batch])
        append_terms(tmp_path, hashes)
        terms.add(hashes)
    assert terms.nbytes > small  # made again, larger, from the file
    assert all(terms.may_hold(u, "no such key") for u in urls[::97])
    assert all(terms.may_hold("https://example.org/new", f"k-{u}") for u in urls[::89])
    others = [f"https://example.org/other/{i}" for i in range(5_000)]
    assert sum(terms.may_hold(u, u) for u in others) < 10
    # Reopened (a writer opened again), from the file alone.
    again = OpenTerms(tmp_path)
    assert all(again.may_hold(u, "no such key") for u in urls[::97])


class _CountingWriter:
    """A tantivy writer that counts the deletes asked of it."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.deletes = 0

        self.fail_add_at: int | None = None  # the add that raises (0 first), once
        self.adds = 0

    def delete_documents_by_term(self, field: str, value: str) -> int:
        self.deletes += 1
        return int(self.inner.delete_documents_by_term(field, value))  # type: ignore[attr-defined]

    def add_document(self, doc: object) -> int:
        if self.adds == self.fail_add_at:
            self.fail_add_at = None
            raise ValueError("an add that fails")
        self.adds += 1
        return int(self.inner.add_document(doc))  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _counting(indexer: Indexer) -> _CountingWriter:
    spy = _CountingWriter(indexer._writer)
    indexer._writer = spy  # type: ignore[assignment]
    return spy


def test_a_new_page_costs_no_delete_and_a_page_again_replaces_its_copy(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    indexer = Indexer(index_dir)
    try:
        spy = _counting(indexer)
        indexer.write(_doc(f"https://example.org/{i}", f"k{i}", f"text {i}") for i in range(20))
        assert spy.deletes == 0  # new pages: nothing to replace
        indexer.write([_doc("https://example.org/3", "k3-new", "new text")])
        assert spy.deletes == 2  # by URL and by content hash
        # Within one batch: the same URL twice, and two URLs of one content hash.
        indexer.write(
            [
                _doc("https://example.org/a", "ka1", "first"),
                _doc("https://example.org/a", "ka2", "second"),
                _doc("https://example.org/b", "same", "b"),
                _doc("https://example.org/c", "same", "c"),
            ]
        )
    finally:
        indexer.close()
    indexer = Indexer(index_dir)  # reopened: what the volume holds, from its terms file
    try:
        spy = _counting(indexer)
        indexer.write([_doc("https://example.org/5", "k5-new", "again")])
        assert spy.deletes == 2
    finally:
        indexer.close()
    live = _live(index_dir)
    assert live["https://example.org/3"] == ["k3-new"]
    assert live["https://example.org/5"] == ["k5-new"]
    assert live["https://example.org/a"] == ["ka2"]
    assert "https://example.org/b" not in live and live["https://example.org/c"] == ["same"]
    assert len(live) == 20 + 2


def test_a_volume_without_its_terms_file_deletes_before_every_add(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    indexer = Indexer(index_dir)
    try:
        indexer.write(_doc(f"https://example.org/{i}", f"k{i}", f"text {i}") for i in range(5))
    finally:
        indexer.close()
    (index_dir / TERMS_FILE).unlink()  # an older trawl's volume: what it holds is not known
    indexer = Indexer(index_dir)
    try:
        spy = _counting(indexer)
        indexer.write(
            [_doc("https://example.org/2", "k2-new", "new"), _doc("https://x/", "x", "x")]
        )
        assert spy.deletes == 4
    finally:
        indexer.close()
    assert _live(index_dir)["https://example.org/2"] == ["k2-new"]


def test_a_batch_that_failed_leaves_no_second_copy(tmp_path: Path) -> None:
    """A batch fails after some adds: they stay in the writer, uncommitted, and a later
    commit makes them live; a later copy of those pages still replaces them."""
    index_dir = tmp_path / "index"
    indexer = Indexer(index_dir)
    try:
        spy = _counting(indexer)
        spy.fail_add_at = 2
        urls = [f"https://example.org/{i}" for i in range(4)]
        with pytest.raises(ValueError, match="an add that fails"):
            indexer.write(_doc(u, f"k-{u}", "first try") for u in urls)
        indexer.write([_doc(urls[0], f"k-{urls[0]}", "again"), _doc("https://n/", "n", "n")])
        assert spy.deletes == 2  # the page of the failed batch, not the new one
    finally:
        indexer.close()
    indexer = Indexer(index_dir)  # reopened: the terms file has the failed batch's too
    try:
        spy = _counting(indexer)
        indexer.write([_doc(urls[1], f"k-{urls[1]}", "later")])
        assert spy.deletes == 2
    finally:
        indexer.close()
    live = _live(index_dir)
    assert live[urls[0]] == [f"k-{urls[0]}"] and live[urls[1]] == [f"k-{urls[1]}"]
    assert sorted(live) == sorted([*urls[:2], "https://n/"])
