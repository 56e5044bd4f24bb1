"""Choose the article's lines from a ``Dom``: Readability's scoring on flat arrays.

Readability (arc90, later Mozilla's Readability.js) scores each paragraph by its length
and commas, credits the score to the paragraph's ancestors with decay, discounts each
candidate by its link density, picks the best one, adds qualifying siblings, then
cleans the result: elements with boilerplate names, landmark elements, and blocks
that look like link lists, forms or image galleries are dropped.

Every step here is a pass over arrays the walk built, so the cost is linear in the
number of elements and lines; nothing touches the DOM again.

``article_lines_python`` is the reference; ``article_lines`` runs the same in C when
``trawl._native`` is built (``csrc/score.c``, which must return the same lines for
every Dom: it hands a Dom it does not reproduce back to Python).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from trawl.parse._extract_dom import (
    BOILERPLATE,
    EMBEDS,
    IMAGES,
    INPUTS,
    ITEMS,
    PARAGRAPHS,
    SHORT_META,
    UNLIKELY,
    Dom,
)
from trawl.parse._extract_signals import HEADING_TAGS, SCORED_TAGS

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): the Python scoring
    _native = None  # type: ignore[assignment]

_TAG_BONUS = {
    "div": 5,
    "pre": 3,
    "td": 3,
    "blockquote": 3,
    "address": -3,
    "ol": -3,
    "ul": -3,
    "dl": -3,
    "dd": -3,
    "dt": -3,
    "li": -3,
    "form": -3,
    "h1": -5,
    "h2": -5,
    "h3": -5,
    "h4": -5,
    "h5": -5,
    "h6": -5,
    "th": -5,
}
_SENTENCE_END = re.compile(r"\.( |$)")
_CLEANED_TAGS = frozenset(
    {"div", "section", "table", "ul", "ol", "dl", "form", "fieldset", "header", "figure"}
)
_MIN_PARAGRAPH = 25
_ANCESTOR_LEVELS = 5
# Readability: this many near-best candidates under one ancestor make it the article.
_MIN_RIVALS = 3
# A byline / caption / share element longer than this is prose after all (Readability
# drops "share" elements under 500 characters).
_MAX_META_CHARS = 500


@dataclass(frozen=True, slots=True)
class Options:
    """Which of Readability's filters are on (they are relaxed when too little is left)."""

    strip_unlikely: bool = True
    weight_classes: bool = True
    clean_conditionally: bool = True


def _own_text(dom: Dom, options: Options) -> tuple[dict[int, int], dict[int, int]]:
    """Characters and commas of the lines each element owns directly."""
    chars: dict[int, int] = {}
    commas: dict[int, int] = {}
    inherited = dom.inherited
    mask = BOILERPLATE | UNLIKELY if options.strip_unlikely else BOILERPLATE
    for text, owner in zip(dom.line_text, dom.line_owner, strict=True):
        if inherited[owner] & mask:
            continue
        chars[owner] = chars.get(owner, 0) + len(text)
        # Latin, Arabic and CJK commas (str.count is far cheaper than a regex here).
        found = text.count(",") + text.count("，") + text.count("、") + text.count("،")
        commas[owner] = commas.get(owner, 0) + found
    return chars, commas


def score(dom: Dom, options: Options) -> dict[int, float]:
    """Candidate scores by element index, link density applied."""
    own_chars, own_commas = _own_text(dom, options)
    tags, parent, end, weight = dom.tag, dom.parent, dom.end, dom.weight
    scores: dict[int, float] = {}
    for owner, length in own_chars.items():
        if length < _MIN_PARAGRAPH or tags[owner] not in SCORED_TAGS:
            continue
        points = 1 + own_commas[owner] + min(length / 100, 3.0)
        # Readability turns a block holding only inline content into a paragraph (its
        # parent gets the points) and wraps loose text beside blocks into paragraphs
        # of that block (the block itself gets them).
        ancestor = owner if end[owner] > owner + 1 else parent[owner]
        level = 0
        while ancestor >= 0 and level < _ANCESTOR_LEVELS:
            if ancestor not in scores:
                bonus = _TAG_BONUS.get(tags[ancestor], 0)
                scores[ancestor] = bonus + (weight[ancestor] if options.weight_classes else 0)
            scores[ancestor] += points / (1 if level == 0 else 2 if level == 1 else level * 3)
            ancestor = parent[ancestor]
            level += 1
    chars, links = dom.chars, dom.link_chars
    for index in scores:
        scores[index] *= 1 - links[index] / max(1, chars[index])
    return scores


def _children(dom: Dom, index: int) -> list[int]:
    end = dom.end
    child, stop = index + 1, end[index]
    out = []
    while child < stop:
        out.append(child)
        child = end[child]
    return out


def _link_density(dom: Dom, index: int) -> float:
    return dom.link_chars[index] / max(1, dom.chars[index])


def _best_inside(dom: Dom, scores: dict[int, float], elements: list[int]) -> list[float]:
    """For each element (sorted, disjoint subtrees), the best score in its subtree.

    Readability credits a paragraph to five ancestors only, so in deeply nested markup
    a sibling section full of paragraphs can score nothing itself.
    """
    best = [scores.get(e, 0.0) for e in elements]
    end = dom.end
    for candidate, value in scores.items():
        slot = bisect_right(elements, candidate) - 1
        if slot >= 0 and candidate < end[elements[slot]] and value > best[slot]:
            best[slot] = value
    return best


def choose(dom: Dom, scores: dict[int, float], top: int, *, skip_flags: int) -> list[int]:
    """The element ranges (the article's root plus siblings) that make the article.

    Siblings carrying any of ``skip_flags`` are never added.
    """
    top_score = scores[top]
    parent, end = dom.parent, dom.end
    # Several near-best candidates under one ancestor: the article is that ancestor.
    rivals = [i for i, s in scores.items() if i != top and s >= 0.75 * top_score]
    rivals = sorted(rivals, key=scores.__getitem__, reverse=True)[:5]
    if len(rivals) >= _MIN_RIVALS:
        ancestor = parent[top]
        while ancestor > 0:
            inside = sum(1 for r in rivals if ancestor < r < end[ancestor])
            if inside >= _MIN_RIVALS:
                top = ancestor
                break
            ancestor = parent[ancestor]
    # Climb while the parent scores better (the article's paragraphs were split).
    last = scores.get(top, 0.0)
    ancestor = parent[top]
    while ancestor > 0:
        if ancestor in scores:
            if scores[ancestor] < last / 3:
                break
            if scores[ancestor] > last:
                top = ancestor
                break
            last = scores[ancestor]
        ancestor = parent[ancestor]
    # A lone child says nothing its parent does not: take the parent.
    while parent[top] > 0 and len(_children(dom, parent[top])) == 1:
        top = parent[top]
    top_score = scores.get(top, top_score)
    if parent[top] < 0:
        return [top]
    threshold = max(10.0, top_score * 0.2)
    top_class = dom.signature[top].strip()
    ranges = []
    sentences: set[int] | None = None  # built on first need: one pass over the lines
    siblings = _children(dom, parent[top])
    for sibling, inner in zip(siblings, _best_inside(dom, scores, siblings), strict=True):
        if sibling == top:
            ranges.append(sibling)
            continue
        if dom.flags[sibling] & skip_flags:
            continue
        # Readability's bonus for a sibling styled like the top candidate; such a sibling
        # is also judged by the best candidate inside it (see ``_best_inside``).
        if top_class and dom.signature[sibling].strip() == top_class:
            value = inner + top_score * 0.2
        else:
            value = scores.get(sibling, 0.0)
        if value >= threshold:
            ranges.append(sibling)
        elif not dom.flags[sibling] and (dom.tag[sibling] == "p" or end[sibling] == sibling + 1):
            # A paragraph, or a block of inline content (Readability's div-as-p).
            length, density = dom.chars[sibling], _link_density(dom, sibling)
            if length > 80 and density < 0.25:
                ranges.append(sibling)
            elif 0 < length <= 80 and density == 0:
                if sentences is None:
                    sentences = _sentence_owners(dom, set(siblings))
                if sibling in sentences:
                    ranges.append(sibling)
    return ranges


def _sentence_owners(dom: Dom, owners: set[int]) -> set[int]:
    """Which of ``owners`` own a line that reads as a sentence (a period, then space/end)."""
    return {
        owner
        for text, owner in zip(dom.line_text, dom.line_owner, strict=True)
        if owner in owners and _SENTENCE_END.search(text)
    }


def _drop_conditionally(dom: Dom, index: int, scores: dict[int, float]) -> bool:
    """Readability's clean-conditionally test for one container inside the article."""
    weight = dom.weight[index]
    if weight + scores.get(index, 0.0) < 0:
        return True
    chars = dom.chars[index]
    paragraphs, images = dom.count(index, PARAGRAPHS), dom.count(index, IMAGES)
    items = dom.count(index, ITEMS)
    is_list = dom.tag[index] in ("ul", "ol", "dl")
    density = _link_density(dom, index)
    return (
        (images > 1 and paragraphs / images < 0.5)
        or (not is_list and items - 100 > paragraphs)
        or dom.count(index, INPUTS) > paragraphs // 3
        or (not is_list and chars < _MIN_PARAGRAPH and (images == 0 or images > 2))
        or (not is_list and weight < 25 and density > 0.2)
        # Readability spares lists from the link test; a list that is mostly links is
        # a "more stories" box, though (boilerpipe's link-density feature).
        or (is_list and weight < 25 and density > 0.5)
        or (weight >= 25 and density > 0.5)
        or (dom.count(index, EMBEDS) == 1 and chars < 75)
        or dom.count(index, EMBEDS) > 1
    )


def removed_ranges(
    dom: Dom, ranges: list[int], scores: dict[int, float], options: Options, *, best: int
) -> list[int]:
    """Elements inside the article whose whole subtree is dropped, in document order.

    ``best`` is the best-scoring candidate: neither it nor an element holding it is
    dropped by the conditional cleaning (its subtree totals count the sidebars that
    share its wrapper, so the tests would condemn the article itself).
    """
    out = []
    tags, flags, end = dom.tag, dom.flags, dom.end
    for start in ranges:
        index, stop = start + 1, end[start]
        while index < stop:
            tag = tags[index]
            drop = bool(flags[index] & BOILERPLATE)
            drop = drop or (options.strip_unlikely and bool(flags[index] & UNLIKELY))
            if not drop and flags[index] & SHORT_META:
                drop = dom.chars[index] < _MAX_META_CHARS
            if not drop and tag in HEADING_TAGS:
                drop = dom.weight[index] < 0
            if (
                not drop
                and options.clean_conditionally
                and tag in _CLEANED_TAGS
                and not index <= best < end[index]
            ):
                drop = _drop_conditionally(dom, index, scores)
            if drop:
                out.append(index)
                index = end[index]
            else:
                index += 1
    return out


# The C scorer's view of a tag: the bits of the sets it is in, plus its bonus times 256
# (the bits are csrc/score.h's; the tests compare them).
NATIVE_SCORED, NATIVE_HEADING, NATIVE_CLEANED, NATIVE_LIST, NATIVE_P = 1, 2, 4, 8, 16


def native_tag_codes() -> dict[str, int]:
    """Tag -> code for ``trawl._native.article_lines`` (a tag not here has code 0)."""
    codes: dict[str, int] = {}
    for tag in SCORED_TAGS | HEADING_TAGS | _CLEANED_TAGS | _TAG_BONUS.keys() | {"p"}:
        bits = (
            (NATIVE_SCORED if tag in SCORED_TAGS else 0)
            | (NATIVE_HEADING if tag in HEADING_TAGS else 0)
            | (NATIVE_CLEANED if tag in _CLEANED_TAGS else 0)
            | (NATIVE_LIST if tag in ("ul", "ol", "dl") else 0)
            | (NATIVE_P if tag == "p" else 0)
        )
        codes[tag] = bits + 256 * _TAG_BONUS.get(tag, 0)
    return codes


_TAG_CODES = native_tag_codes()


def article_lines(dom: Dom, options: Options) -> list[int]:
    """Indices of the lines that make the article, in document order: in C when it
    is built (and takes the Dom), else ``article_lines_python``."""
    if _native is not None:
        lines = _native.article_lines(
            dom,
            _TAG_CODES,
            options.strip_unlikely,
            options.weight_classes,
            options.clean_conditionally,
        )
        if lines is not None:
            return lines
    return article_lines_python(dom, options)


def article_lines_python(dom: Dom, options: Options) -> list[int]:
    """Indices of the lines that make the article, in document order (the reference)."""
    scores = score(dom, options)
    if not scores:
        return []
    best = max(scores, key=scores.__getitem__)
    skip = BOILERPLATE | UNLIKELY if options.strip_unlikely else BOILERPLATE
    ranges = choose(dom, scores, best, skip_flags=skip)
    removed = removed_ranges(dom, ranges, scores, options, best=best)
    # Both range lists are sorted and non-overlapping: one sweep keeps it linear.
    end = dom.end
    keep: list[int] = []
    r = d = 0
    for line, owner in enumerate(dom.line_owner):
        while r < len(ranges) and owner >= end[ranges[r]]:
            r += 1
        if r == len(ranges):
            break
        if owner < ranges[r]:
            continue
        while d < len(removed) and owner >= end[removed[d]]:
            d += 1
        if d < len(removed) and owner >= removed[d]:
            continue
        keep.append(line)
    return keep
