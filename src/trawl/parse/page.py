"""Parse one fetched page: the work a parse worker process does for every page.

Pure and picklable in and out: ``parse_page(job, options) -> ParsedPage``. One Lexbor
parse is shared by every step: directives, base URL, canonical, links, main text.
What to do with the result (dedup, scope, storage) is the parse stage's business.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from trawl import urls
from trawl.dedup.minhash import MinHasher, Signature
from trawl.errors import UrlError
from trawl.parse import directives, tdm
from trawl.parse.charset import decode_page
from trawl.parse.extract import extract_from_tree, parse_html
from trawl.parse.language import identify
from trawl.parse.quality import QualitySignals, quality_signals
from trawl.parse.tdm import TdmDecision

_LINK_SELECTOR = "a[href], area[href], frame[src], iframe[src], link[href]"
# link rel values that name another page worth crawling.
_LINK_RELS = frozenset({"canonical", "alternate", "next", "prev", "previous"})


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


@dataclass(frozen=True, slots=True)
class PageInput:
    """What a parse worker gets: the final URL, the response headers, the decoded body."""

    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    content_type: str | None = None


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
    directives: frozenset[str] = frozenset()
    content_hash: str | None = None  # of the main text; None when there is no text
    license: str | None = None
    nofollow_links: int = 0  # links skipped for rel=nofollow
    bad_links: int = 0  # hrefs that are not crawlable URLs
    links_over_cap: int = 0  # followable hrefs past ``max_links`` (not joined nor kept)
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


def text_hash(text: str) -> str:
    """The exact-duplicate key of a text: SHA-256 of its whitespace-normalised form."""
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
    decoded = decode_page(job.body, content_type=job.content_type)
    html, encoding = decoded.text, decoded.encoding
    if decoded.problem is not None:
        return ParsedPage(url=job.url, encoding=encoding, not_text=decoded.problem)
    try:
        tree = parse_html(html)
    except Exception:
        return ParsedPage(url=job.url, encoding=encoding, error="unparseable HTML")

    metas = _metas(tree)
    found = directives.from_header(_header_values(job.headers, "x-robots-tag"), options.agents)
    found |= directives.from_meta(metas, options.agents)

    base = _base_url(tree, job.url)
    links, canonical, license_url, nofollowed, bad, over_cap = _links(tree, base, options, found)
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
        canonical=canonical,
        links=links,
        directives=frozenset(found),
        content_hash=text_hash(text) if text.strip() else None,
        license=license_url,
        nofollow_links=nofollowed,
        bad_links=bad,
        links_over_cap=over_cap,
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


def _links(
    tree: LexborHTMLParser, base: str, options: ParseOptions, found: set[str]
) -> tuple[tuple[str, ...], str | None, str | None, int, int, int]:
    """(links, canonical, license, rel=nofollow skipped, bad hrefs, hrefs over the cap).

    Past ``options.max_links`` links, hrefs are only counted (a repeat of a kept href
    is not): joining and keeping a million of them would cost seconds here and
    flood the crawl process that receives them.
    """
    follow = "nofollow" not in found
    out: dict[str, None] = {}
    kept: set[str] = set()  # the raw hrefs behind ``out`` (with a cap)
    cap = options.max_links or None
    canonical = license_url = None
    nofollowed = bad = over = 0
    join = urls.join
    strip = options.strip_tracking
    for node in tree.css(_LINK_SELECTOR):
        attrs = node.attributes
        tag = node.tag
        raw = attrs.get("src") if tag in ("frame", "iframe") else attrs.get("href")
        if not raw:
            continue
        rel = (attrs.get("rel") or "").lower().split()
        if tag == "link":
            if "canonical" in rel and canonical is None:
                try:
                    canonical = join(base, raw, strip_tracking=strip)
                except UrlError:
                    bad += 1
            if "license" in rel and license_url is None:
                license_url = raw.strip()
            if not _LINK_RELS.intersection(rel):
                continue
        elif "license" in rel and license_url is None:
            license_url = raw.strip()
        if not follow:
            continue
        if "nofollow" in rel and not options.follow_nofollow_links:
            nofollowed += 1
            continue
        if cap is not None and len(out) >= cap:
            if raw not in kept:
                over += 1
            continue
        try:
            out[join(base, raw, strip_tracking=strip)] = None
        except UrlError:
            bad += 1
            continue
        if cap is not None:
            kept.add(raw)
    return tuple(out), canonical, license_url, nofollowed, bad, over
