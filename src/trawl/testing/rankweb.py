"""The rank web: a deterministic web whose important pages are known, for priorities.

    web = RankWeb(hosts=20, seed=1)
    async with RankWebServer(web) as srv:
        crawl(web.seeds(port=srv.port), resolve=srv.resolve_map())
    web.important(port=srv.port)  # the URLs a good order fetches early

Each host (``rank-00.test``, ...) is a small site: a home page ``/`` linking its
``sections`` sections (``/s3/``), each section linking its ``articles`` articles
(``/s3/a07/``), and each article linking home, its section, two sibling articles,
its own ``extras`` pages (``/s3/a07/x1/``: comments, print views, leaves that link
nowhere new) and ``links_to_important`` of the host's ``important`` guide pages
(``/guide/2/``), chosen at random. So the guides are linked from many pages (every
article links some) but only from articles: breadth-first order reaches them at
depth 3, among all the extras, which far outnumber them, and finds them in no
particular order among those; an order that counts in-links (OPIC) fetches them
right after the first articles that link them. ``depths`` gives each page's
breadth-first depth, ``links(host, path)`` its links.

Same arguments, same bytes. ``write_static`` writes the web for nginx, as
``SampleWeb.write_static`` does; ``RankWebServer`` serves it with aiohttp (tests).
"""

from __future__ import annotations

import html
import random
from pathlib import Path

from aiohttp import web

from trawl.testing._sample_text import text_generator
from trawl.testing.requestlog import RequestLog
from trawl.testing.vhost import LOOPBACK, ServedWeb, VirtualHostServer, nginx_config

__all__ = ["RankWeb", "RankWebServer"]

_ROBOTS = b"User-agent: *\nAllow: /\n"


class RankWeb:
    """``hosts`` sites of ``1 + sections * (1 + articles * (1 + extras)) + important`` pages."""

    def __init__(
        self,
        hosts: int,
        *,
        sections: int = 5,
        articles: int = 20,
        extras: int = 3,
        important: int = 5,
        links_to_important: int = 2,
        seed: int = 0,
    ) -> None:
        if min(hosts, sections, articles, important) < 1 or extras < 0:
            raise ValueError("a rank web needs hosts, sections, articles and guides")
        if not 1 <= links_to_important <= important or articles < 3:
            raise ValueError("each article links 1 to `important` guides; 3 articles at least")
        self.seed = seed
        self.hosts = tuple(f"rank-{i:02d}.test" for i in range(hosts))
        self._text = text_generator(seed)
        self._links: dict[str, list[str]] = {}  # path -> links (same on every host)
        self._guides = [f"/guide/{g}/" for g in range(important)]
        rng = random.Random(f"rank-{seed}")
        sections_ = [f"/s{s}/" for s in range(sections)]
        self._links["/"] = list(sections_)
        for section in sections_:
            items = [f"{section}a{a:02d}/" for a in range(articles)]
            self._links[section] = ["/", *items]
            for a, item in enumerate(items):
                own = [f"{item}x{x}/" for x in range(extras)]
                siblings = [items[(a + 1) % articles], items[(a + 2) % articles]]
                guides = rng.sample(self._guides, links_to_important)
                self._links[item] = ["/", section, *siblings, *own, *guides]
                for extra in own:
                    self._links[extra] = [item, section]
        for guide in self._guides:
            self._links[guide] = ["/"]
        self.depths = self._breadth_first()

    def _breadth_first(self) -> dict[str, int]:
        depths = {"/": 0}
        frontier = ["/"]
        while frontier:
            nxt = []
            for path in frontier:
                for link in self._links[path]:
                    if link not in depths:
                        depths[link] = depths[path] + 1
                        nxt.append(link)
            frontier = nxt
        return depths

    # -- addresses -------------------------------------------------------------
    @staticmethod
    def url(host: str, path: str = "/", *, port: int = 80) -> str:
        return f"http://{host}{'' if port == 80 else f':{port}'}{path}"

    def seeds(self, *, port: int = 80) -> list[str]:
        return [self.url(h, "/", port=port) for h in self.hosts]

    def paths(self) -> list[str]:
        """Every page's path (the same on every host)."""
        return list(self._links)

    def links(self, path: str) -> list[str]:
        return list(self._links[path])

    def important(self, *, port: int = 80) -> set[str]:
        """The guide pages of every host."""
        return {self.url(h, g, port=port) for h in self.hosts for g in self._guides}

    def before_important(self) -> int:
        """Pages per host a breadth-first crawl fetches before the guides' depth."""
        deepest = max(self.depths[g] for g in self._guides)
        return sum(1 for d in self.depths.values() if d < deepest)

    # -- content ---------------------------------------------------------------
    def page(self, host: str, path: str, *, port: int = 80) -> bytes | None:
        links = self._links.get(path)
        if links is None or host not in self.hosts:
            return None
        rng = random.Random(f"{self.seed}|{host}|{path}")
        text = self._text
        title = text.title(rng)
        body = "".join(f"<p>{html.escape(text.paragraph(rng))}</p>\n" for _ in range(2))
        items = "".join(
            f'<li><a href="{self.url(host, link, port=port)}">'
            f"{html.escape(text.pooled_title(rng))}</a></li>"
            for link in links
        )
        return (
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title></head>\n<body><h1>{html.escape(title)}</h1>\n"
            f"{body}<ul>{items}</ul></body></html>\n"
        ).encode()

    def write_static(self, directory: str | Path, *, port: int = 8080) -> Path:
        """``<dir>/<host>/<path>/index.html`` and robots.txt for every host, and
        ``<dir>/nginx.conf`` (server blocks on 127.0.0.1:PORT to include in ``http {}``).
        Returns the config's path."""
        root = Path(directory).resolve()
        roots = {}
        for host in self.hosts:
            base = roots[host] = root / host
            base.mkdir(parents=True, exist_ok=True)
            (base / "robots.txt").write_bytes(_ROBOTS)
            for path in self._links:
                folder = base / path.strip("/")
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "index.html").write_bytes(self.page(host, path, port=port) or b"")
        config = root / "nginx.conf"
        config.write_text(nginx_config(roots, port, title="The rank web"))
        return config


class RankWebServer(ServedWeb):
    """Serves a ``RankWeb`` on 127.0.0.1 (virtual hosts by Host header), with a log."""

    def __init__(self, web_: RankWeb, *, port: int = 0) -> None:
        self.web = web_
        self.log = RequestLog()
        self._server = VirtualHostServer(self._handle, log=self.log, port=port)

    def resolve_map(self) -> dict[str, str]:
        return dict.fromkeys(self.web.hosts, LOOPBACK)

    async def _handle(self, request: web.BaseRequest, host: str) -> web.StreamResponse:
        path = request.raw_path.split("?", 1)[0]
        if path == "/robots.txt":
            return web.Response(body=_ROBOTS, content_type="text/plain")
        body = self.web.page(host, path, port=self.port)
        if body is None:
            return web.Response(status=404, text="not found\n")
        return web.Response(body=body, content_type="text/html", charset="utf-8")
