"""The sample web's sitemaps (``SampleWeb(..., sitemap_only=N)``): for each host,
robots.txt names ``/sitemap.xml``, an index of ``/sitemaps/pages.xml.gz`` (every
linked page, gzip'd, each with a ``lastmod``) and ``/sitemaps/hidden.txt`` (the host's
``N`` articles that no page links to, one URL a line). Same arguments, same bytes."""

from __future__ import annotations

import gzip
import random
from datetime import UTC, datetime

from trawl.testing._sample_site import HostPlan

INDEX = "/sitemap.xml"
PAGES = "/sitemaps/pages.xml.gz"
HIDDEN = "/sitemaps/hidden.txt"
PATHS = (INDEX, PAGES, HIDDEN)
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
_EPOCH = datetime(2019, 1, 1, tzinfo=UTC).timestamp()
_SPAN = 7 * 365 * 86400


def _base(plan: HostPlan, port: int) -> str:
    return f"http://{plan.name}{'' if port == 80 else f':{port}'}"


def sitemap_url(plan: HostPlan, port: int) -> str:
    return _base(plan, port) + INDEX


def lastmod(seed: int, plan: HostPlan, path: str) -> str:
    when = _EPOCH + random.Random(f"{seed}:lastmod:{plan.name}:{path}").randrange(_SPAN)
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d")


def sitemap_file(seed: int, plan: HostPlan, path: str, port: int) -> tuple[bytes, str] | None:
    """(body, content type) of one of the host's sitemap files, or None."""
    base = _base(plan, port)
    if path == INDEX:
        items = "".join(f"<sitemap><loc>{base}{p}</loc></sitemap>\n" for p in (PAGES, HIDDEN))
        body = f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n{items}'
        return (body + "</sitemapindex>\n").encode(), "application/xml"
    if path == PAGES:
        hidden = set(plan.hidden)
        items = "".join(
            f"<url><loc>{base}{p}</loc><lastmod>{lastmod(seed, plan, p)}</lastmod></url>\n"
            for p in plan.pages
            if p not in hidden
        )
        body = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n{items}</urlset>\n'
        return gzip.compress(body.encode(), mtime=0), "application/gzip"
    if path == HIDDEN:
        return "".join(f"{base}{p}\n" for p in plan.hidden).encode(), "text/plain"
    return None
