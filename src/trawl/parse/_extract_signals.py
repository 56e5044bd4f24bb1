"""The generic signals the extractor reads: tag classes and class/id name patterns.

Nothing here is tuned to a site. The class/id patterns are those the Readability
family (arc90 Readability, Mozilla Readability.js) has used across the web for more
than a decade: words that mark comments, sharing, sidebars, footers and ads, and words
that mark article bodies. The tag sets follow the HTML standard's content categories.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Never visible text, or form machinery: their subtrees are skipped whole.
SKIP_TAGS = _words(
    "script style noscript template svg math canvas iframe object embed video audio "
    "picture map button input select textarea option optgroup datalist head title meta "
    "link base frameset frame dialog"
)
INPUT_TAGS = _words("input select textarea button")
EMBED_TAGS = _words("iframe object embed video audio")

# Elements that start a new line of text (HTML's flow content that is not phrasing).
BLOCK_TAGS = _words(
    "address article aside blockquote body center dd details dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main menu "
    "nav ol p pre section summary table tbody thead tfoot tr td th caption ul legend "
    "search listing"
)
HEADING_TAGS = _words("h1 h2 h3 h4 h5 h6")

# Landmarks that are never the article: their text is dropped wherever they appear.
BOILERPLATE_TAGS = _words("nav aside footer figcaption")
BOILERPLATE_ROLES = _words(
    "navigation menu menubar complementary contentinfo dialog alert alertdialog search tooltip"
)

# Phrasing elements whose attributes are never read (saves a dict per element).
NO_ATTRIBUTE_TAGS = _words(
    "b i em strong u s sup sub small mark abbr code time q cite wbr font big tt var kbd "
    "samp dfn bdi bdo ruby rt rp ins del"
)

# Paragraph-like owners whose text Readability-style scoring counts.
SCORED_TAGS = _words("p pre td div section article main blockquote h2 h3 h4 h5 h6 dd font center")

# Class names for text that is in the DOM but not shown (screen-reader only, toggled).
HIDDEN_TOKENS = _words(
    "hidden is-hidden d-none sr-only visually-hidden visuallyhidden screen-reader-text"
)

# Readability's hint words, matched as substrings of each class / id token (Readability
# matches the whole attribute; none of its words spans a space).
_UNLIKELY_WORDS = (
    "-ad- ai2html banner breadcrumb combx comment community cover-wrap disqus extra footer "
    "gdpr header legends menu related remark replies rss shoutbox sidebar skyscraper social "
    "sponsor supplemental ad-break agegate pagination pager popup yom-remote trending recommend"
)
_MAYBE_WORDS = "and article body column content main shadow"
_NEGATIVE_WORDS = (
    "-ad- hidden banner combx comment com- contact footer gdpr masthead media meta outbrain "
    "promo related scroll share shoutbox sidebar skyscraper sponsor shopping tags widget"
)
_POSITIVE_WORDS = (
    "article body content entry hentry h-entry main page pagination post text blog story"
)

# Article metadata, media captions, share / newsletter / tool bars (Readability's byline
# pattern and its short "share" elements, widened to their modern names): dropped when
# short, since they are not the article's prose.
_META_WORDS = (
    "byline author dateline timestamp published caption credit share sharing newsletter "
    "subscribe signup toolbar tools"
)
_DATE_TOKEN = re.compile(r"(?:^|[-_])date(?:[-_]|s?$)")

# Token verdict bits.
HIDDEN, NEGATIVE, POSITIVE, UNLIKELY_HINT, MAYBE, META = 1, 2, 4, 8, 16, 32


def _word_bits() -> dict[str, int]:
    bits: dict[str, int] = {}
    for words, bit in (
        (_UNLIKELY_WORDS, UNLIKELY_HINT),
        (_MAYBE_WORDS, MAYBE),
        (_NEGATIVE_WORDS, NEGATIVE),
        (_POSITIVE_WORDS, POSITIVE),
        (_META_WORDS, META),
    ):
        for word in words.split():
            bits[word] = bits.get(word, 0) | bit
    # One scan finds non-overlapping words, so a word also carries the bits of the
    # words inside it ("pagination" holds "page").
    return {word: own | _bits_inside(word, bits) for word, own in bits.items()}


def _bits_inside(word: str, bits: dict[str, int]) -> int:
    out = 0
    for other, bit in bits.items():
        if other != word and other in word:
            out |= bit
    return out


def _alternation(words: list[str]) -> str:
    """Words grouped by first letter: Python's re tries far fewer branches per position."""
    groups: dict[str, list[str]] = {}
    for word in sorted(words, key=len, reverse=True):
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    return "|".join(f"{re.escape(first)}(?:{'|'.join(rest)})" for first, rest in groups.items())


_WORD_BITS = _word_bits()
_HINT = re.compile(_alternation(list(_WORD_BITS)))


def token_bits(token: str) -> int:
    """Which hints one lower-case class or id token carries."""
    if token in HIDDEN_TOKENS:
        return HIDDEN
    bits = NEGATIVE if token == "hid" else 0
    if "date" in token and _DATE_TOKEN.search(token):
        bits |= META
    for word in _HINT.findall(token):
        bits |= _WORD_BITS[word]
    return bits


def signature_bits(signature: str, token_cache: dict[str, int]) -> int:
    """OR of the token bits of a "class id" signature; tokens are judged once per page."""
    bits = 0
    for token in signature.split():
        known = token_cache.get(token)
        if known is None:
            known = token_cache[token] = token_bits(token)
        bits |= known
    return bits


def class_weight(bits: int) -> int:
    """Readability's class weight: -25 for a negative hint, +25 for a positive one."""
    return (25 if bits & POSITIVE else 0) - (25 if bits & NEGATIVE else 0)


def is_unlikely(bits: int) -> bool:
    """Readability's unlikely candidate: an unlikely hint and no "maybe" hint."""
    return bool(bits & UNLIKELY_HINT) and not bits & MAYBE
