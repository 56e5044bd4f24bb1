"""The same answers before and after a change of the index's format.

A fixed corpus (generated articles, a few hand-made pages in German, without a
language, on subdomains, near-duplicates) is indexed through the crawl's path, and a
fixed set of queries (words, phrases, AND/OR/NOT, site:, typos, paging) is run. Every
answer (total, correction, and each hit's link in order, title and snippet) must equal
the one recorded in ``test_index_golden.json``, which was written by the index format
before issue 16 (stored bodies, a ``vocab`` field). The corpus is indexed in one
batch, so in one segment: hits of equal score come in the order they were added, not
in an order that depends on when background merges ran. To record it again, on
purpose:

    python -m tests.unit.test_index_golden --write
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_index_corpus import Page, index_all, prose_pages, write_pages
from trawl.index import Searcher
from trawl.testing._sample_site import distinctive_phrase

GOLDEN = Path(__file__).with_suffix(".json")

EXTRA = [
    Page(
        "http://shop.beispiel.de/laufschuhe",
        "Laufschuhe",
        "Die besten Laufschuhe für glückliche Läufer in den Häusern der Stadt.",
        "de",
    ),
    Page(
        "http://www.beispiel.de/garten",
        "Der Garten",
        "Im Garten wachsen Tomaten und Rosen; die Läufer laufen durch die Häuser.",
        "de",
    ),
    Page(
        "http://plain.example.net/notes",
        "Field notes",
        "Unlabelled notes about zephyrine quartz, harbour lights and running shoes.",
        None,
    ),
    Page(
        "http://a.mirror.example.net/copy",
        "Copy one",
        "The unique zephyrine quartz garden, copied word for word.",
        "en",
        "cluster-7",
    ),
    Page(
        "http://b.mirror.example.net/copy",
        "Copy two",
        "The unique zephyrine quartz garden, copied word for word again.",
        "en",
        "cluster-7",
    ),
    Page(
        "http://kitchen.example.net/sauce",
        "Kitchen <b>notes</b>",
        "A <script>alert(1)</script> tomato &amp; basil sauce recipe. Running late.",
        "en",
    ),
]


def corpus() -> list[Page]:
    return list(prose_pages(240, seed=3, hosts=8)) + EXTRA


def queries(pages: list[Page]) -> list[tuple[str, int]]:
    """(query, page) pairs drawn from the corpus, the same every time."""
    words = [w.strip(".,;:") for w in pages[5].text.split()]
    phrase = " ".join(words[10:13])
    # The distinctive phrase of article 17 (host 1, article 2 of prose_pages).
    distinctive = distinctive_phrase(3, 1, 2, 240 // 8 + 1)
    assert distinctive in pages[17].text
    first, second, third = distinctive.split()
    longest = max((first, second, third), key=len)
    typo = distinctive.replace(longest, longest[:2] + "q" + longest[3:])
    return [
        ("garden", 1),
        ("garden", 2),
        ("harbour", 1),
        ("running shoes", 1),
        (f'"{phrase}"', 1),
        (" ".join(words[20:23]), 1),
        ("garden OR harbour", 1),
        ("garden AND harbour", 1),
        ("garden -harbour", 1),
        ("garden NOT (harbour OR bridge)", 1),
        ("(quartz OR tomato) -basil", 1),
        ("site:example.net", 1),
        ("site:mirror.example.net", 1),
        ("zephyrine site:plain.example.net", 1),
        ("site:site003.example garden", 1),
        ("zephyrine quartz", 1),
        ("haus", 1),
        ("Laufschuh", 1),
        ("basil sauce", 1),
        ("notes", 1),
        (distinctive, 1),
        (f'"{distinctive}"', 1),
        (typo, 1),
        ("zephyrin quartz", 1),
        ("zephyrime quartz", 1),
        (f"{typo} garden", 1),
        ("lighthuose OR tomatoez", 1),
        ("tomatoez", 1),
    ]


def answers(data: Path, pages: list[Page]) -> list[dict[str, Any]]:
    out = []
    with Searcher(data / "index", cache_size=0) as s:
        for query, page in queries(pages):
            r = s.search(query, page=page)
            out.append(
                {
                    "query": query,
                    "page": page,
                    "total": r.total,
                    "corrected": r.corrected,
                    "hits": [[h.link, h.title, h.snippet] for h in r.results],
                }
            )
    return out


@pytest.fixture(scope="module")
def got(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    data = tmp_path_factory.mktemp("golden")
    pages = corpus()
    write_pages(data, pages)
    index_all(data, batch=1000)
    return answers(data, pages)


def test_the_answers_are_the_recorded_ones(got: list[dict[str, Any]]) -> None:
    expected = json.loads(GOLDEN.read_text("utf-8"))
    assert [a["query"] for a in got] == [a["query"] for a in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert mine == theirs, mine["query"]


def test_the_recorded_answers_are_not_empty() -> None:
    expected = json.loads(GOLDEN.read_text("utf-8"))
    assert sum(1 for a in expected if a["hits"]) >= len(expected) - 2
    assert any(a["corrected"] for a in expected)


def main() -> None:
    ap = argparse.ArgumentParser(description="record the golden answers")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        pages = corpus()
        write_pages(data, pages)
        index_all(data, batch=1000)
        result = answers(data, pages)
    text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    if args.write:
        GOLDEN.write_text(text, "utf-8")
    else:
        print(text)


if __name__ == "__main__":
    main()
