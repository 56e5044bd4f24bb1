"""Keep hostile nesting from making the HTML parse quadratic.

An HTML5 tree builder checks "is there a <p> in button scope" (and, for <li>, walks
the list-item scope) on every block start tag, walking the stack of open elements.
With the elements nested d deep that walk is O(d), so d nested <div>s cost O(d**2):
Lexbor takes about 100 s on 100,000 nested divs (measured; 20,000 take 1.3 s).

The guard is two-staged so ordinary pages pay almost nothing: a page with few tags
cannot nest deeply (one ``str.count``); only a page with many tags is scanned for
the nesting depth of the block tags that can nest, and only a page nested deeper
than any real page is rewritten, dropping the start and end tags past the limit
(their text stays, flattened into the element at the limit).
"""

from __future__ import annotations

import re

# Below this many "<" the worst nesting costs Lexbor some tens of ms: not worth a scan.
# (Real article pages hold 150 to 3,300; see bench/bench_extract.py.)
_CHEAP_TAG_COUNT = 4000
# Real pages nest block elements 10 to 60 deep; past this we flatten.
MAX_BLOCK_DEPTH = 400

# Block elements that nest (p, li, dd, dt and headings close their own kind instead).
_NESTING_TAG = re.compile(
    rb"<(/?)(?:div|section|article|aside|blockquote|header|footer|nav|main|figure|"
    rb"figcaption|fieldset|details|summary|address|center|dir|menu|hgroup|ul|ol|dl|form|"
    rb"listing|pre|search|dialog)(?=[\s/>])",
    re.IGNORECASE,
)


def bound_tags(html: bytes, max_tags: int, tags: int) -> tuple[bytes, int]:
    """``html`` (UTF-8, holding ``tags`` tags: ``<``) itself, or its beginning before
    its tag number ``max_tags + 1``, and how many tags were cut off (0: none;
    ``max_tags`` 0: no bound).

    Lexbor's tree costs some 320 bytes a tag (a page of 10 MiB of links held 250 MB
    of it, and the extraction walk more on top): what bounds a parse worker's memory
    is the tags it builds a tree of, not the bytes. Cut at a ``<``, the page ends as
    a truncated one does: Lexbor closes what is open.
    """
    if not max_tags or tags <= max_tags:
        return html, 0
    at = -1
    find = html.find
    for _ in range(max_tags + 1):
        at = find(b"<", at + 1)
    return html[:at], tags - max_tags


def bound_nesting(
    html: bytes, *, max_depth: int = MAX_BLOCK_DEPTH, tags: int | None = None
) -> bytes:
    """``html`` (UTF-8) itself, or a copy whose block nesting is at most ``max_depth``
    (``tags``: its count of ``<``, if the caller has it).

    Works on the bytes Lexbor is fed: counting a byte is several times cheaper than
    counting a character of a non-ASCII ``str``.
    """
    if (html.count(b"<") if tags is None else tags) <= _CHEAP_TAG_COUNT:
        return html
    depth = deepest = 0
    for match in _NESTING_TAG.finditer(html):
        if match.group(1):
            depth = max(0, depth - 1)
        else:
            depth += 1
            deepest = max(deepest, depth)
    if deepest <= max_depth:
        return html
    return _flatten(html, max_depth)


def _flatten(html: bytes, max_depth: int) -> bytes:
    pieces: list[bytes] = []
    position = depth = 0
    for match in _NESTING_TAG.finditer(html):
        closing = bool(match.group(1))
        if closing:
            depth = max(0, depth - 1)
            drop = depth >= max_depth
        else:
            drop = depth >= max_depth
            depth += 1
        if not drop:
            continue
        tag_end = html.find(b">", match.end())
        tag_end = len(html) if tag_end < 0 else tag_end + 1
        if match.start() < position:  # inside a tag already dropped
            continue
        pieces.append(html[position : match.start()])
        position = tag_end
    pieces.append(html[position:])
    return b"".join(pieces)
