"""Snippets: the best passage of a page's text, query terms in ``<mark>``, safe HTML.

tantivy's snippet generator picks the fragment with the highest-scoring query terms
(it re-analyses the stored text with the field's own analyzer, so stemmed forms are
found: "runs" lights up for "running"). Its highlight ranges are byte offsets into
the fragment; everything outside them is HTML-escaped here, so a snippet can be put
in a page as it is. A page matched by its title or host alone has no passage to
show: it gets the start of its text.
"""

from __future__ import annotations

import html
import re

import tantivy

SNIPPET_CHARS = 240


_SPACE = re.compile(r"\s+")


def _piece(raw: bytes) -> str:
    # Line breaks between paragraphs become spaces: a snippet is one line.
    return html.escape(_SPACE.sub(" ", raw.decode("utf-8", "replace")), quote=True)


def render(fragment: str, ranges: list[tuple[int, int]]) -> str:
    """``fragment`` HTML-escaped, with each byte range wrapped in ``<mark>``."""
    raw = fragment.encode("utf-8")
    out: list[str] = []
    at = 0
    for start, end in sorted(ranges):
        if start < at or end <= start:
            continue
        out.append(_piece(raw[at:start]))
        out.append("<mark>")
        out.append(_piece(raw[start:end]))
        out.append("</mark>")
        at = end
    out.append(_piece(raw[at:]))
    return "".join(out)


def lead(text: str, chars: int = SNIPPET_CHARS) -> str:
    """The start of ``text``, cut at a word boundary, escaped."""
    text = " ".join(text[: chars * 2].split())
    if len(text) > chars:
        cut = text.rfind(" ", 0, chars)
        text = text[: cut if cut > chars // 2 else chars] + " …"
    return html.escape(text, quote=True)


def snippet(generator: tantivy.SnippetGenerator | None, doc: tantivy.Document, text: str) -> str:
    if generator is not None:
        s = generator.snippet_from_doc(doc)
        fragment = s.fragment()
        ranges = [(r.start, r.end) for r in s.highlighted()]
        if fragment and ranges:
            where = s.fragment_range()
            body = render(fragment.strip(), _shift(fragment, ranges))
            before = "… " if where.start > 0 else ""
            after = " …" if where.end < len(text.encode("utf-8")) else ""
            return before + body + after
    return lead(text)


def _shift(fragment: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ranges moved to match ``fragment.strip()`` (leading whitespace removed)."""
    skip = len(fragment.encode("utf-8")) - len(fragment.lstrip().encode("utf-8"))
    return [(s - skip, e - skip) for s, e in ranges if s >= skip]
