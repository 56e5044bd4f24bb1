"""The index's size on disk against the text it indexes (a property of the format).

"The text it indexes" is the UTF-8 bytes of the pages' titles and texts as their text
records hold them, uncompressed. The index is every file under ``<data>/index``
(tantivy's segments, its meta files and the typo-correction lexicon).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.unit.test_index_corpus import (
    index_all,
    index_bytes,
    prose_pages,
    random_word_pages,
    write_pages,
)


def _by_kind(index_dir: Path) -> Counter[str]:
    kinds: Counter[str] = Counter()
    for p in index_dir.iterdir():
        if p.is_file():
            kinds[p.suffix] += p.stat().st_size
    return kinds


def test_generated_articles_take_well_under_twice_their_text(tmp_path: Path) -> None:
    text = write_pages(tmp_path, prose_pages(3000))
    assert index_all(tmp_path) == 3000
    size = index_bytes(tmp_path / "index")
    assert size <= 2 * text, (size, text)
    # The texts are kept once, in the text store: the index stores no body (its
    # stored fields are a few hundred bytes a page: url, title, where the text is).
    kinds = _by_kind(tmp_path / "index")
    assert kinds[".store"] <= 0.05 * text, kinds


def test_an_odd_vocabulary_takes_at_most_about_twice_its_text(tmp_path: Path) -> None:
    # Random words: each is a term of its own, in the term dictionary with its
    # postings and positions; that, once, is about twice the text.
    text = write_pages(tmp_path, random_word_pages(300))
    assert index_all(tmp_path) == 300
    size = index_bytes(tmp_path / "index")
    assert size <= 2.25 * text, (size / text, _by_kind(tmp_path / "index"))
