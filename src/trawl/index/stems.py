"""The index writer's stemming: once per distinct word, not once per word of a page.

tantivy's analyzers (``schema.analyzer``) stem every token they meet, and the Snowball
stemmers were most of the CPU of adding a page (2.6 of 4.6 ms for 41 KB of English
text). A page's words repeat, and so do a crawl's: here each distinct token goes
through its language's analyzer once (``Stems``, a bounded cache per language), and
the writer's index gets the terms it would have made:

- The writer's index registers ``trawl_<code>`` *without* the stemmer, and without
  the lower-casing and folding the terms have had already (``register_writer``);
  searchers register the full analyzers (``schema.register``) and analyse queries as
  before. The index holds the same terms at the same positions with the same field
  lengths, so the same hits and scores.
- An ASCII body is given as text with each token replaced by its term: the writer's
  analyzer (split on non-alphanumerics, drop tokens of 40 bytes and more) leaves a
  term (lower-case alphanumeric ASCII) as it is, and a token the full analyzer drops
  (40 bytes and more) is left in place to be dropped again, keeping the positions
  after it.
- Any other text (a title, which is stored; a body with a non-ASCII character, or a
  term the writer's analyzer would not leave as it is) is given pre-tokenised: the
  terms with their positions, and the original text to store.

The per-token work of an ASCII body (split, a lookup per token, the join: 0.6
CPU-ms for a page of 7,000 words) runs in C where ``trawl._native`` is built
(``ascii_split`` makes a ``Tokens``, a ``Terms`` table holds the terms; no Python
object per token: a fifth of the CPU), else in Python (``ascii_tokens``, a dict):
the same text either way (tested).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

import tantivy

from trawl.index.schema import LANGUAGES, MAX_TOKEN_BYTES, PLAIN, analyzer

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): the Python path
    _native = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from trawl._native import Tokens

__all__ = ["AsciiTokens", "Stems", "ascii_split", "ascii_tokens", "register_writer"]

AsciiTokens = Union[list[bytes], "Tokens"]
"""The tokens of an ASCII text: ``ascii_tokens``'s list, or the native ``Tokens``."""

MAX_CACHED = 50_000  # distinct tokens per language (a cache full is emptied)

# ASCII letters and digits stay, every other byte separates tokens (the simple tokenizer).
_ASCII_TOKENS = bytes(i if chr(i).isascii() and chr(i).isalnum() else 0x20 for i in range(256))


def ascii_tokens(text: str) -> list[bytes]:
    """The lower-cased tokens of an ASCII ``text`` (the simple tokenizer's, long ones
    too), as the index writer and the lexicon split it once."""
    return text.encode("ascii").translate(_ASCII_TOKENS).lower().split()


def ascii_split(text: str, *, native: bool = True) -> AsciiTokens:
    """The tokens of an ASCII ``text`` (as ``ascii_tokens``), natively where built."""
    if native and _native is not None:
        return _native.Tokens(text.encode("ascii"))
    return ascii_tokens(text)


def writer_analyzer(code: str) -> tantivy.TextAnalyzer:
    """The writer's analyzer of a language's fields. ``xx`` (no stemmer): the full one,
    its texts given as they are. Any other: split and drop long tokens only, since
    ``Stems`` gives it terms the full analyzer made (lower-cased, folded, alphanumeric
    ASCII) or tokens to drop: lower-casing and folding those changed nothing and cost
    a fifth of tantivy's add (0.93 -> 0.75 CPU-ms for a page of 7,500 words)."""
    if code == PLAIN:
        return analyzer(PLAIN)
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .build()
    )


def register_writer(index: tantivy.Index) -> None:
    """Register the writer's analyzers on ``index`` (after ``schema.register``): texts
    must then come through ``Stems``."""
    for code in LANGUAGES:
        index.register_tokenizer(f"trawl_{code}", writer_analyzer(code))


class _UnfitError(Exception):
    """A term the writer's analyzer would not leave as it is."""


class _AsciiTerms(dict[bytes, bytes]):
    """Lower-cased ASCII token -> what stands for it in the text given to the writer."""

    def __init__(self, full: tantivy.TextAnalyzer) -> None:
        super().__init__()
        self._full = full

    def __missing__(self, token: bytes) -> bytes:
        term = _ascii_term(self._full, token)
        if len(self) >= MAX_CACHED:
            self.clear()
        self[token] = term
        return term


def _ascii_term(full: tantivy.TextAnalyzer, token: bytes) -> bytes:
    """What stands for a lower-cased ASCII ``token`` in the text given to the writer
    (raises _UnfitError when no ASCII text can)."""
    terms = full.analyze(token.decode("ascii"))
    if not terms:
        if len(token) < MAX_TOKEN_BYTES:
            raise _UnfitError(token)
        return token  # dropped again by the writer's analyzer, at the same position
    text = terms[0]
    if len(terms) != 1 or not _fits(text):
        raise _UnfitError(token)
    return text.encode("ascii")


def _fits(term: str) -> bool:
    """Whether the writer's analyzer makes ``term`` of ``term`` (one token, kept, as is)."""
    return (
        term.isascii()
        and term.isalnum()
        and term == term.lower()
        and len(term.encode("ascii")) < MAX_TOKEN_BYTES
    )


class Stems:
    """Texts of one language made ready for the writer's index (see the module doc)."""

    def __init__(self, code: str, *, native: bool = True) -> None:
        """``native`` False: the Python path even where ``trawl._native`` is built."""
        self.code = code
        self.native = native and _native is not None
        self._full = analyzer(code)
        self._simple = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
        self._ascii = _AsciiTerms(self._full)
        self._table = _native.Terms() if self.native else None
        self._terms: dict[str, str | None] = {}

    def body(
        self, text: str, tokens: AsciiTokens | None = None
    ) -> str | tantivy.PreTokenizedString:
        """``tokens``: ``ascii_split(text)`` if made already."""
        if self.code == PLAIN:
            return text  # no stemmer: the writer's analyzer is the full one
        if tokens is None and text.isascii():
            tokens = ascii_split(text, native=self.native)
        if tokens is not None:
            try:
                if isinstance(tokens, list):
                    return b" ".join(map(self._ascii.__getitem__, tokens)).decode("ascii")
                return self._native_body(tokens)
            except _UnfitError:
                pass
        return self.tokens(text)

    def _native_body(self, tokens: Tokens) -> str:
        table = self._table
        if table is None:  # Tokens given to a Python-path Stems
            table = self._table = _native.Terms()
        new = table.missing(tokens)
        if new and len(table) + len(new) > MAX_CACHED:
            table.clear()
            new = table.missing(tokens)
        for token in new:
            table[token] = _ascii_term(self._full, token)
        return table.join(tokens).decode("ascii")

    def title(self, text: str) -> str | tantivy.PreTokenizedString:
        return text if self.code == PLAIN else self.tokens(text)

    def tokens(self, text: str) -> tantivy.PreTokenizedString:
        """``text`` pre-tokenised: the full analyzer's terms at their positions."""
        terms = self._terms
        out: list[tantivy.Token] = []
        for position, token in enumerate(self._simple.analyze(text)):
            try:
                term = terms[token]
            except KeyError:
                found = self._full.analyze(token)
                term = found[0] if found else None
                if len(terms) >= MAX_CACHED:
                    terms.clear()
                terms[token] = term
            if term is not None:
                out.append(tantivy.Token(term, position, 0, 0))
        return tantivy.PreTokenizedString(text, out)
