"""One read-only pass over a Lexbor DOM, turning it into flat arrays the scorer reads.

The extractor never walks the DOM twice and never mutates it (the parse stage reuses
the same tree for links). Block elements get pre-order indices, so a subtree is the
index range ``[i, end[i])`` and every parent index is smaller than its children's:
subtree totals are then one reverse sweep, and "is this line inside that element" is
a range test. Inline elements are not recorded (unless their class marks them as
boilerplate, which makes them blocks of their own); their text flows into the line of
the nearest block, which owns it. The walk is iterative (first child / next sibling,
with its own ancestor stack), so 100k-deep documents cost no Python recursion.

This loop runs on every node of every page, so it is written for CPython's speed:
locals rather than attributes, one dict lookup to classify a tag, the subtrees of
nav / aside / footer never entered, class names judged after the walk and only for
elements that hold text, and the per-element counters packed into one integer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from selectolax.lexbor import LexborNode

from trawl.parse._extract_signals import (
    BLOCK_TAGS,
    BOILERPLATE_ROLES,
    BOILERPLATE_TAGS,
    EMBED_TAGS,
    HIDDEN,
    HIDDEN_TOKENS,
    INPUT_TAGS,
    META,
    NO_ATTRIBUTE_TAGS,
    SKIP_TAGS,
    class_weight,
    is_unlikely,
    signature_bits,
)

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): the Python check
    _native = None  # type: ignore[assignment]

# Element flags.
UNLIKELY = 1  # class/id says boilerplate (Readability's "unlikely candidate")
BOILERPLATE = 2  # nav/aside/footer tags or a landmark role that is never article text
SHORT_META = 4  # byline, date, caption, credit: dropped when short

# Per-element counters, packed into one int: 32 bits each (an element holds far fewer
# than 2**32 of anything), so one addition accumulates all of them.
IMAGES, INPUTS, EMBEDS, ITEMS, PARAGRAPHS = 0, 32, 64, 96, 128
_MASK = (1 << 32) - 1

# How each tag is handled, decided by one dict lookup.
_SKIP, _BLOCK, _INLINE, _PLAIN, _LINK, _BREAK, _IMAGE = range(7)
_KIND: dict[str, int] = {tag: _SKIP for tag in SKIP_TAGS}
_KIND.update({tag: _BLOCK for tag in BLOCK_TAGS})
_KIND.update({tag: _PLAIN for tag in NO_ATTRIBUTE_TAGS})
_KIND.update({"a": _LINK, "br": _BREAK, "img": _IMAGE})
_SKIPPED_COUNTER = {tag: 1 << INPUTS for tag in INPUT_TAGS} | {
    tag: 1 << EMBEDS for tag in EMBED_TAGS
}
_OWN_COUNTER = {"li": 1 << ITEMS, "p": 1 << PARAGRAPHS}

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


@dataclass(slots=True)
class Dom:
    """Flat view of a document: block elements by pre-order index, lines in order."""

    tag: list[str] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)  # exclusive end of the subtree range
    flags: list[int] = field(default_factory=list)
    inherited: list[int] = field(default_factory=list)  # own flags | ancestors' flags
    weight: list[int] = field(default_factory=list)  # class/id weight, Readability-style
    signature: list[str] = field(default_factory=list)  # "class id", lower case
    # Subtree totals.
    chars: list[int] = field(default_factory=list)
    link_chars: list[int] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)  # packed IMAGES ... PARAGRAPHS
    # Lines in document order.
    line_text: list[str] = field(default_factory=list)
    line_owner: list[int] = field(default_factory=list)
    line_links: list[int] = field(default_factory=list)

    def count(self, index: int, what: int) -> int:
        return (self.counts[index] >> what) & _MASK


def _verdict(signature: str, token_cache: dict[str, int]) -> tuple[bool, int, int]:
    """(hidden, class weight, flags) for a "class id" signature."""
    bits = signature_bits(signature, token_cache)
    if bits & HIDDEN:
        return True, 0, 0
    flags = (UNLIKELY if is_unlikely(bits) else 0) | (SHORT_META if bits & META else 0)
    return False, class_weight(bits), flags


def _is_hidden(attrs: dict[str, str | None]) -> bool:
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style or "") is not None


def _is_collapsed_py(text: str) -> bool:
    """Whether white-space collapsing would leave ``text`` as it is (a cheap check that
    spares most lines of minified pages the split and join)."""
    return bool(text) and not (
        text[0].isspace()
        or text[-1].isspace()
        or "  " in text
        or "\n" in text
        or "\t" in text
        or "\r" in text
        or "\xa0" in text
        or "\f" in text
        or "\v" in text
    )


# The same check in C when built: CPython's search for "  " in a line of single-spaced
# words tests every position, which cost more than the rest of the line's handling.
_is_collapsed: Callable[[str], bool] = _is_collapsed_py if _native is None else _native.is_collapsed


def _flush(dom: Dom, pieces: list[str], owner: int, links: int, in_pre: bool) -> None:
    raw = "".join(pieces)
    pieces.clear()
    # <pre> keeps its own line breaks; elsewhere all white space is one space.
    for chunk in raw.split("\n") if in_pre else (raw,):
        text = chunk if _is_collapsed(chunk) else " ".join(chunk.split())
        if not text:
            continue
        charged = min(links, len(text))
        links -= charged  # link text of a <pre> is charged to its first lines
        dom.line_text.append(text)
        dom.line_owner.append(owner)
        dom.line_links.append(charged)
        dom.chars[owner] += len(text)
        dom.link_chars[owner] += charged


def walk_python(
    start: LexborNode,
    *,
    max_elements: int,
    verdicts: dict[str, tuple[bool, int, int]] | None = None,
    token_cache: dict[str, int] | None = None,
) -> Dom:
    """Walk the subtree under ``start`` (normally ``<body>``) into a ``Dom``
    (``verdicts``, ``token_cache``: class verdicts kept from other pages, if any).

    The reference walk: ``_extract_walk.walk`` runs the same in C when it can
    (``trawl._native.DomWalker``, which must give an equal ``Dom``).
    """
    dom = Dom()
    tags, parents, ends, flags_of = dom.tag, dom.parent, dom.end, dom.flags
    signatures, chars, links, counts = (
        dom.signature,
        dom.chars,
        dom.link_chars,
        dom.counts,
    )
    # Class strings and their tokens repeat within a page: judge each once.
    verdicts = {} if verdicts is None else verdicts
    token_cache = {} if token_cache is None else token_cache
    pieces: list[str] = []
    link_len = 0
    in_link = 0
    in_pre = 0
    owner = -1
    # Ancestors descended into, and what closing each means: a block index, or -1
    # for an inline element, -2 for a link.
    ancestors: list[LexborNode] = []
    closers: list[int] = []
    node: LexborNode | None = start
    while node is not None:
        tag = node.tag or ""
        descend = False
        if tag == "-text":
            text = node.text_content
            if text:
                if text.isspace():
                    # Indentation between tags: only a word separator inside a line.
                    if pieces:
                        pieces.append(" ")
                else:
                    pieces.append(text)
                    if in_link:
                        link_len += len(text.strip())
        elif tag[:1] != "-":  # not a comment or doctype
            kind = _KIND.get(tag, _INLINE)
            closer = -1
            leaf = False
            if kind == _SKIP:
                if owner >= 0 and tag in _SKIPPED_COUNTER:
                    counts[owner] += _SKIPPED_COUNTER[tag]
            elif kind == _BREAK:
                if pieces:
                    _flush(dom, pieces, owner, link_len, in_pre > 0)
                    link_len = 0
            elif kind == _IMAGE:
                if owner >= 0:
                    counts[owner] += 1 << IMAGES
            elif kind == _PLAIN:
                descend = True
            elif kind == _LINK:
                descend = True
                closer = -2
                in_link += 1
            else:
                flags = 0
                signature = ""
                attrs = node.attributes
                continue_walk = True
                if attrs:
                    top = owner < 0  # the start node is never dropped
                    if (
                        not top
                        and ("hidden" in attrs or "style" in attrs or "aria-hidden" in attrs)
                        and _is_hidden(attrs)
                    ):
                        continue_walk = False
                    else:
                        signature = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
                        if len(signature) > 1:
                            signature = signature.lower()
                            if kind == _INLINE and "-" not in tag:
                                # An inline element is judged now: a flag makes it a block.
                                verdict = verdicts.get(signature)
                                if verdict is None:
                                    verdict = verdicts[signature] = _verdict(signature, token_cache)
                                hidden, _weight, flags = verdict
                                if top:
                                    flags = 0
                                elif hidden:
                                    continue_walk = False
                            elif not top and not HIDDEN_TOKENS.isdisjoint(signature.split()):
                                continue_walk = False
                        role = attrs.get("role")
                        if role and role.lower() in BOILERPLATE_ROLES:
                            flags |= BOILERPLATE
                if continue_walk:
                    descend = True
                    if tag in BOILERPLATE_TAGS:
                        flags |= BOILERPLATE
                    if flags or kind == _BLOCK or "-" in tag or owner < 0:
                        if len(tags) >= max_elements:
                            descend = False
                        else:
                            if pieces:
                                _flush(dom, pieces, owner, link_len, in_pre > 0)
                                link_len = 0
                            closer = len(tags)
                            tags.append(tag)
                            parents.append(owner)
                            ends.append(closer + 1)
                            flags_of.append(flags)
                            signatures.append(signature)
                            chars.append(0)
                            links.append(0)
                            counts.append(_OWN_COUNTER.get(tag, 0))
                            # A landmark that is never the article (nav, footer, ...) is
                            # kept as a leaf: nothing inside it is read, scored or kept.
                            leaf = bool(flags & BOILERPLATE) and owner >= 0
                            owner = closer
                            if tag == "pre":
                                in_pre += 1
            if descend:
                child = None if leaf else node.child
                if child is not None:
                    ancestors.append(node)
                    closers.append(closer)
                    node = child
                    continue
                # An element without children closes at once.
                if closer >= 0:
                    if pieces:
                        _flush(dom, pieces, owner, link_len, in_pre > 0)
                        link_len = 0
                    owner = parents[closer]
                    if tag == "pre":
                        in_pre -= 1
                elif closer == -2:
                    in_link -= 1
        if not ancestors:
            break
        # Climb until a node has a next sibling, closing elements on the way.
        nxt = node.next
        while nxt is None and ancestors:
            node = ancestors.pop()
            closer = closers.pop()
            if closer >= 0:
                if pieces:
                    _flush(dom, pieces, owner, link_len, in_pre > 0)
                    link_len = 0
                ends[closer] = len(tags)
                owner = parents[closer]
                if tags[closer] == "pre":
                    in_pre -= 1
            elif closer == -2:
                in_link -= 1
            if ancestors:
                nxt = node.next
        node = nxt if ancestors else None
    if pieces and owner >= 0:
        _flush(dom, pieces, owner, link_len, in_pre > 0)
    _accumulate(dom)
    _judge_classes(dom, verdicts, token_cache)
    return dom


def native_tables() -> dict[str, Any]:
    """The tables and callables ``trawl._native.DomWalker`` decides with: those of the
    Python walk, so both decide alike (counters as field numbers, not packed bits)."""
    return {
        "kind": dict(_KIND),
        "skipped": {tag: _field(bits) for tag, bits in _SKIPPED_COUNTER.items()},
        "own": {tag: _field(bits) for tag, bits in _OWN_COUNTER.items()},
        "boilerplate_tags": BOILERPLATE_TAGS,
        "hidden_tokens": HIDDEN_TOKENS,
        "boilerplate_roles": BOILERPLATE_ROLES,
        "boilerplate_flag": BOILERPLATE,
        "verdict": _verdict,
        "style_search": _HIDDEN_STYLE.search,
    }


def _judge_classes(
    dom: Dom, verdicts: dict[str, tuple[bool, int, int]], token_cache: dict[str, int]
) -> None:
    """Class/id weights and flags, then flags inherited down the tree.

    Done after the walk and only for elements holding text: an empty element can
    neither be the article nor spoil it, and judging class names is the walk's
    largest cost. (Inline elements were judged during the walk.)
    """
    signatures, chars, flags, parent = dom.signature, dom.chars, dom.flags, dom.parent
    weights = dom.weight = [0] * len(signatures)
    for index, signature in enumerate(signatures):
        if chars[index] and len(signature) > 1:
            verdict = verdicts.get(signature)
            if verdict is None:
                verdict = verdicts[signature] = _verdict(signature, token_cache)
            weights[index] = verdict[1]
            if index:  # the start node is never flagged
                flags[index] |= verdict[2]
    inherited = dom.inherited = flags.copy()
    for index in range(1, len(inherited)):
        inherited[index] |= inherited[parent[index]]


def _accumulate(dom: Dom) -> None:
    """Turn own counts into subtree totals: children have larger indices than parents."""
    parent, chars, links, counts = dom.parent, dom.chars, dom.link_chars, dom.counts
    for i in range(len(parent) - 1, 0, -1):
        p = parent[i]
        chars[p] += chars[i]
        links[p] += links[i]
        counts[p] += counts[i]


def _field(bits: int) -> int:
    """Which packed counter (0 for IMAGES ... 4 for PARAGRAPHS) a single bit adds to."""
    return (bits.bit_length() - 1) // 32
