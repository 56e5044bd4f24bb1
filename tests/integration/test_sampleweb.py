"""The sample web is deterministic, realistic enough, and served as generated."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import aiohttp
import pytest

from trawl.testing._sample_text import RARE_WORDS, vocabulary
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

HREF = re.compile(rb'<a href="([^"]+)"')


@pytest.fixture(scope="module")
def sample() -> SampleWeb:
    return SampleWeb(hosts=8, pages_per_host=40, seed=3)


@pytest.fixture(scope="module")
def pages(sample: SampleWeb) -> dict[str, bytes]:
    return dict(sample.pages())


def test_hosts_and_counts(sample: SampleWeb, pages: dict[str, bytes]) -> None:
    assert sample.hosts[:4] == (
        "news-00.sample",
        "shop-00.sample",
        "blog-00.sample",
        "wiki-00.sample",
    )
    assert sample.hosts[4] == "news-01.sample"
    assert len(pages) == 8 * 40 == len(sample.urls())
    assert sample.seeds() == [f"http://{h}/" for h in sample.hosts]
    assert set(sample.seeds()) <= set(pages)


def test_same_seed_same_bytes_other_seed_other_bytes(pages: dict[str, bytes]) -> None:
    again = dict(SampleWeb(hosts=8, pages_per_host=40, seed=3).pages())
    assert again == pages
    other = dict(SampleWeb(hosts=8, pages_per_host=40, seed=4).pages())
    shared = set(other) & set(pages)
    assert shared and all(other[u] != pages[u] for u in shared)


def test_sizes_links_and_text(sample: SampleWeb, pages: dict[str, bytes]) -> None:
    known = set(pages)
    for url, body in pages.items():
        assert 15_000 <= len(body) <= 80_000, url
        links = HREF.findall(body)
        assert 20 <= len(links) <= 60, url
        host = url.split("/")[2]
        absolute = [h.decode() for h in links if h.startswith(b"http")]
        assert all(a.split("/")[2] != host for a in absolute)
        assert 1 <= len(absolute) <= 3
        broken = [
            h
            for h in links
            if not h.startswith(b"http") and f"http://{host}{h.decode()}" not in known
        ]
        broken = [h for h in broken if not h.startswith(b"/search/")]
        assert 1 <= len(broken) <= 2, (url, broken)
    words = re.findall(r"[a-z]+", b" ".join(pages.values()).decode().lower())
    counts = collections.Counter(words).most_common()
    assert counts[0][0] == "the" and counts[0][1] > 20 * counts[200][1]  # Zipf-like
    assert len(vocabulary()) > 4000 and len(RARE_WORDS) > 300


def test_broken_links_are_a_few_per_cent_of_the_urls() -> None:
    """As on a real site: most links work; before, 404s were over half of all URLs."""
    web = SampleWeb(hosts=8, pages_per_host=100, seed=5)
    pages = dict(web.pages())
    linked = set()
    for url, body in pages.items():
        host = url.split("/")[2]
        for href in HREF.findall(body):
            link = href.decode() if href.startswith(b"http") else f"http://{host}{href.decode()}"
            if "/search/" not in link:
                linked.add(link)
    broken = linked - set(pages)
    assert all("/archive/" in u or "/missing-" in u for u in broken)
    assert 0.01 < len(broken) / len(linked | set(pages)) < 0.05


def test_every_page_reachable_from_the_home_pages(
    sample: SampleWeb, pages: dict[str, bytes]
) -> None:
    seen = set(sample.seeds())
    todo = list(seen)
    while todo:
        url = todo.pop()
        host = url.split("/")[2]
        for href in HREF.findall(pages[url]):
            target = href.decode() if href.startswith(b"http") else f"http://{host}{href.decode()}"
            if target in pages and target not in seen:
                seen.add(target)
                todo.append(target)
    assert seen == set(pages)


def test_distinctive_phrases(sample: SampleWeb, pages: dict[str, bytes]) -> None:
    phrases: dict[str, list[str]] = collections.defaultdict(list)
    for url in pages:
        try:
            phrase = sample.distinctive_phrase(url)
        except KeyError:
            continue
        phrases[phrase].append(url)
        assert phrase.encode() in pages[url]
    assert len(phrases) > 200
    for phrase, urls in phrases.items():
        holders = [u for u, body in pages.items() if phrase.encode() in body]
        assert sorted(holders) == sorted(urls)
        originals = [
            u for u in urls if not sample.duplicate_of(u) and not sample.near_duplicate_of(u)
        ]
        assert len(originals) == 1, (phrase, urls)
    with pytest.raises(KeyError):
        sample.distinctive_phrase(sample.seeds()[0])


def test_duplicates() -> None:
    big = SampleWeb(hosts=8, pages_per_host=200, seed=1)
    urls = big.urls()
    exact = [u for u in urls if big.duplicate_of(u)]
    near = [u for u in urls if big.near_duplicate_of(u)]
    assert 0.003 * len(urls) < len(exact) < 0.05 * len(urls)
    assert 0.003 * len(urls) < len(near) < 0.05 * len(urls)
    for url in exact[:5]:
        source = big.duplicate_of(url)
        assert source is not None
        host, path = url.split("/", 3)[2], "/" + url.split("/", 3)[3]
        shost, spath = source.split("/", 3)[2], "/" + source.split("/", 3)[3]
        assert big.page(host, path) == big.page(shost, spath)


def test_robots_files(sample: SampleWeb) -> None:
    texts = {h: sample.robots_txt(h).decode() for h in sample.hosts}
    assert texts["shop-00.sample"] == "User-agent: *\nDisallow:\nCrawl-delay: 2\n"
    assert "Disallow: /search/" in texts["blog-00.sample"]
    allow_all = [t for t in texts.values() if t == "User-agent: *\nDisallow:\n"]
    assert len(allow_all) >= len(texts) // 2


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="page_bytes"):
        SampleWeb(hosts=1, pages_per_host=10, page_bytes=(1_000, 2_000))
    with pytest.raises(ValueError, match="at least"):
        SampleWeb(hosts=0, pages_per_host=10)


async def test_server_serves_the_generated_bytes(sample: SampleWeb) -> None:
    async with SampleWebServer(sample, log=True) as srv, aiohttp.ClientSession() as client:
        assert set(srv.resolve_map()) == set(sample.hosts)
        base = f"http://127.0.0.1:{srv.port}"
        for host in sample.hosts[:3]:
            path = sample.plan(host).articles[0]
            async with client.get(base + path, headers={"Host": host}) as response:
                assert response.status == 200
                assert response.headers["Content-Type"] == "text/html; charset=utf-8"
                assert await response.read() == sample.page(host, path, port=srv.port)
            async with client.get(base + "/robots.txt", headers={"Host": host}) as response:
                assert await response.read() == sample.robots_txt(host)
            async with client.get(base + "/nope/", headers={"Host": host}) as response:
                assert response.status == 404
        home = sample.page("news-00.sample", "/", port=srv.port)
        assert home is not None and f":{srv.port}/".encode() in home  # cross-host links
        assert srv.url("news-00.sample") == f"http://news-00.sample:{srv.port}/"
        assert srv.log is not None and srv.log.count("news-00.sample") == 3


def test_write_static(tmp_path: Path) -> None:
    small = SampleWeb(hosts=2, pages_per_host=5, seed=9)
    config = small.write_static(tmp_path, port=8099)
    text = config.read_text()
    assert "listen 127.0.0.1:8099;" in text and "server_name shop-00.sample;" in text
    assert "0.0.0.0" not in text
    for url, body in small.pages(port=8099):
        host, path = url.split("/", 3)[2].split(":")[0], url.split("/", 3)[3]
        assert (tmp_path / host / path / "index.html").read_bytes() == body
    assert (tmp_path / "news-00.sample" / "robots.txt").read_bytes() == small.robots_txt(
        "news-00.sample"
    )


def test_sitemap_only_pages_are_linked_from_nowhere_and_listed_in_sitemaps() -> None:
    import gzip

    from trawl.parse.sitemap import SitemapInput, parse_sitemap

    web = SampleWeb(hosts=4, pages_per_host=40, seed=3, sitemap_only=3)
    pages = dict(web.pages())
    hidden = set(web.sitemap_only_urls())
    assert len(pages) == 4 * 40 and len(hidden) == 4 * 3 and hidden <= set(pages)
    linked = {
        href.decode() if href.startswith(b"http") else f"http://{url.split('/')[2]}{href.decode()}"
        for url, body in pages.items()
        for href in HREF.findall(body)
    }
    assert not hidden & linked
    for host in web.hosts:
        robots = web.robots_txt(host, port=8080).decode()
        assert f"Sitemap: http://{host}:8080/sitemap.xml\n" in robots
        files = {}
        for path in ("/sitemap.xml", "/sitemaps/pages.xml.gz", "/sitemaps/hidden.txt"):
            found = web.sitemap(host, path)
            assert found is not None
            url = f"http://{host}{path}"
            files[path] = parse_sitemap(SitemapInput(url, found[0], grant=f"http://{host}"))
        assert [e.url for e in files["/sitemap.xml"].sitemaps] == [
            f"http://{host}/sitemaps/pages.xml.gz",
            f"http://{host}/sitemaps/hidden.txt",
        ]
        listed = {e.url for e in files["/sitemaps/pages.xml.gz"].urls}
        assert all(e.lastmod is not None for e in files["/sitemaps/pages.xml.gz"].urls)
        mine = {u for u in pages if u.split("/")[2] == host}
        assert listed == mine - hidden
        assert {e.url for e in files["/sitemaps/hidden.txt"].urls} == mine & hidden
        gz = web.sitemap(host, "/sitemaps/pages.xml.gz")
        assert gz is not None and gzip.decompress(gz[0]).startswith(b"<?xml")
    # Without the option the web has no sitemaps and its bytes do not change.
    plain = SampleWeb(hosts=4, pages_per_host=40, seed=3)
    assert plain.sitemap("news-00.sample", "/sitemap.xml") is None
    assert "Sitemap" not in plain.robots_txt("news-00.sample").decode()
