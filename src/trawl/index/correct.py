"""Typo correction: a word the index has never seen becomes its likeliest neighbour.

The candidates come from the lexicon (``lexicon.py``: the index's unstemmed, folded
words, kept on disk by the writer). A word absent from the index is corrected to the
most frequent lexicon word within edit distance 1, else 2 (a transposition counts as
one edit), with the distance allowed by length as in Lucene's "AUTO": none up to 2
characters, 1 for 3 to 5, 2 from 6 on. Numbers are never corrected. Frequencies are
counted on the searcher's own commit (``stem_df``), so a word whose pages are gone
is not offered. The searcher takes a few such candidates per word and keeps the
first combination that finds pages with the rest of the query ("thxme moth" is
"thyme moth", though "theme" is the commoner word).

Over several indexes searched as one (crawls, shards), the candidates are the words
of every lexicon, counted in every index (``merged_candidates``).

Correction has a time budget (``Budget``): the searcher stops correcting when it is
spent, searches what it has, and says so (``correction_skipped``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from trawl.index.lexicon import Lexicon, stem_df

_FETCH = 32  # lexicon words fetched per distance, the more frequent first


def max_edits(word: str) -> int:
    if len(word) <= 2 or not word.isalpha():
        return 0
    return 1 if len(word) <= 5 else 2


@dataclass(slots=True)
class Budget:
    """Time left for one query's correction, on an injected clock."""

    clock: Callable[[], float]
    deadline: float
    spent: bool = False

    def left(self) -> bool:
        """Whether there is time left (once spent, it stays spent)."""
        if not self.spent and self.clock() >= self.deadline:
            self.spent = True
        return not self.spent


class Corrector:
    """Candidates for unknown words, from the lexicon of the index in ``index_dir``."""

    def __init__(self, index_dir: Path) -> None:
        self._lexicon = Lexicon(index_dir)

    def reload(self) -> None:
        """Follow the index (the searcher calls it when it reloads)."""
        self._lexicon.reload()

    def candidates(
        self,
        searcher: tantivy.Searcher,
        analyzers: Mapping[str, tantivy.TextAnalyzer],
        languages: Sequence[str],
        word: str,
        *,
        limit: int = 4,
    ) -> list[str]:
        """Up to ``limit`` corrections of the folded ``word``, likeliest first: nearer,
        then more frequent in the index."""
        return ranked_candidates([(self, searcher, languages)], analyzers, word, limit=limit)

    def near(self, word: str, distance: int) -> list[str]:
        """Lexicon words within ``distance`` edits of ``word``, the more frequent first."""
        return self._lexicon.near(word, distance, _FETCH)


Part = tuple[Corrector, tantivy.Searcher, Sequence[str]]  # a lexicon, its index, languages


def merged_candidates(
    parts: Sequence[Part],
    analyzers: Mapping[str, tantivy.TextAnalyzer],
    word: str,
    *,
    limit: int = 4,
) -> list[str]:
    """``Corrector.candidates`` over several indexes searched as one: one index asks its
    corrector (the hook tests take over); several merge their lexicons' words, counted
    in all of them."""
    if len(parts) == 1:
        corrector, searcher, languages = parts[0]
        return corrector.candidates(searcher, analyzers, languages, word, limit=limit)
    return ranked_candidates(parts, analyzers, word, limit=limit)


def ranked_candidates(
    parts: Sequence[Part],
    analyzers: Mapping[str, tantivy.TextAnalyzer],
    word: str,
    *,
    limit: int = 4,
) -> list[str]:
    out: list[str] = []
    for distance in range(1, max_edits(word) + 1):
        found: list[str] = []
        for corrector, _searcher, _languages in parts:
            found += [w for w in corrector.near(word, distance) if w != word and w not in out]
        found = list(dict.fromkeys(found))
        counted = [
            (sum(stem_df(s, analyzers, langs, w) for _c, s, langs in parts), w) for w in found
        ]
        # The more frequent first; the lexicons' order (their counts) breaks ties.
        ranked = sorted(
            ((df, i, w) for i, (df, w) in enumerate(counted) if df > 0),
            key=lambda t: (-t[0], t[1]),
        )
        out.extend(w for _df, _i, w in ranked)
        if len(out) >= limit:
            break
    return out[:limit]
