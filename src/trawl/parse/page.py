"""Parse one fetched page: the work a parse worker process does for every page.

Pure and picklable in and out: ``parse_page(job, options) -> ParsedPage``. One Lexbor
parse is shared by every step: directives, base URL, canonical, links, main text.
What to do with the result (dedup, scope, storage) is the parse stage's business.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trawl import urls
from trawl.dedup.minhash import MinHasher, Signature
from trawl.errors import UrlError
from trawl.parse import directives, tdm
from trawl.parse.charset import decode_page
from trawl.parse.quality import QualitySignals, quality_signals
from trawl.parse.tdm import TdmDecision
from trawl.pickling import by_fields

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser
    from selectolax.lexbor import LexborNode as Node

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): the Python paths
    _native = None  # type: ignore[assignment]

# A rendered DOM is serialised as UTF-8 (archive/warc.py stores it with this type).
_DOM_TYPE = "text/html; charset=utf-8"
_LINK_SELECTOR = "a[href], area[href], frame[src], iframe[src], link[href]"
# link rel values that name another page worth crawling.
_LINK_RELS = frozenset({"canonical", "alternate", "next", "prev", "previous"})
ANCHOR_CHARS = 100  # anchor text kept per link for the link graph


@by_fields
@dataclass(frozen=True, slots=True)
class ParseOptions:
    """What the crawl asks of the parser."""

    agents: tuple[str, ...] = ("trawl",)
    follow_nofollow_links: bool = False
    strip_tracking: bool = False
    detect_language: bool = True
    quality: bool = False  # compute quality signals (training crawls, or thresholds set)
    near: MinHasher | None = None  # compute the near-duplicate signature
    max_links: int = 5000  # links kept per page (0: all); the rest are only counted
    max_tags: int = 0  # tags of a page parsed (0: all): ``MemoryLimits.parse_tags``
    link_graph: bool = False  # keep anchor texts, and the links not followed


@by_fields
@dataclass(frozen=True, slots=True)
class PageInput:
    """What a parse worker gets: the final URL, the response headers, the decoded body.

    For a page rendered in a browser the body is the rendered DOM (UTF-8, whatever the
    response said), so its text, links and signature are what the scripts built; the
    response's headers (X-Robots-Tag, tdm-reservation) still apply.
    """

    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    content_type: str | None = None
    rendered: bool = False


@by_fields
@dataclass(frozen=True, slots=True)
class ParsedPage:
    url: str
    title: str = ""
    text: str = ""
    encoding: str = ""
    language: str | None = None
    language_confidence: float | None = None
    base_url: str = ""
    canonical: str | None = None
    links: tuple[str, ...] = ()
    # The link graph (``ParseOptions.link_graph``): the anchor text of each of
    # ``links`` (same order), and the links not followed (rel=nofollow, or every link
    # of a nofollow page) as (URL, anchor text), as capped as ``links``.
    anchors: tuple[str, ...] = ()
    unfollowed: tuple[tuple[str, str], ...] = ()
    directives: frozenset[str] = frozenset()
    content_hash: str | None = None  # of the main text; None when there is no text
    license: str | None = None
    nofollow_links: int = 0  # links skipped for rel=nofollow
    bad_links: int = 0  # hrefs that are not crawlable URLs
    links_over_cap: int = 0  # followable hrefs past ``max_links`` (not joined nor kept)
    tags_over_cap: int = 0  # tags past ``max_tags``: the rest of the page was not parsed
    tdm: TdmDecision | None = None  # from the page's own header or meta (meta wins)
    quality: QualitySignals | None = None
    near_signature: Signature | None = None  # MinHash of the main text
    error: str | None = None
    # Why the body is not a text document ("binary content", "undecodable text"):
    # then nothing else is taken from it.
    not_text: str | None = None
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def noindex(self) -> bool:
        return "noindex" in self.directives

    @property
    def nofollow(self) -> bool:
        return "nofollow" in self.directives


# The ASCII characters ``str.split()`` splits on, each made a space.
_ASCII_SPACES = bytes(0x20 if chr(i).isspace() else i for i in range(128)) + bytes(range(128, 256))


def text_hash(text: str) -> str:
    """The exact-duplicate key of a text: SHA-256 of its whitespace-normalised form
    (``" ".join(text.split())``, UTF-8)."""
    if _native is not None:
        # One pass in C for an ASCII text (the loop below searches for "  " in 40 kB of
        # single-spaced words, which tests every position).
        words = _native.ascii_words(text)
        if words is not None:
            return hashlib.sha256(words).hexdigest()
    if text.isascii():
        # The same bytes without a Python object per word (a page's 7,000 words): every
        # whitespace character a space, runs of spaces halved until single.
        data = text.encode("ascii").translate(_ASCII_SPACES)
        while b"  " in data:
            data = data.replace(b"  ", b" ")
        return hashlib.sha256(data.strip(b" ")).hexdigest()
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def parse_page(job: PageInput, options: ParseOptions) -> ParsedPage:
    """Everything the crawl keeps from one page. Never raises on page content."""
    try:
        return _parse(job, options)
    except Exception as exc:  # hostile input must never stop the stage
        return ParsedPage(url=job.url, error=f"parse error: {type(exc).__name__}: {exc}"[:300])


def _header_values(headers: Sequence[tuple[str, str]], name: str) -> list[str]:
    name = name.lower()
    return [v for k, v in headers if k.lower() == name]


def _parse(job: PageInput, options: ParseOptions) -> ParsedPage:
    # Imported here: the crawl process holds this module's records (its results, their
    # options) but parses in its workers, and Lexbor and CLD2 are some 6 MB of RSS.
    from trawl.parse.extract import extract_from_tree, parse_markup
    from trawl.parse.language import identify

    content_type = _DOM_TYPE if job.rendered else job.content_type
    decoded = decode_page(job.body, content_type=content_type)
    html, encoding = decoded.text, decoded.encoding
    if decoded.problem is not None:
        return ParsedPage(url=job.url, encoding=encoding, not_text=decoded.problem)
    try:
        tree, tags_cut = parse_markup(html, options.max_tags)
    except Exception:
        return ParsedPage(url=job.url, encoding=encoding, error="unparseable HTML")
    del html, decoded  # the tree holds the page now (up to 10 MiB less held)

    metas = _metas(tree)
    found = directives.from_header(_header_values(job.headers, "x-robots-tag"), options.agents)
    found |= directives.from_meta(metas, options.agents)

    base = _base_url(tree, job.url)
    found_links = _links(tree, base, options, found)
    extraction = extract_from_tree(tree, url=job.url)
    text = extraction.text or _visible_text(tree)
    language = None
    if options.detect_language and text:
        language = identify(text)
    tdm_header = tdm.from_headers(job.headers)
    tdm_meta = tdm.from_meta(metas)
    return ParsedPage(
        url=job.url,
        title=extraction.title,
        text=text,
        encoding=encoding,
        language=language.code if language else None,
        language_confidence=language.confidence if language else None,
        base_url=base,
        canonical=found_links.canonical,
        links=tuple(found_links.links),
        anchors=tuple(found_links.anchors),
        unfollowed=tuple(found_links.unfollowed.items()),
        directives=frozenset(found),
        content_hash=text_hash(text) if text.strip() else None,
        license=found_links.license,
        nofollow_links=found_links.nofollowed,
        bad_links=found_links.bad,
        links_over_cap=found_links.over_cap,
        tags_over_cap=tags_cut,
        tdm=tdm_meta or tdm_header,
        quality=quality_signals(text) if options.quality and text else None,
        near_signature=options.near.signature(text) if options.near and text else None,
        meta={name.lower(): content for name, content in metas if name},
    )


_INVISIBLE = ["script", "style", "noscript", "template", "head", "svg", "iframe", "object"]


def _visible_text(tree: LexborHTMLParser) -> str:
    """A short page has no article to find: keep its visible text, line by line.

    Runs last: it strips invisible elements from the tree, which is not used again.
    """
    body = tree.body
    if body is None:
        return ""
    tree.strip_tags(_INVISIBLE)
    raw = body.text(deep=True, separator="\n", strip=True)
    lines = (" ".join(line.split()) for line in raw.splitlines())
    return "\n".join(line for line in lines if line)[:100_000]


def _metas(tree: LexborHTMLParser) -> list[tuple[str, str]]:
    out = []
    for node in tree.css("meta[name][content]"):
        attrs = node.attributes
        out.append((attrs.get("name") or "", attrs.get("content") or ""))
    return out


def _base_url(tree: LexborHTMLParser, url: str) -> str:
    node = tree.css_first("base[href]")
    if node is not None:
        href = node.attributes.get("href")
        if href:
            try:
                return urls.join(url, href)
            except UrlError:
                pass
    return url


@dataclass(slots=True)
class _Links:
    """What ``_links`` finds."""

    links: dict[str, None] = field(default_factory=dict)  # followed, in order, once each
    anchors: list[str] = field(default_factory=list)  # of ``links`` (link graph only)
    unfollowed: dict[str, str] = field(default_factory=dict)  # URL -> anchor (graph only)
    canonical: str | None = None
    license: str | None = None
    nofollowed: int = 0  # rel=nofollow links not followed
    bad: int = 0  # hrefs that are not crawlable URLs
    over_cap: int = 0  # followable hrefs past the cap (not joined nor kept)


def _anchor(node: Node, tag: str) -> str:
    """A link's anchor text: its text, else its title, else an image's alt text."""
    attrs = node.attributes
    if tag == "area":
        text = attrs.get("alt") or ""
    elif tag == "a":
        text = node.text(deep=True, separator=" ") or attrs.get("title") or ""
        if not text.strip():
            img = node.css_first("img[alt]")
            text = (img.attributes.get("alt") or "") if img is not None else ""
    else:
        text = attrs.get("title") or ""
    return " ".join(text.split())[:ANCHOR_CHARS]


def _links(tree: LexborHTMLParser, base: str, options: ParseOptions, found: set[str]) -> _Links:
    """The page's links, canonical and license, and the counts of what was not kept.

    Past ``options.max_links`` links, hrefs are only counted (a repeat of a kept href
    is not): joining and keeping a million of them would cost seconds here and
    flood the crawl process that receives them. With the link graph on, the links
    not followed are kept too (as many), with every link's anchor text.
    """
    out = _Links()
    follow = "nofollow" not in found
    kept: set[str] = set()  # the raw hrefs behind ``out.links`` (with a cap)
    cap = options.max_links or None
    join = urls.join
    strip = options.strip_tracking
    graph = options.link_graph
    for node in tree.css(_LINK_SELECTOR):
        attrs = node.attributes
        tag = node.tag or ""
        raw = attrs.get("src") if tag in ("frame", "iframe") else attrs.get("href")
        if not raw:
            continue
        rel = (attrs.get("rel") or "").lower().split()
        if tag == "link":
            if "canonical" in rel and out.canonical is None:
                try:
                    out.canonical = join(base, raw, strip_tracking=strip)
                except UrlError:
                    out.bad += 1
            if "license" in rel and out.license is None:
                out.license = raw.strip()
            if not _LINK_RELS.intersection(rel):
                continue
        elif "license" in rel and out.license is None:
            out.license = raw.strip()
        if not follow or ("nofollow" in rel and not options.follow_nofollow_links):
            out.nofollowed += follow
            if graph and (cap is None or len(out.unfollowed) < cap):
                try:
                    target = join(base, raw, strip_tracking=strip)
                except UrlError:
                    continue
                if target not in out.unfollowed:
                    out.unfollowed[target] = _anchor(node, tag)
            continue
        if cap is not None and len(out.links) >= cap:
            if raw not in kept:
                out.over_cap += 1
            continue
        try:
            target = join(base, raw, strip_tracking=strip)
        except UrlError:
            out.bad += 1
            continue
        if target not in out.links:
            out.links[target] = None
            if graph:
                out.anchors.append(_anchor(node, tag))
        if cap is not None:
            kept.add(raw)
    if graph:
        for target in out.links:
            out.unfollowed.pop(target, None)  # followed elsewhere on the page
    return out
