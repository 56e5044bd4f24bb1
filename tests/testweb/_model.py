"""What the test web serves, as data: resources, links, robots rules, sites.

Every URL of the test web is described by a ``Resource``: its status, headers, body,
the links a parser should find in it, its redirect target, canonical link and robots
directives. The server sends what the resource says (or runs its custom ``serve``
for deliberately broken or slow answers), and ``TestWeb.expected`` walks the same
resources to say what a correct crawl finds, so the two cannot drift apart.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit

from aiohttp import web

from trawl.testing._sample_text import TextGenerator

Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
# A robots directive and the agent it is addressed to (None: every agent).
Directive = tuple[str | None, str]
HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Link:
    """A link a parser should extract: absolute URL (no fragment), rel, element."""

    url: str
    rel: str = ""
    tag: str = "a"
    text: str | None = None  # the anchor text, when the page builder knows it

    @property
    def nofollow(self) -> bool:
        return "nofollow" in self.rel.lower().split()


@dataclass(frozen=True, slots=True)
class SitemapDoc:
    """What a correct crawler reads from a sitemap file: the URLs it admits, the
    sitemaps it queues (an index's), the URLs listed that it must refuse (never
    fetched), and the start of the error it records (``kind`` "none": the file is
    refused whole; the reason then reads ``sitemap not read: <error>``)."""

    kind: str  # "urlset", "index", "text" or "none"
    urls: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Resource:
    """One URL's answer. ``status`` None means no valid HTTP response at all."""

    status: int | None
    content_type: str | None = HTML
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    links: tuple[Link, ...] = ()
    location: str | None = None
    canonical: str | None = None
    directives: tuple[Directive, ...] = ()
    opt_outs: tuple[str, ...] = ()
    license: str | None = None
    serve: Handler | None = None
    oversized: bool = False
    # A document longer than the test crawls' body cap: stored cut at the cap, marked.
    truncated: bool = False
    modeled: bool = True
    note: str = ""
    # A 200 answer that is no document, and the reason a correct crawler records for
    # it (the recorded reason starts with this): "content-encoding ..." for a body in
    # a coding it did not offer or cannot decode, "binary content" for bytes that are
    # not text. Its links are not followed.
    refused: str | None = None
    # A sitemap file: what reading it yields (None: not one).
    sitemap: SitemapDoc | None = None
    # Pages built by their scripts (the JavaScript site, _sites_js.py): an application
    # shell (``--render auto`` renders it), the links and phrases of text only a
    # rendered DOM has, and what its scripts ask the server for (absolute URLs).
    shell: bool = False
    script_links: tuple[Link, ...] = ()
    rendered_text: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()

    def directive_applies(self, token: str, agents: Iterable[str]) -> bool:
        wanted = {a.lower() for a in agents}
        return any(
            d == token and (agent is None or agent.lower() in wanted)
            for agent, d in self.directives
        )

    @property
    def is_html(self) -> bool:
        ctype = (self.content_type or "").split(";")[0].strip().lower()
        return ctype in ("text/html", "application/xhtml+xml") or (
            self.content_type is None and self.body.lstrip()[:1] == b"<"
        )

    def response(self) -> web.StreamResponse:
        """The plain aiohttp answer for this resource."""
        assert self.status is not None
        headers = list(self.headers)
        if self.content_type is not None:
            headers.append(("Content-Type", self.content_type))
        response = web.Response(status=self.status, body=self.body)
        for name, value in headers:
            response.headers.add(name, value)
        return response


@dataclass(frozen=True, slots=True)
class RobotsGroup:
    agents: tuple[str, ...]
    rules: tuple[tuple[Literal["allow", "disallow"], str], ...] = ()
    crawl_delay: float | None = None


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def normal_target(target: str) -> str:
    """Path and query in normal form: escapes of unreserved characters decoded, the
    other escapes in upper case, an empty path made "/" (RFC 3986 6.2.2)."""

    def fix(match: re.Match[str]) -> str:
        char = chr(int(match[1], 16))
        return char if char in _UNRESERVED else f"%{match[1].upper()}"

    target = _ESCAPE.sub(fix, target)
    return target if target.startswith("/") else "/" + target


def normal_url(url: str) -> str:
    """``url`` without fragment, scheme and host in lower case, target in normal form."""
    parts = urlsplit(urldefrag(url).url)
    if parts.scheme not in ("http", "https"):
        return url
    netloc = parts.netloc.lower()
    default = ":80" if parts.scheme == "http" else ":443"
    netloc = netloc[: -len(default)] if netloc.endswith(default) else netloc
    target = normal_target(parts.path + (f"?{parts.query}" if parts.query else ""))
    return f"{parts.scheme.lower()}://{netloc}{target}"


def _normalise(path: str) -> str:
    # Percent-encoding equivalence (RFC 9309 2.2.2): compare decoded-then-encoded.
    return quote(unquote(path), safe="/?=&*$;:@!,'()+~-._")


def _pattern(rule: str) -> re.Pattern[str]:
    anchored = rule.endswith("$")
    body = _normalise(rule[:-1] if anchored else rule)
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(regex + ("\\Z" if anchored else ""))


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """A robots.txt as data: rendered into the file the server sends, and matched
    (RFC 9309: product tokens case-insensitive, longest match, allow wins ties, ``*``
    and ``$``) by the expected-crawl oracle."""

    groups: tuple[RobotsGroup, ...]
    sitemaps: tuple[str, ...] = ()
    comment: str = ""

    def render(self) -> str:
        lines = [f"# {line}" for line in self.comment.splitlines()]
        for group in self.groups:
            if lines:
                lines.append("")
            lines += [f"User-agent: {agent}" for agent in group.agents]
            lines += [f"{kind.capitalize()}: {path}" for kind, path in group.rules]
            if group.crawl_delay is not None:
                lines.append(f"Crawl-delay: {group.crawl_delay:g}")
        lines += [f"Sitemap: {url}" for url in self.sitemaps]
        return "\n".join(lines) + "\n"

    def _groups_for(self, agent: str) -> list[RobotsGroup]:
        token = agent.lower()
        own = [g for g in self.groups if token in (a.lower() for a in g.agents)]
        return own or [g for g in self.groups if "*" in g.agents]

    def allowed_for(self, agent: str, target: str) -> bool:
        if target == "/robots.txt":
            return True
        path = _normalise(target)
        best: tuple[int, bool] = (-1, True)
        for group in self._groups_for(agent):
            for kind, rule in group.rules:
                if not rule:
                    continue
                if _pattern(rule).match(path):
                    candidate = (len(rule), kind == "allow")
                    best = max(best, candidate)
        return best[1]

    def allowed(self, target: str, agents: Iterable[str]) -> bool:
        """Whether every one of ``agents`` may fetch ``target`` (path and query)."""
        return all(self.allowed_for(agent, target) for agent in agents)

    def crawl_delay(self, agent: str) -> float | None:
        delays = [g.crawl_delay for g in self._groups_for(agent) if g.crawl_delay is not None]
        return max(delays) if delays else None


ALLOW_ALL = RobotsRules((RobotsGroup(("*",), (("disallow", ""),)),))
# How a host's robots.txt must be read: rules, no rules (4xx), or fetch nothing (5xx).
RobotsPolicy = RobotsRules | Literal["allow-all", "unavailable"]


@dataclass(frozen=True, slots=True)
class Options:
    """The tunable behaviours of the test web (see ``TestWeb``)."""

    header_delay: float = 3.0
    trickle_interval: float = 0.2
    stall_after: int = 1024
    flaky_failures: int = 2
    unavailable_failures: int = 1
    retry_after: int = 3
    ratelimit_failures: int = 1
    ratelimit_retry_after: int = 2
    robots_503_count: int = 3
    big_body_bytes: int = 12 * 1024 * 1024
    bomb_bytes: int = 1024**3 + 64 * 1024**2


@dataclass(frozen=True, slots=True)
class Context:
    port: int
    options: Options
    text: TextGenerator

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"


class Page:
    """Builds one HTML page and, as it goes, the list of links it contains."""

    def __init__(self, url: str, *, base: str | None = None) -> None:
        self.url = url
        self.base = urljoin(url, base) if base else url
        self.links: list[Link] = []

    def href(self, href: str, *, tag: str = "a", rel: str = "", text: str | None = None) -> str:
        """Record a link to ``href`` (as written) and return it HTML-escaped."""
        target = urljoin(self.base, href)
        if urlsplit(target).scheme in ("http", "https"):
            self.links.append(Link(normal_url(target), rel, tag, text))
        return html.escape(href, quote=True)

    def a(self, href: str, text: str, *, rel: str = "") -> str:
        rel_attr = f' rel="{rel}"' if rel else ""
        return f'<a href="{self.href(href, rel=rel, text=text)}"{rel_attr}>{html.escape(text)}</a>'

    def nav(self, items: Iterable[tuple[str, str]]) -> str:
        return "<ul>" + "".join(f"<li>{self.a(h, t)}</li>" for h, t in items) + "</ul>"


def article_html(text: TextGenerator, rng: random.Random, paragraphs: int = 4) -> str:
    parts = []
    for index in range(paragraphs):
        if index and index % 2 == 0:
            parts.append(f"<h2>{html.escape(text.heading(rng))}</h2>")
        parts.append(f"<p>{html.escape(text.paragraph(rng))}</p>")
    return "\n".join(parts)


def document(title: str, body: str, *, head: str = "", lang: str = "en") -> bytes:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n{head}</head>\n<body>\n{body}\n</body>\n</html>\n"
    ).encode()


@dataclass
class Site:
    """One virtual host: its robots policy and a resource for every URL."""

    host: str
    ctx: Context
    robots: RobotsPolicy = "allow-all"
    routes: dict[str, Resource] = field(default_factory=dict)
    # Paths fetched while reading robots.txt (the file and its redirect targets).
    robots_files: set[str] = field(default_factory=lambda: {"/robots.txt"})

    def url(self, path: str = "/") -> str:
        return self.ctx.url(self.host, path)

    def robots_resource(self) -> Resource:
        if isinstance(self.robots, RobotsRules):
            return Resource(200, "text/plain; charset=utf-8", self.robots.render().encode())
        if self.robots == "unavailable":
            return Resource(500, "text/plain", b"robots.txt is unavailable\n")
        return not_found()

    def dynamic(self, path: str, query: str) -> Resource | None:
        """Patterned URLs (traps and such); subclasses override."""
        return None

    def resource(self, path: str, query: str = "") -> Resource:
        target = normal_target(f"{path}?{query}" if query else path)
        path, _, query = target.partition("?")
        found = self.routes.get(target)
        if found is None and path == "/robots.txt":
            return self.robots_resource()
        if found is None:
            found = self.dynamic(path, query)
        return found if found is not None else not_found()

    def add_page(
        self,
        path: str,
        title: str,
        body: Callable[[Page], str],
        *,
        head: Callable[[Page], str] | None = None,
        base: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        directives: tuple[Directive, ...] = (),
        canonical: str | None = None,
        opt_outs: tuple[str, ...] = (),
        license: str | None = None,
        content_type: str | None = HTML,
    ) -> Resource:
        """Build a page at ``path``: ``body`` writes the HTML using the Page's links."""
        path = normal_target(path)
        page = Page(self.url(path), base=base)
        head_html = head(page) if head else ""
        content = body(page)
        resource = Resource(
            200,
            content_type,
            document(title, content, head=head_html),
            headers=headers,
            links=tuple(page.links),
            canonical=canonical,
            directives=directives,
            opt_outs=opt_outs,
            license=license,
        )
        self.routes[path] = resource
        return resource

    def text_page(self, path: str, title: str, links: Iterable[tuple[str, str]] = ()) -> Resource:
        """A plain page of generated prose with a list of links."""
        rng = random.Random(f"{self.host}{path}")
        article = article_html(self.ctx.text, rng, paragraphs=3)
        links = list(links)
        return self.add_page(
            path,
            title,
            lambda p: f"<h1>{html.escape(title)}</h1>\n{article}\n{p.nav(links)}",
        )


def not_found() -> Resource:
    return Resource(404, HTML, document("Not found", "<h1>Not found</h1>"))


def redirect(status: int, location: str, *, absolute: str | None = None) -> Resource:
    """A redirect whose Location header is ``location``; ``absolute`` is where it
    resolves to (for relative Locations)."""
    return Resource(
        status,
        HTML,
        document("Moved", "<p>Moved.</p>"),
        headers=(("Location", location),),
        location=absolute or location,
    )
