"""The index's schema and text analysis, shared by the writer and the searchers.

Text is analysed per language: each stemmer tantivy ships has its own pair of fields
(``title_<code>``, ``body_<code>``) with its own analyzer, and a page fills the pair of
its language (``title_xx``/``body_xx`` when it has none or tantivy has no stemmer for
it). So a German page is stemmed as German, BM25's statistics are per language, and
the searcher only asks the fields of languages the index holds. Phrases are matched
on the same stemmed fields (``"running shoes"`` matches "run shoes"), which keeps one
copy of the positions instead of a second, unstemmed one; the loss of precision is
what every stemmed engine accepts.

An analyzer: split on non-alphanumerics, drop tokens over 40 bytes (junk, base64),
lower-case, stem, then fold to ASCII (after the stemmer, which knows its accents:
French "été" stems before it becomes "ete"). Text is put in Unicode NFKC form and
stripped of any markup left in it before it reaches tantivy; queries get the same.

The index stores no body: the text is kept once, in the text store, and the index
stores where its record is (``text_file``, ``text_offset``, ``text_length``); the
searcher reads the records of the hits it shows to make their snippets. Titles are
stored (they are short and every hit shows one). Positions are kept only in the
title and body fields, which phrases need; the key fields record documents only.
The vocabulary typo correction draws from is not a field of this index but the
lexicon beside it (``index/lexicon/``, see ``lexicon.py``).

The schema is checked when the index is opened: an index of another format (an
older trawl's) is refused with ``IndexFormatError``, whose message says to rebuild
it with ``trawl index``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path

import tantivy

from trawl.errors import StorageError
from trawl.index.layout import SHARDS_FILE

# ISO 639-1 (what the language detector says) -> tantivy's stemmer name.
STEMMERS: dict[str, str] = {
    "ar": "arabic",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hu": "hungarian",
    "it": "italian",
    "no": "norwegian",
    "nb": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}
PLAIN = "xx"  # the analyzer (and fields) of pages without a supported stemmer
# The field codes, one per analyzer ("nb" shares Norwegian with "no").
LANGUAGES: tuple[str, ...] = tuple(sorted({c for c in STEMMERS if c != "nb"} | {PLAIN}))
MAX_TOKEN_BYTES = 40
# 1: stored bodies and a vocab field; 2: bodies in the text store, the lexicon apart.
SCHEMA_VERSION = 2


class IndexFormatError(StorageError):
    """The index on disk was written by another version of the schema."""


class NoIndexError(Exception):
    """There is no search index to open (yet)."""


def field_code(language: str | None) -> str:
    """The field suffix of a page in ``language`` (``xx`` when not stemmed)."""
    if not language:
        return PLAIN
    code = language.split("-", 1)[0].lower()
    if code == "nb":
        return "no"
    return code if code in STEMMERS else PLAIN


def title_field(code: str) -> str:
    return f"title_{code}"


def body_field(code: str) -> str:
    return f"body_{code}"


def analyzer(code: str) -> tantivy.TextAnalyzer:
    """The analyzer of one language's fields (``xx``: no stemming)."""
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
    )
    if code != PLAIN:
        builder = builder.filter(tantivy.Filter.stemmer(STEMMERS[code]))
    return builder.filter(tantivy.Filter.ascii_fold()).build()


def build_schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    # Keys: raw (untokenised) and indexed, for deletes; stored to show and verify.
    b.add_text_field("key", stored=True, tokenizer_name="raw", index_option="basic")  # hash
    b.add_text_field("url", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_text_field("host", stored=True, tokenizer_name="raw", index_option="basic")
    # The host and each of its parent domains, so site:example.org finds subdomains.
    b.add_text_field("site", tokenizer_name="raw", index_option="basic")
    b.add_text_field("language", stored=True, tokenizer_name="raw", index_option="basic")
    # The field code of the page's language: which pair holds its text.
    b.add_text_field("code", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_float_field("fetched_at", stored=True, fast=True)
    # The near-duplicate cluster as a 64-bit hash: results keep one hit per cluster.
    b.add_unsigned_field("cluster", fast=True)
    # Where the page's text record is in the text store (``Location``).
    b.add_text_field("text_file", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_unsigned_field("text_offset", stored=True)
    b.add_unsigned_field("text_length", stored=True)
    for code in LANGUAGES:
        b.add_text_field(title_field(code), stored=True, tokenizer_name=f"trawl_{code}")
        b.add_text_field(body_field(code), tokenizer_name=f"trawl_{code}")
    return b.build()


def register(index: tantivy.Index) -> None:
    """Tokenizers are not stored in the index: every opener registers them (the
    index writer then its own, which leave stemming to it: ``stems.py``)."""
    for code in LANGUAGES:
        index.register_tokenizer(f"trawl_{code}", analyzer(code))


def open_index(path: Path) -> tantivy.Index:
    """Open the index at ``path``, creating it (and the directory) when absent; raises
    IndexFormatError for an index of another schema."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        index = tantivy.Index(build_schema(), path=str(path), reuse=True)
    except ValueError as exc:
        if "schema does not match" not in str(exc):
            raise
        raise IndexFormatError(
            f"the search index in {path} was made by another version of trawl; "
            f"rebuild it from the stored text with `trawl index --data {path.parent}`"
        ) from None
    register(index)
    return index


def index_exists(path: Path) -> bool:
    """Whether ``path`` holds an index, whole or split into shards."""
    return (path / "meta.json").exists() or (path / SHARDS_FILE).exists()


_TAG = re.compile(r"<[^<>]{0,200}>")
_SPACES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]+")
# The ASCII characters of ``_SPACES``: an ASCII text without them needs no substitution.
_ASCII_CONTROLS = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def normalise(text: str) -> str:
    """NFKC, markup and control characters out (cheap when there are none)."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    if text.isascii():
        # A page's 40 KB of text: ten times faster than the regular expression's scan.
        data = text.encode("ascii")
        if len(data.translate(None, _ASCII_CONTROLS)) != len(data):
            text = _SPACES.sub(" ", text)
    else:
        text = unicodedata.normalize("NFKC", _SPACES.sub(" ", text))
    return text


def site_terms(host: str) -> list[str]:
    """``a.b.example.org`` -> itself, ``b.example.org``, ``example.org``, ``org``.
    ``host`` is a host key: a port, if any, is not part of a site."""
    host = host.lower()
    if host.startswith("["):  # IPv6 literal
        return [host.split("]", 1)[0] + "]"]
    host = host.rsplit(":", 1)[0].rstrip(".")
    parts = host.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]
