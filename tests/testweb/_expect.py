"""The test web's oracle: what a correct crawl finds, from the resources it serves.

``expect`` walks the same ``Resource`` objects the server answers with, breadth first
from the seeds, applying the rules a correct crawler keeps (robots.txt for all the
given agents, redirect limits, refusing address literals and other schemes, meta
robots and X-Robots-Tag, canonical links, a maximum depth). ``robots_violations``
checks a request log against the same robots rules.
"""

from __future__ import annotations

import heapq
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
      content): no text is kept for them and their links are not followed.
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


def expect(
    sites: Mapping[str, Site],
    seeds: Iterable[str],
    *,
    user_agents: Iterable[str] = ("trawl",),
    max_depth: int | None = None,
    scope: Iterable[str] | None = None,
    max_redirects: int = 5,
    follow_nofollow_links: bool = True,
) -> ExpectedCrawl:
    agents = tuple(user_agents)
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

    def push(depth: int, url: str, hops: int = 0) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (depth, counter, url, hops))

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
            if resource.opt_outs:
                opted_out.add(url)
            if resource.license is not None:
                licenses[url] = resource.license
        follow = not resource.directive_applies("nofollow", agents)
        for link in resource.links:
            if (urlsplit(link.url).hostname or "") not in hosts:
                out_of_scope.add(link.url)
                continue
            too_deep = max_depth is not None and depth + 1 > max_depth
            if not follow or too_deep or (link.nofollow and not follow_nofollow_links):
                maybe_never.add(link.url)
            else:
                push(depth + 1, link.url)
    never |= maybe_never - requested - unmodeled - out_of_scope
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
