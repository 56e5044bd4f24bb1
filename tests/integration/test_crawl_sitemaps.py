"""Whole crawls with sitemaps and the crawl's shape, on memory stores and a fake client:
every sitemap-only page found, every hostile sitemap recorded with its reason, the
sitemap responses in the WARC, blocked hosts and patterns kept."""

from __future__ import annotations

import asyncio
import functools
import gzip
import zlib
from pathlib import Path
from typing import Any

from trawl.archive.warc import read_response
from trawl.config import CrawlConfig, HostOverride
from trawl.crawl import Crawl
from trawl.models import NewUrl, UrlStatus
from trawl.records import CrawlSummary
from trawl.storage.blobs import WARC_LOG
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.testing.fakeclient import FakeClient, FakePage

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
S = "https://site.example"
WORDS = ["a", "quiet", "river", "runs", "under", "the", "old", "stone", "bridge", "by", "mill"]


def page(title: str, links: tuple[str, ...] = ()) -> FakePage:
    words = " ".join(f"{w}{title}" for w in WORDS * 6)
    anchors = "".join(f'<a href="{u}">{u}</a>' for u in links)
    return FakePage.html(f"<title>{title}</title><p>{words}</p>{anchors}")


def xml(body: str, ctype: str = "application/xml") -> FakePage:
    return FakePage(body.encode(), 200, (("Content-Type", ctype),))


def urlset(*locs: str) -> str:
    items = "".join(f"<url><loc>{u}</loc></url>" for u in locs)
    return f'<?xml version="1.0"?><urlset xmlns="{NS}">{items}</urlset>'


def index(*locs: str) -> str:
    items = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in locs)
    return f'<sitemapindex xmlns="{NS}">{items}</sitemapindex>'


def _bomb() -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = deflate.compress(f'<urlset xmlns="{NS}"><url><loc>{S}/maps/bombed</loc></url>'.encode())
    for _ in range(60):
        out += deflate.compress(b" " * (1 << 20))
    return out + deflate.flush()


ROBOTS = (
    "User-agent: *\nDisallow: /private/\n"
    f"Sitemap: {S}/maps/index.xml\nSitemap: {S}/private/sitemap.xml\n"
    f"Sitemap: {S}/maps/hostile-dtd.xml\nSitemap: {S}/maps/redirect.xml\n"
)
HIDDEN = [f"{S}/hidden/{n}" for n in range(1, 7)]


@functools.cache
def site() -> dict[str, FakePage]:
    """The web (built on first use: the gzip bomb takes a moment to make)."""
    return {
        f"{S}/robots.txt": FakePage(ROBOTS.encode(), 200, (("Content-Type", "text/plain"),)),
        f"{S}/": page("home", ("/about",)),
        f"{S}/about": page("about"),
        f"{S}/sitemap.xml": xml(urlset(HIDDEN[0], "https://evil.example/x")),
        f"{S}/maps/index.xml": xml(
            index(
                f"{S}/maps/one.xml.gz",
                f"{S}/maps/two.txt",
                f"{S}/maps/index.xml",  # itself
                f"{S}/maps/loop.xml",
                f"{S}/maps/html.xml",
                f"{S}/maps/namespace.xml",
                f"{S}/maps/bomb.xml.gz",
                f"{S}/maps/malformed.xml",
                "https://evil.example/sitemap.xml",
            )
        ),
        f"{S}/maps/one.xml.gz": FakePage(
            gzip.compress(urlset(HIDDEN[1], HIDDEN[2]).encode()),
            200,
            (("Content-Type", "application/gzip"),),
        ),
        f"{S}/maps/two.txt": xml(f"{HIDDEN[3]}\nnot a url\n", "text/plain"),
        f"{S}/maps/loop.xml": xml(index(f"{S}/maps/index.xml")),
        f"{S}/maps/html.xml": FakePage.html("<html><body>Not found, sorry</body></html>"),
        f"{S}/maps/namespace.xml": xml(urlset(f"{S}/never").replace(NS, "http://evil.example/ns")),
        f"{S}/maps/bomb.xml.gz": FakePage(_bomb(), 200, (("Content-Type", "application/gzip"),)),
        f"{S}/maps/malformed.xml": xml(urlset(HIDDEN[4]).replace("</urlset>", "<url><loc>")),
        f"{S}/maps/hostile-dtd.xml": xml(
            '<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa">]>'
            f'<urlset xmlns="{NS}"><url><loc>{S}/&a;</loc></url></urlset>'
        ),
        f"{S}/maps/redirect.xml": FakePage.redirect(f"{S}/maps/moved.xml"),
        f"{S}/maps/moved.xml": xml(urlset(HIDDEN[5])),
        f"{S}/maps/bombed": page("bombed"),
        **{url: page(url.rsplit("/", 1)[1]) for url in HIDDEN},
    }


States = dict[str, tuple[UrlStatus, str | None]]


def crawl(
    tmp_path: Path, web: dict[str, FakePage], **changes: Any
) -> tuple[CrawlSummary, States, FakeClient, MemoryCrawlStore, MemoryBlobStore]:
    store, blobs, client = MemoryCrawlStore(), MemoryBlobStore(), FakeClient(web)
    config = CrawlConfig(
        data_dir=tmp_path,
        seeds=(f"{S}/",),
        delay=0.0,
        parse_workers=0,
        commit_interval=0.05,
        fsync=False,
        min_free_space=0,
    ).with_changes(**changes)

    async def go() -> CrawlSummary:
        c = Crawl(config, store=store, blobs=blobs, client=client)
        try:
            return await c.run()
        finally:
            c.close()

    summary = asyncio.run(go())
    states = {u: (s, r) for u, s, r in store.reader().url_states()}
    return summary, states, client, store, blobs


def test_every_sitemap_only_page_is_found_and_every_hostile_sitemap_recorded(
    tmp_path: Path,
) -> None:
    summary, states, client, store, blobs = crawl(tmp_path, site())
    assert summary.stopped == "done"
    for url in HIDDEN:
        assert states[url] == (UrlStatus.PARSED, "stored"), url
    requested = [u for _t, u in client.requests]
    assert len(requested) == len(set(requested))  # each file and page once
    assert f"{S}/private/sitemap.xml" not in requested  # robots.txt disallows it
    assert "https://evil.example/sitemap.xml" not in requested
    assert f"{S}/never" not in states and f"{S}/maps/bombed" in states

    def item(path: str, grant: bool = True) -> tuple[UrlStatus, str | None]:
        return states[f"{S}{path}#sitemap" + (f"={S}" if grant else "")]

    assert item("/sitemap.xml", grant=False) == (
        UrlStatus.PARSED,
        "sitemap urlset: 2 URLs, 1 new, 0 known; refused 1 foreign host",
    )
    assert item("/private/sitemap.xml") == (UrlStatus.SKIPPED, "robots")
    assert item("/maps/index.xml") == (
        UrlStatus.PARSED,
        "sitemap index: 9 sitemaps, 7 queued, 0 known; refused 1 foreign sitemap, 1 self reference",
    )
    assert item("/maps/loop.xml") == (
        UrlStatus.PARSED,
        "sitemap index: 1 sitemaps, 0 queued, 1 known",
    )
    assert item("/maps/html.xml") == (UrlStatus.SKIPPED, "content type text/html")
    assert item("/maps/namespace.xml") == (
        UrlStatus.FAILED,
        "sitemap not read: wrong namespace 'http://evil.example/ns'",
    )
    assert item("/maps/hostile-dtd.xml") == (UrlStatus.FAILED, "sitemap not read: DTD not allowed")
    bomb = item("/maps/bomb.xml.gz")
    assert bomb[0] is UrlStatus.PARSED
    assert (bomb[1] or "").endswith("over 50 MiB decoded: the rest not read")
    malformed = item("/maps/malformed.xml")
    assert malformed[0] is UrlStatus.PARSED
    assert "malformed XML at line 1" in (malformed[1] or "")
    two = item("/maps/two.txt")
    assert two == (UrlStatus.PARSED, "sitemap text: 2 URLs, 1 new, 0 known; refused 1 no scheme")
    assert item("/maps/redirect.xml")[0] is UrlStatus.REDIRECTED
    assert item("/maps/moved.xml")[0] is UrlStatus.PARSED
    counters = summary.counters
    assert counters["sitemap:problem:DTD not allowed"] == 1
    assert counters["sitemap:problem:wrong namespace"] == 1
    assert counters["sitemap:fetched"] == 10  # the HTML one skipped, the redirect not stored
    assert counters["fetch:stored"] == 2 + len(HIDDEN) + 1  # pages only
    # Each sitemap response is in the WARC under the file's own URL.
    fetched = store.pages.fetch_of("site.example", _fp(f"{S}/maps/one.xml.gz#sitemap={S}"))
    assert fetched is not None and fetched.final_url == f"{S}/maps/one.xml.gz"
    record = read_response(blobs.read(WARC_LOG, fetched.warc))
    assert gzip.decompress(record.body).startswith(b"<?xml")


def _fp(url: str) -> int:
    from trawl import urls

    return urls.fingerprint(url)


def test_sitemaps_off_reads_none(tmp_path: Path) -> None:
    summary, states, client, _store, _blobs = crawl(tmp_path, site(), sitemaps=False)
    requested = {u for _t, u in client.requests}
    assert requested == {f"{S}/robots.txt", f"{S}/", f"{S}/about"}
    assert not any("#" in u for u in states)
    assert "sitemap:fetched" not in summary.counters


def test_a_blocked_host_and_excluded_urls_are_never_fetched(tmp_path: Path) -> None:
    web = {
        **site(),
        f"{S}/": page("home", ("/about", "/drafts/1", "https://ads.example/", "/hidden/9")),
        "https://ads.example/robots.txt": FakePage(b"", 404),
    }
    summary, _states, client, _store, _blobs = crawl(
        tmp_path,
        web,
        scope="any",
        exclude=("/drafts/", r"/hidden/[2-6]$"),
        hosts={"ads.example": HostOverride(block=True)},
        sitemaps=True,
    )
    requested = {u for _t, u in client.requests}
    assert not any("ads.example" in u for u in requested)
    assert f"{S}/drafts/1" not in requested
    assert f"{S}/hidden/1" in requested and f"{S}/hidden/2" not in requested
    dropped = {k: v for k, v in summary.counters.items() if k.startswith("dropped:")}
    assert dropped["dropped:host blocked"] == 1
    assert dropped["dropped:excluded by pattern"] >= 6  # a link and five sitemap entries
    assert summary.counters["sitemap:urls refused:excluded by pattern"] == 5


def test_urls_of_a_host_blocked_since_they_were_queued_are_skipped(tmp_path: Path) -> None:
    store = MemoryCrawlStore()
    ads = "https://ads.example/"
    store.frontier.add([NewUrl(ads, _fp(ads), "ads.example", 0, 0)], now=0.0)
    store.commit()  # queued by an earlier run, before the operator blocked the host
    client = FakeClient(site())
    config = CrawlConfig(
        data_dir=tmp_path,
        delay=0.0,
        parse_workers=0,
        commit_interval=0.05,
        fsync=False,
        min_free_space=0,
        hosts={"ads.example": HostOverride(block=True)},
    )

    async def go() -> None:
        c = Crawl(config, store=store, blobs=MemoryBlobStore(), client=client)
        try:
            await c.run()
        finally:
            c.close()

    asyncio.run(go())
    states = {u: (s, r) for u, s, r in store.reader().url_states()}
    assert states[ads] == (UrlStatus.SKIPPED, "host blocked")
    assert client.requests == []
