"""The page title: ``<title>``, trimmed of a site name only when the page confirms it.

"Article headline | Site" is the usual shape, but a separator inside a real headline
("Q&A - the answer") is common too, so a part is cut off only when og:title or the
first <h1> says the shorter form is the headline. A site name in front ("Site -
Headline") is handled the same way, under the same confirmation.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

# Separators sites put between a headline and their name; spaces around them are
# required for the dash-like ones so that hyphenated words are not split.
_SEPARATOR = re.compile(r"\s+[|\-–—:·•»~/]\s+|\s*[|·•»]\s*|:\s+")


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _meta_title(tree: LexborHTMLParser) -> str:
    head = tree.head
    if head is None:
        return ""
    node = head.css_first('meta[property="og:title"], meta[name="og:title"]')
    if node is None:
        return ""
    return " ".join((node.attributes.get("content") or "").split())


def _title_element(tree: LexborHTMLParser) -> str:
    head = tree.head
    node = head.css_first("title") if head is not None else None
    if node is None:
        node = tree.css_first("title")
    return " ".join(node.text().split()) if node is not None else ""


def choose_title(title: str, og_title: str, h1: str) -> str:
    """Apply the title rule to the three sources (each already whitespace-collapsed)."""
    if not title:
        return og_title or h1
    confirmations = {_normal(t) for t in (og_title, h1) if t}
    if not confirmations or _normal(title) in confirmations:
        return title
    separators = list(_SEPARATOR.finditer(title))
    # Prefer the longest confirmed form: drop as little as possible.
    for separator in reversed(separators):
        head = title[: separator.start()].strip()
        if head and _normal(head) in confirmations:
            return head
    for separator in separators:
        tail = title[separator.end() :].strip()
        if tail and _normal(tail) in confirmations:
            return tail
    return title


def page_title(tree: LexborHTMLParser, first_h1: str) -> str:
    return choose_title(_title_element(tree), _meta_title(tree), first_h1)


def same_heading(line: str, titles: set[str]) -> bool:
    """Whether an article line repeats the page title (compared loosely)."""
    return _normal(line) in titles


def title_forms(*titles: str) -> set[str]:
    return {_normal(t) for t in titles if t}
