"""Deterministic English-like text for the sample web (and the test web in tests/).

A ``TextGenerator`` builds, once per seed, a pool of clauses from sentence templates
filled with real words drawn with Zipf weights (``_sample_words``), then makes
sentences by joining one or two clauses with a connective. Pages draw sentences with
their own ``random.Random``, so a page's text depends only on the generator's seed and
the page's own random stream, never on the order pages are made in. Joining pooled
clauses keeps generation fast (tens of MB of text a second) while almost every
sentence is new, so pages do not look like near-duplicates of each other.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import random
from collections.abc import Sequence

from trawl.testing import _sample_words as words


def _unique(text: str) -> list[str]:
    return list(dict.fromkeys(text.split()))


def _plural(noun: str) -> str:
    cached = _PLURALS.get(noun)
    if cached is not None:
        return cached
    _PLURALS[noun] = plural = _make_plural(noun)
    return plural


_PLURALS: dict[str, str] = {}


def _make_plural(noun: str) -> str:
    if noun in words.IRREGULAR_PLURALS:
        return words.IRREGULAR_PLURALS[noun]
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "sh", "ch", "x", "z")):
        return noun + "es"
    return noun + "s"


def _verb_forms(verb: str) -> tuple[str, str, str, str]:
    """(third person singular, past, past participle, present participle)."""
    if verb.endswith("y") and verb[-2:-1] not in ("a", "e", "i", "o", "u"):
        third, regular_past = verb[:-1] + "ies", verb[:-1] + "ied"
    elif verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        third, regular_past = verb + "es", verb + "ed"
    else:
        third = verb + "s"
        regular_past = verb + "d" if verb.endswith("e") else verb + "ed"
    if verb in words.DOUBLING_VERBS:
        regular_past = verb + verb[-1] + "ed"
        ing = verb + verb[-1] + "ing"
    elif verb.endswith("ie"):
        ing = verb[:-2] + "ying"
    elif verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        ing = verb[:-1] + "ing"
    else:
        ing = verb + "ing"
    past, participle = words.IRREGULAR_VERBS.get(verb, (regular_past, regular_past))
    return third, past, participle, ing


class _Zipf:
    """Draws from a word list with weight 1/rank (the list is commonest first)."""

    def __init__(self, items: Sequence[str], exponent: float = 1.0) -> None:
        self.items = list(items)
        weights = [1.0 / (rank**exponent) for rank in range(1, len(items) + 1)]
        self._cumulative = list(itertools.accumulate(weights))
        self._total = self._cumulative[-1]

    def __call__(self, rng: random.Random) -> str:
        index = bisect.bisect(self._cumulative, rng.random() * self._total)
        return self.items[min(index, len(self.items) - 1)]


NOUNS = _unique(words.NOUNS)
MASS_NOUNS = _unique(words.MASS_NOUNS)
VERBS = _unique(words.VERBS)
ADJECTIVES = _unique(words.ADJECTIVES)
ADVERBS = _unique(words.ADVERBS)
PREPOSITIONS = _unique(words.PREPOSITIONS)
FIRST_NAMES = _unique(words.FIRST_NAMES)
SURNAMES = _unique(words.SURNAMES)
PLACES = _unique(words.PLACES)
MONTHS = _unique(words.MONTHS)
_COUNT_NOUNS = [n for n in NOUNS if n not in set(MASS_NOUNS)]
_VERB_FORMS = {verb: _verb_forms(verb) for verb in VERBS}


def vocabulary() -> frozenset[str]:
    """Every word form ordinary generated text can contain (lower case)."""
    forms: set[str] = set(NOUNS) | set(ADJECTIVES) | set(ADVERBS) | set(PREPOSITIONS)
    forms |= {_plural(n) for n in _COUNT_NOUNS}
    for verb, inflected in _VERB_FORMS.items():
        forms.add(verb)
        forms.update(inflected)
    forms |= {w.lower() for w in FIRST_NAMES + SURNAMES + PLACES + MONTHS}
    return frozenset(forms)


_VOCABULARY = vocabulary()
RARE_WORDS = [w for w in _unique(words.RARE_WORDS) if w not in _VOCABULARY]

_DETERMINERS = ["the", "the", "the", "a", "this", "that", "every", "one", "each", "another"]
_PLURAL_DETERMINERS = ["the", "many", "some", "most", "several", "few", "these", "all", "two"]
_AUXILIARIES = ["will", "would", "could", "should", "might", "can", "must", "may"]
_PRONOUNS = ["he", "she", "they", "we", "it", "nobody", "everyone", "someone"]
# (text before the first clause, between the clauses, after; first clause capitalised?)
_CONNECTIVES = [
    (("", ", and ", ".", True), 5),
    (("", ", but ", ".", True), 4),
    (("", " because ", ".", True), 3),
    (("", " while ", ".", True), 2),
    (("", "; ", ".", True), 2),
    (("", ", so ", ".", True), 2),
    (("Although ", ", ", ".", False), 2),
    (("When ", ", ", ".", False), 2),
    (("If ", ", ", ".", False), 1),
    (("", " after ", ".", True), 1),
    (("", ", which means ", ".", True), 1),
]
# 256 slots, one picked by 8 random bits: 60 % join two clauses with a weighted
# connective, the rest (None) make a one-clause sentence.
_TWO_CLAUSE_SLOTS = 154
_CONNECTIVE_TABLE: list[tuple[str, str, str, bool] | None] = [
    entry
    for entry, weight in _CONNECTIVES
    for _ in range(weight * _TWO_CLAUSE_SLOTS // sum(w for _, w in _CONNECTIVES))
]
_CONNECTIVE_TABLE += [_CONNECTIVES[0][0]] * (_TWO_CLAUSE_SLOTS - len(_CONNECTIVE_TABLE))
_CONNECTIVE_TABLE += [None] * (256 - len(_CONNECTIVE_TABLE))


_PARAGRAPH_LENGTHS = (3, 5, 4, 6, 3, 4, 5, 6, 4, 3, 5, 4, 6, 5, 3, 4)


class TextGenerator:
    """English-like prose from a fixed seed: sentences, paragraphs, titles, names."""

    def __init__(self, seed: int = 0, *, clause_pool: int = 16_384) -> None:
        self.seed = seed
        self._noun = _Zipf(_COUNT_NOUNS)
        self._mass = _Zipf(MASS_NOUNS)
        self._verb = _Zipf(VERBS)
        self._adjective = _Zipf(ADJECTIVES)
        self._adverb = _Zipf(ADVERBS, exponent=0.8)
        self._preposition = _Zipf(PREPOSITIONS, exponent=1.2)
        self._first = _Zipf(FIRST_NAMES, exponent=0.5)
        self._surname = _Zipf(SURNAMES, exponent=0.5)
        self._place = _Zipf(PLACES, exponent=0.7)
        if clause_pool & (clause_pool - 1) or not 2 <= clause_pool <= 2**15:
            raise ValueError("clause_pool must be a power of two between 2 and 32768")
        rng = random.Random(f"clauses-{seed}")
        self._clauses = [self._clause(rng) for _ in range(clause_pool)]
        self._capitalised = [c[0].upper() + c[1:] for c in self._clauses]
        self._runs: list[str] = []
        self._heads: list[str] = []
        self._tails: list[str] = []
        self._title_pool: list[str] = []
        self._person_pool: list[str] = []

    # -- words -----------------------------------------------------------------
    def noun(self, rng: random.Random) -> str:
        return self._noun(rng)

    def plural_noun(self, rng: random.Random) -> str:
        return _plural(self._noun(rng))

    def adjective(self, rng: random.Random) -> str:
        return self._adjective(rng)

    def verb(self, rng: random.Random) -> str:
        return self._verb(rng)

    def place(self, rng: random.Random) -> str:
        return self._place(rng)

    def person(self, rng: random.Random) -> str:
        return f"{self._first(rng)} {self._surname(rng)}"

    def words(self, rng: random.Random, count: int) -> list[str]:
        """``count`` content words (for keywords, tags, product names)."""
        pick = (self._noun, self._adjective, self._noun, self._verb)
        return [pick[i % 4](rng) for i in range(count)]

    # -- clauses and sentences -------------------------------------------------
    def _noun_phrase(self, rng: random.Random, *, plural: bool | None = None) -> str:
        if plural is None:
            plural = rng.random() < 0.35
        adjective = f"{self._adjective(rng)} " if rng.random() < 0.45 else ""
        if plural:
            return f"{rng.choice(_PLURAL_DETERMINERS)} {adjective}{_plural(self._noun(rng))}"
        if rng.random() < 0.12:
            return f"the {adjective}{self._mass(rng)}"
        determiner = rng.choice(_DETERMINERS)
        head = f"{adjective}{self._noun(rng)}"
        if determiner == "a" and head[0] in "aeiou":
            determiner = "an"
        return f"{determiner} {head}"

    def _subject(self, rng: random.Random) -> tuple[str, bool]:
        roll = rng.random()
        if roll < 0.12:
            return self.person(rng), False
        if roll < 0.22:
            pronoun = rng.choice(_PRONOUNS)
            return pronoun, pronoun in ("they", "we")
        plural = rng.random() < 0.35
        return self._noun_phrase(rng, plural=plural), plural

    def _clause(self, rng: random.Random) -> str:
        subject, plural = self._subject(rng)
        third, past, participle, ing = _VERB_FORMS[self._verb(rng)]
        roll = rng.random()
        obj = self._noun_phrase(rng)
        if roll < 0.35:
            verb_phrase = f"{past} {obj}"
        elif roll < 0.5:
            verb_phrase = f"{rng.choice(_AUXILIARIES)} {self._verb(rng)} {obj}"
        elif roll < 0.62:
            verb_phrase = f"{'have' if plural else 'has'} {participle} {obj}"
        elif roll < 0.72:
            verb_phrase = f"{'were' if plural else 'was'} {ing} {obj}"
        elif roll < 0.82:
            verb_phrase = f"{'are' if plural else 'is'} {self._adverb(rng)} {self._adjective(rng)}"
        else:
            verb_phrase = f"{self._verb(rng) if plural else third} {obj}"
        tail_roll = rng.random()
        if tail_roll < 0.4:
            verb_phrase += f" {self._preposition(rng)} {self._noun_phrase(rng)}"
        elif tail_roll < 0.5:
            verb_phrase += f" in {self._place(rng)}"
        elif tail_roll < 0.6:
            verb_phrase += f" {self._adverb(rng)}"
        elif tail_roll < 0.65:
            verb_phrase += f" in {rng.randint(1950, 2025)}"
        return f"{subject} {verb_phrase}"

    def sentence(self, rng: random.Random) -> str:
        return self._sentences(rng, 1)[0]

    def _sentences(self, rng: random.Random, count: int) -> list[str]:
        # The hot loop of page generation: one getrandbits() call picks two clauses
        # and a connective (the clause pool holds 2**15 entries at most).
        bits = rng.getrandbits
        lower, upper = self._clauses, self._capitalised
        mask = len(lower) - 1
        table = _CONNECTIVE_TABLE
        out = []
        for _ in range(count):
            r = bits(38)
            entry = table[r >> 30]
            if entry is None:
                out.append(upper[r & mask] + ".")
                continue
            before, between, after, capital = entry
            first = upper[r & mask] if capital else lower[r & mask]
            out.append(before + first + between + lower[(r >> 15) & mask] + after)
        return out

    def prose(self, rng: random.Random, nbytes: int) -> list[str]:
        """Paragraphs, at least ``nbytes`` characters in all (the bulk of a page).

        Built at C speed from random bytes: each paragraph is a pooled run of three
        sentences (65,536 of them) plus one fresh sentence, itself a pooled opening
        clause and a pooled closing clause (2**32 combinations), so no two
        paragraphs are alike although their parts recur across a large web.
        """
        runs, heads, tails = self._pools()
        paragraphs: list[str] = []
        size = 0
        while size < nbytes:
            count = max(2, (nbytes - size) // 300 + 2)
            indices = memoryview(rng.randbytes(6 * count)).cast("H")
            fresh = map(
                operator.add,
                operator.itemgetter(*indices[1::3])(heads),
                operator.itemgetter(*indices[2::3])(tails),
            )
            batch = list(map("{} {}".format, operator.itemgetter(*indices[0::3])(runs), fresh))
            ends = list(itertools.accumulate(map(len, batch), initial=size))
            keep = bisect.bisect_left(ends, nbytes)
            paragraphs += batch[:keep]
            size = ends[min(keep, len(batch))]
        return paragraphs

    def _pools(self) -> tuple[list[str], list[str], list[str]]:
        heads, tails = self._sentence_halves()
        if not self._runs:
            rng = random.Random(f"runs-{self.seed}")
            n = 1 << 16

            def sentences() -> list[str]:
                picks = memoryview(rng.randbytes(4 * n)).cast("H")
                a = operator.itemgetter(*picks[0::2])(heads)
                return list(map(operator.add, a, operator.itemgetter(*picks[1::2])(tails)))

            self._runs = list(map("{} {} {}".format, sentences(), sentences(), sentences()))
        return self._runs, heads, tails

    def _sentence_halves(self) -> tuple[list[str], list[str]]:
        """65,536 openings (a clause and its connective) and closings (a clause)."""
        if not self._heads:
            rng = random.Random(f"halves-{self.seed}")
            n = 1 << 16
            mask = len(self._clauses) - 1
            connectives = [entry for entry in _CONNECTIVE_TABLE if entry is not None]
            picks = memoryview(rng.randbytes(6 * n)).cast("H")
            for k in range(n):
                before, between, _, capital = connectives[picks[3 * k] % len(connectives)]
                clause = (self._capitalised if capital else self._clauses)[picks[3 * k + 1] & mask]
                self._heads.append(before + clause + between)
            self._tails = [self._clauses[i & mask] + "." for i in picks[2::3]]
        return self._heads, self._tails

    def pooled_title(self, rng: random.Random) -> str:
        """A headline from a pool of 4,096 (for link texts and teasers)."""
        if not self._title_pool:
            pool_rng = random.Random(f"titles-{self.seed}")
            self._title_pool = [self.title(pool_rng) for _ in range(4096)]
        return self._title_pool[rng.getrandbits(12)]

    def pooled_person(self, rng: random.Random) -> str:
        """A name from a pool of 1,024."""
        if not self._person_pool:
            pool_rng = random.Random(f"people-{self.seed}")
            self._person_pool = [self.person(pool_rng) for _ in range(1024)]
        return self._person_pool[rng.getrandbits(10)]

    def paragraph(self, rng: random.Random, sentences: tuple[int, int] = (3, 7)) -> str:
        low, high = sentences
        return " ".join(self._sentences(rng, low + int(rng.random() * (high - low + 1))))

    def title(self, rng: random.Random) -> str:
        """A headline in title case."""
        noun, adjective = self._noun(rng), self._adjective(rng)
        patterns = (
            f"The {adjective} {_plural(noun)} of {self._place(rng)}",
            f"How {_plural(noun)} {self._verb(rng)} the {self._noun(rng)}",
            f"Why the {adjective} {noun} matters",
            f"{self._place(rng)} {_VERB_FORMS[self._verb(rng)][0]} new {noun} plan",
            f"A {adjective} guide to the {noun}",
            f"{self.person(rng)} on {_plural(noun)} and the {self._noun(rng)}",
            f"What the {noun} {_VERB_FORMS[self._verb(rng)][1]} about {_plural(self._noun(rng))}",
            f"{rng.randint(3, 12)} {adjective} {_plural(noun)} to watch",
        )
        return _title_case(rng.choice(patterns))

    def heading(self, rng: random.Random) -> str:
        patterns = (
            f"The {self._noun(rng)} and its {_plural(self._noun(rng))}",
            f"{self._adjective(rng)} {_plural(self._noun(rng))}",
            f"Early {_plural(self._noun(rng))}",
            f"A {self._adjective(rng)} {self._noun(rng)}",
            f"Beyond the {self._noun(rng)}",
        )
        return _title_case(rng.choice(patterns))

    def list_item(self, rng: random.Random) -> str:
        clause = self._clauses[int(rng.random() * len(self._clauses))]
        return clause[0].upper() + clause[1:]


_SMALL = frozenset(
    ["a", "an", "and", "the", "of", "on", "in", "to", "for", "at", "by", "or", "but"]
)


def _title_case(text: str) -> str:
    parts = text.split()
    return " ".join(
        p if (i and p in _SMALL) or p[0].isupper() else p[0].upper() + p[1:]
        for i, p in enumerate(parts)
    )


@functools.lru_cache(maxsize=8)
def text_generator(seed: int, clause_pool: int = 16_384) -> TextGenerator:
    """A shared generator per seed (building the clause pool costs a few tenths of a second)."""
    return TextGenerator(seed, clause_pool=clause_pool)
