"""Main-text extraction for the parse stage: the article's text and the page title.

Runs on every crawled page, in the parse workers, on a Lexbor DOM (selectolax)
that the parse stage shares with link extraction. The pipeline:

1. ``parse_html`` parses with the nesting guard (``_extract_guard``), so a hostile
   page cannot make the parse quadratic.
2. One read-only walk flattens the DOM into arrays and text lines (``_extract_dom``).
3. Readability-style scoring picks the article container, its siblings, and cleans
   boilerplate out of it (``_extract_score``); when that leaves under
   ``_MIN_ARTICLE_CHARS`` it relaxes its filters, as Readability does.
4. The chosen lines become the text, one block per line; a leading line repeating
   the title is dropped (the title is its own field).

It never raises on page content: a page with no article gives an empty text.
"""

from __future__ import annotations

from dataclasses import dataclass

from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser, LexborNode

from trawl.parse._extract_dom import Dom
from trawl.parse._extract_guard import bound_nesting, bound_tags
from trawl.parse._extract_score import Options, article_lines
from trawl.parse._extract_title import page_title, same_heading, title_forms
from trawl.parse._extract_walk import walk
from trawl.parse.charset import decode_html

__all__ = ["Extraction", "extract", "extract_from_tree", "parse_html", "parse_markup"]

# Past this many elements the rest of a page is not read (a 5 MB page has ~100k).
_MAX_ELEMENTS = 250_000
# Readability's threshold: a shorter result means the filters were too strict.
_MIN_ARTICLE_CHARS = 500
_RELAXED = (
    Options(),
    Options(strip_unlikely=False),
    Options(strip_unlikely=False, weight_classes=False),
    Options(strip_unlikely=False, weight_classes=False, clean_conditionally=False),
)
_CELL_TAGS = frozenset({"td", "th"})
# How many leading lines may repeat the headline (kicker, headline, dek order varies).
_TITLE_LINES = 3


@dataclass(frozen=True, slots=True)
class Extraction:
    """What the extractor found: plain strings only, so it pickles across processes."""

    title: str
    text: str


def parse_html(html: str) -> LexborHTMLParser:
    """Parse with the nesting guard; the parse stage shares this tree with links."""
    return parse_markup(html, 0)[0]


def parse_markup(html: str, max_tags: int) -> tuple[LexborHTMLParser, int]:
    """Parse with the nesting guard, at most ``max_tags`` tags of it (0: all); returns
    the tree and how many tags were left out (``_extract_guard.bound_tags``).

    The text is encoded once, here, as selectolax would do it (UTF-8, lone surrogates
    dropped): the guards scan those bytes and Lexbor parses them. Lexbor's mutation
    events are off: they serve scripts' DOM edits (such as ``<selectedcontent>``
    mirroring), which a crawler never runs (a 2 % saving in instructions, measured).
    """
    data = html.encode("utf-8", errors="ignore")
    tags = data.count(b"<")  # once, for both guards
    data, cut = bound_tags(data, max_tags, tags)
    data = bound_nesting(data, tags=tags - cut)
    return LexborHTMLParser(data, options=LexborDocumentOptions.WO_EVENTS), cut


def extract(html: str | bytes, *, url: str | None = None) -> Extraction:
    """Title and main text of an HTML page (bytes are decoded per ``decode_html``)."""
    if isinstance(html, bytes):
        html, _encoding = decode_html(html, content_type=None)
    try:
        tree = parse_html(html)
    except Exception:  # Lexbor refuses some inputs (e.g. encoding errors): no text
        return Extraction(title="", text="")
    return extract_from_tree(tree, url=url)


def extract_from_tree(tree: LexborHTMLParser, *, url: str | None = None) -> Extraction:
    """Title and main text from an already parsed tree; the tree is not modified.

    ``url`` is accepted for the caller's symmetry with the other parse steps; the
    extractor itself uses no per-site knowledge.
    """
    start: LexborNode | None = tree.body or tree.root
    if start is None:
        return Extraction(title=page_title(tree, ""), text="")
    dom = walk(start, max_elements=_MAX_ELEMENTS)
    h1 = _first_heading(dom)
    title = page_title(tree, h1)
    return Extraction(title=title, text=_article_text(dom, title_forms(title, h1)))


def _first_heading(dom: Dom) -> str:
    tags = dom.tag
    for text, owner in zip(dom.line_text, dom.line_owner, strict=True):
        if owner >= 0 and tags[owner] == "h1":
            return text
    return ""


def _article_text(dom: Dom, titles: set[str]) -> str:
    best: list[int] = []
    best_chars = -1
    for options in _RELAXED:
        lines = article_lines(dom, options)
        chars = sum(len(dom.line_text[i]) for i in lines)
        if chars > best_chars:
            best, best_chars = lines, chars
        if chars >= _MIN_ARTICLE_CHARS:
            break
    for i, line in enumerate(best[:_TITLE_LINES]):
        if same_heading(dom.line_text[line], titles):
            del best[i]
            break
    return _render(dom, best)


def _render(dom: Dom, lines: list[int]) -> str:
    """One line per block; the cells of a table row share one line, " | " between them."""
    tags, parent, owners, texts = dom.tag, dom.parent, dom.line_owner, dom.line_text
    out: list[str] = []
    row = -1
    for line in lines:
        owner = owners[line]
        cell_row = parent[owner] if tags[owner] in _CELL_TAGS else -1
        if cell_row >= 0 and cell_row == row:
            out[-1] = f"{out[-1]} | {texts[line]}"
        else:
            out.append(texts[line])
        row = cell_row
    return "\n".join(out)
