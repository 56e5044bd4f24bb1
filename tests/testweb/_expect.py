"""The test web's oracle: what a correct crawl finds, from the resources it serves.

``expect`` walks the same ``Resource`` objects the server answers with, breadth first
from the seeds, applying the rules a correct crawler keeps (robots.txt for all the
given agents, redirect limits, refusing address literals and other schemes, meta
robots and X-Robots-Tag, canonical links, a maximum depth). ``robots_violations``
checks a request log against the same robots rules.

With ``sitemaps`` (the crawler's default) every host whose robots.txt is read also
offers its sitemaps: the ``Sitemap:`` lines of its robots.txt (granted its origin) and
its ``/sitemap.xml``; a file that answers is read as its ``SitemapDoc`` says (URLs
admitted at depth 1, an index's sitemaps one level deeper with the same grant, listed
URLs a crawler must refuse never fetched), and each file's expected end is in
``sitemaps`` under its frontier item (``URL#sitemap`` or ``URL#sitemap=ORIGIN``).
"""

from __future__ import annotations

import heapq
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tests.testweb._model import RobotsRules, Site, normal_target, normal_url
from trawl.testing.requestlog import RequestLog, RequestRecord

REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class ExpectedCrawl:
    """What a correct crawl from ``seeds`` does. URLs are in normal form.

    - ``requested``: every URL it fetches (robots.txt files aside), each once;
    - ``pages``: the requested URLs that answer 200 with indexable HTML within the
      size cap (not noindex for the agents, and their own canonical);
    - ``never_requested``: discovered URLs it must not fetch: robots-disallowed, on a
      host whose robots.txt answers 5xx, address literals, other schemes, beyond
      ``max_depth``, past the redirect limit, or linked only from nofollow pages;
    - ``out_of_scope``: discovered URLs on hosts outside the crawl's scope;
    - ``unmodeled``: reached URLs whose outcome the oracle cannot say (random session
      ids, deliberately ambiguous encodings), not followed further;
    - ``robots``: the robots.txt URLs it reads;
    - ``statuses`` (None: no valid response expected), ``redirects`` (URL -> target),
      ``canonical`` (URL -> its different canonical URL), ``depths``;
    - ``opted_out``: pages carrying an AI / TDM opt-out for a training crawl, and
      ``licenses`` (page -> licence URL);
    - ``refused``: requested URLs that answer 200 but are no document, with the start
      of the reason a correct crawl records (an undecodable content coding, binary
      content): no text is kept for them and their links are not followed;
    - ``truncated``: pages longer than the crawl's body cap, kept cut at it.
    - ``sitemaps``: frontier item of each sitemap file a crawl reads or tries ->
      (its final status, the start of its reason);
    - ``sitemap_only``: the pages a crawl can only find in a sitemap;
    - ``rendered``: pages a crawl renders in a browser (``render="auto"``: the shells;
      ``"always"``: every HTML page), ``rendered_text`` (page -> phrases only its
      rendered DOM has) and ``subresources``: what their scripts may fetch (robots.txt
      and ``render_hosts`` allowing); what they must not fetch is in ``never_requested``.
    """

    seeds: tuple[str, ...]
    requested: frozenset[str]
    pages: frozenset[str]
    never_requested: frozenset[str]
    out_of_scope: frozenset[str]
    unmodeled: frozenset[str]
    robots: frozenset[str]
    statuses: Mapping[str, int | None]
    redirects: Mapping[str, str]
    canonical: Mapping[str, str]
    depths: Mapping[str, int]
    opted_out: frozenset[str]
    licenses: Mapping[str, str]
    refused: Mapping[str, str]
    sitemaps: Mapping[str, tuple[str, str]]
    sitemap_only: frozenset[str]
    truncated: frozenset[str] = frozenset()
    rendered: frozenset[str] = frozenset()
    rendered_text: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    subresources: frozenset[str] = frozenset()


MAX_NESTING = 2  # sitemap index levels a crawler reads (trawl.frontier.sitemaps)


def sitemap_item(url: str, grant: str | None) -> str:
    """The frontier URL of a sitemap file (as trawl.frontier.sitemaps writes it)."""
    parts = urlsplit(url)
    own = f"{parts.scheme}://{parts.netloc}"
    if grant == own and parts.path.rfind("/") == 0:
        grant = None
    return f"{url}#sitemap" + (f"={grant}" if grant else "")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _blocked(site: Site, target: str, agents: tuple[str, ...]) -> bool:
    policy = site.robots
    if policy == "unavailable":
        return True
    return isinstance(policy, RobotsRules) and not policy.allowed(target, agents)


def _may_load(
    sites: Mapping[str, Site], url: str, page_host: str, others: set[str], agents: tuple[str, ...]
) -> bool:
    """A rendered page's script may fetch ``url``: its own host's or an allowed other
    host's, and robots.txt allows it."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    site = sites.get(host)
    if site is None or (host != page_host and host not in others):
        return False
    return not _blocked(
        site, normal_target(parts.path + (f"?{parts.query}" if parts.query else "")), agents
    )


def expect(
    sites: Mapping[str, Site],
    seeds: Iterable[str],
    *,
    user_agents: Iterable[str] = ("trawl",),
    max_depth: int | None = None,
    scope: Iterable[str] | None = None,
    max_redirects: int = 5,
    follow_nofollow_links: bool = True,
    sitemaps: bool = True,
    render: str = "never",
    render_hosts: Iterable[str] = (),
) -> ExpectedCrawl:
    agents = tuple(user_agents)
    others = {h.lower() for h in render_hosts}
    seed_urls = tuple(normal_url(s) for s in seeds)
    hosts = (
        {h.lower() for h in scope}
        if scope is not None
        else {urlsplit(s).hostname or "" for s in seed_urls}
    )
    heap: list[tuple[int, int, str, int]] = [(0, i, u, 0) for i, u in enumerate(seed_urls)]
    heapq.heapify(heap)
    counter = len(heap)
    seen: set[str] = set()
    requested: set[str] = set()
    pages: set[str] = set()
    never: set[str] = set()
    maybe_never: set[str] = set()
    out_of_scope: set[str] = set()
    unmodeled: set[str] = set()
    robots: set[str] = set()
    opted_out: set[str] = set()
    statuses: dict[str, int | None] = {}
    redirects: dict[str, str] = {}
    canonical: dict[str, str] = {}
    depths: dict[str, int] = {}
    licenses: dict[str, str] = {}
    refused: dict[str, str] = {}
    truncated: set[str] = set()
    items: dict[str, tuple[str, str]] = {}
    from_sitemaps: set[str] = set()
    offered: set[str] = set()  # hosts whose sitemaps were offered
    rendered: set[str] = set()
    rendered_text: dict[str, tuple[str, ...]] = {}
    subresources: set[str] = set()

    def push(depth: int, url: str, hops: int = 0) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (depth, counter, url, hops))

    def offer_sitemaps(site: Site) -> None:
        """The host's robots.txt was read: its sitemaps are offered."""
        if not sitemaps or site.host in offered or site.robots == "unavailable":
            return
        offered.add(site.host)
        origin = site.url("/")[:-1]
        listed = site.robots.sitemaps if isinstance(site.robots, RobotsRules) else ()
        read_sitemap(normal_url(site.url("/sitemap.xml")), None, 0, 0)
        for url in listed:
            read_sitemap(normal_url(url), origin, 0, 0)

    def read_sitemap(url: str, grant: str | None, nesting: int, hops: int) -> None:
        key = sitemap_item(url, grant)
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        site = sites.get(host)
        if key in items or nesting > MAX_NESTING or host not in hosts or site is None:
            return
        robots.add(site.url("/robots.txt"))
        offer_sitemaps(site)
        target = normal_target(parts.path + (f"?{parts.query}" if parts.query else ""))
        resource = site.resource(*target.partition("?")[::2])
        doc = resource.sitemap
        if _blocked(site, target, agents):
            items[key] = ("skipped", "robots")
            maybe_never.update(doc.urls if doc is not None else ())
            return
        if resource.status in REDIRECTS and resource.location is not None:
            moved = normal_url(resource.location)
            items[key] = ("redirected", f"-> {moved}")
            if hops < max_redirects:
                read_sitemap(moved, grant, nesting, hops + 1)
            return
        if resource.status is not None and 400 <= resource.status < 500:
            items[key] = ("skipped", f"no sitemap: http {resource.status}")
            return
        if resource.status == 200 and resource.is_html:
            items[key] = ("skipped", "content type text/html")
            return
        if doc is None:
            return  # not a modeled sitemap file
        if doc.kind == "none":
            items[key] = ("failed", f"sitemap not read: {doc.error}")
        else:
            items[key] = ("parsed", f"sitemap {doc.kind}: ")
        for entry in doc.urls:
            from_sitemaps.add(entry)
            push(1, entry)
        maybe_never.update(doc.refused)
        # An index's grant passes on; one at its origin's root grants that origin.
        own = f"{parts.scheme}://{parts.netloc}"
        passed = grant or (own if parts.path.rfind("/") == 0 else None)
        for child in doc.sitemaps:
            read_sitemap(normal_url(child), passed, nesting + 1, 0)

    while heap:
        depth, _, url, hops = heapq.heappop(heap)
        url = normal_url(url)
        if url in seen:
            continue
        seen.add(url)
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("http", "https") or _is_address(host):
            never.add(url)
            continue
        site = sites.get(host)
        if host not in hosts or site is None:
            out_of_scope.add(url)
            continue
        target = normal_target(parts.path + (f"?{parts.query}" if parts.query else ""))
        robots.add(site.url("/robots.txt"))
        offer_sitemaps(site)
        if _blocked(site, target, agents):
            never.add(url)
            continue
        path, _, query = target.partition("?")
        resource = site.resource(path, query)
        if not resource.modeled:
            unmodeled.add(url)
            continue
        requested.add(url)
        statuses[url] = resource.status
        depths[url] = depth
        if resource.status in REDIRECTS and resource.location is not None:
            redirects[url] = normal_url(resource.location)
            if hops >= max_redirects:
                maybe_never.add(redirects[url])
            else:
                push(depth, redirects[url], hops + 1)
            continue
        if resource.status == 200 and resource.refused is not None:
            refused[url] = resource.refused
            continue
        if resource.status != 200 or not resource.is_html or resource.oversized:
            continue
        if resource.canonical is not None and normal_url(resource.canonical) != url:
            canonical[url] = normal_url(resource.canonical)
            push(depth + 1, canonical[url])
        elif not resource.directive_applies("noindex", agents):
            pages.add(url)
            if resource.truncated:
                truncated.add(url)
            if resource.opt_outs:
                opted_out.add(url)
            if resource.license is not None:
                licenses[url] = resource.license
        follow = not resource.directive_applies("nofollow", agents)
        links = resource.links
        if render == "always" or (render == "auto" and resource.shell):
            rendered.add(url)
            rendered_text[url] = resource.rendered_text
            links += resource.script_links
            for sub in resource.subresources:
                allowed = _may_load(sites, sub, host, others, agents)
                (subresources if allowed else never).add(sub)
        for link in links:
            if (urlsplit(link.url).hostname or "") not in hosts:
                out_of_scope.add(link.url)
                continue
            too_deep = max_depth is not None and depth + 1 > max_depth
            if not follow or too_deep or (link.nofollow and not follow_nofollow_links):
                maybe_never.add(link.url)
            else:
                push(depth + 1, link.url)
    never |= maybe_never - requested - unmodeled - out_of_scope
    linked = {link.url for site in sites.values() for r in site.routes.values() for link in r.links}
    return ExpectedCrawl(
        seeds=seed_urls,
        requested=frozenset(requested),
        pages=frozenset(pages),
        never_requested=frozenset(never - requested),
        out_of_scope=frozenset(out_of_scope - requested),
        unmodeled=frozenset(unmodeled),
        robots=frozenset(robots),
        statuses=statuses,
        redirects=redirects,
        canonical=canonical,
        depths=depths,
        opted_out=frozenset(opted_out),
        licenses=licenses,
        refused=refused,
        truncated=frozenset(truncated),
        sitemaps=items,
        sitemap_only=frozenset((from_sitemaps & requested) - linked - set(seed_urls)),
        rendered=frozenset(rendered),
        rendered_text=rendered_text,
        subresources=frozenset(subresources),
    )


def robots_violations(
    sites: Mapping[str, Site], log: RequestLog, user_agents: Iterable[str] = ("trawl",)
) -> list[RequestRecord]:
    """Logged requests a crawler obeying robots.txt for ``user_agents`` must not make:
    disallowed targets, anything on a host whose robots.txt answers 5xx, and any
    request that started before a robots.txt answer below 500 reached the crawler."""
    agents = tuple(user_agents)
    bad: list[RequestRecord] = []
    for record in log:
        site = sites.get(record.host)
        if site is None or record.path in site.robots_files:
            continue
        answered = [
            r.finished
            for r in log.requests_for(record.host)
            if r.path == "/robots.txt" and r.finished is not None and (r.status or 500) < 500
        ]
        if _blocked(site, normal_target(record.target), agents) or not any(
            t <= record.started for t in answered
        ):
            bad.append(record)
    return bad
