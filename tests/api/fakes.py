"""A small in-memory stand-in for ``trawl.index.Searcher``, answering with its types."""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path

from trawl.index import Hit, QueryError, Searcher, SearchResults

FETCHED_AT = 1_796_119_200.0  # 2026-12-01T10:00:00Z


def FakeHit(  # noqa: N802 - stands in for the class it builds
    title: str,
    snippet: str,
    link: str,
    host: str,
    score: float,
    fetched_at: float | None,
    language: str | None = "en",
) -> Hit:
    return Hit(title, snippet, link, host, score, fetched_at or 0.0, language)


FakeResults = SearchResults


@dataclass(frozen=True)
class Doc:
    title: str
    text: str
    link: str

    @property
    def host(self) -> str:
        return self.link.split("/")[2]


def corpus(n: int = 35) -> list[Doc]:
    docs = [
        Doc(
            f"Python crawler notes {i}",
            f"Page {i} about the python crawler: politeness, robots.txt and fetching. "
            "A <script>alert(1)</script> & friends.",
            f"http://site{i % 4}.test/page/{i}",
        )
        for i in range(n)
    ]
    docs.append(Doc("Gardening <b>tips</b>", "Tomatoes & roses in the garden.", "http://g.test/"))
    return docs


class FakeSearcher(Searcher):
    """Searches ``corpus()`` in memory; nothing of the real searcher's state is set up."""

    def __init__(self, index_dir: Path | None = None, *, cache_size: int = 1024) -> None:
        self.docs = corpus()
        self.closed = False
        self.reloads = 0
        self.calls = 0

    def _vocab(self) -> set[str]:
        return {w for d in self.docs for w in re.findall(r"[a-z0-9]+", (d.title + d.text).lower())}

    def search(
        self, query: str, *, page: int = 1, size: int = 10, crawl: str | None = None
    ) -> SearchResults:
        self.calls += 1
        self.crawl = crawl
        started = time.perf_counter()
        if query.count('"') % 2:
            raise QueryError("unbalanced quote")
        words = re.findall(r"[A-Za-z0-9]+", query)
        if not words or words[-1] in ("AND", "OR", "NOT") or words[0] in ("AND", "OR"):
            raise QueryError(f"operator {words[-1] if words else query!r} needs words")
        vocab = self._vocab()
        fixed = [w.lower() if w.lower() in vocab else _fix(w.lower(), vocab) for w in words]
        corrected = " ".join(fixed) if fixed != [w.lower() for w in words] else None
        hits = [d for d in self.docs if all(w in (d.title + " " + d.text).lower() for w in fixed)]
        start = (page - 1) * size
        return SearchResults(
            query=query,
            results=[_hit(d, fixed) for d in hits[start : start + size]],
            total=len(hits),
            took_ms=(time.perf_counter() - started) * 1000,
            corrected=corrected,
            page=page,
            size=size,
        )

    def reload(self) -> None:
        self.reloads += 1

    def crawls(self) -> list[str]:
        return []

    def close(self) -> None:
        self.closed = True


def _fix(word: str, vocab: set[str]) -> str:
    close = get_close_matches(word, sorted(vocab), n=1, cutoff=0.7)
    return close[0] if close else word


def _hit(doc: Doc, words: list[str]) -> Hit:
    snippet = html.escape(doc.text)
    for w in words:
        snippet = re.sub(f"(?i)({re.escape(w)})", r"<mark>\1</mark>", snippet)
    return Hit(doc.title, snippet, doc.link, doc.host, 1.0, FETCHED_AT, "en")


def fake_index(data: Path) -> Path:
    """An index directory the routes take as present (the fake searcher ignores it)."""
    (data / "index").mkdir(exist_ok=True)
    (data / "index" / "meta.json").write_text("{}")
    return data
