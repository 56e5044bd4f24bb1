"""Sitemap files, pure (trawl.parse.sitemap): formats, the protocol's caps, and every
hostile file a crawler meets, each stopped with its reason."""

from __future__ import annotations

import gzip
import zlib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.parse.sitemap import (
    MAX_BYTES,
    MAX_URLS,
    ParsedSitemap,
    SitemapInput,
    location_reason,
    parse_lastmod,
    parse_sitemap,
)

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SITE = "https://a.example"
HERE = f"{SITE}/sitemap.xml"


def urlset(*items: str, ns: str = NS, extra: str = "") -> bytes:
    xmlns = f' xmlns="{ns}"' if ns else ""
    body = "".join(f"<url>{i}</url>" for i in items)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset{xmlns}{extra}>{body}</urlset>'.encode()


def loc(url: str, lastmod: str | None = None) -> str:
    return f"<loc>{url}</loc>" + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "")


def parse(body: bytes, url: str = HERE, grant: str | None = None) -> ParsedSitemap:
    return parse_sitemap(SitemapInput(url, body, grant=grant))


def found(parsed: ParsedSitemap) -> list[str]:
    return [e.url for e in parsed.urls]


# -- the formats -----------------------------------------------------------------------


def test_a_urlset_gives_its_urls_in_normal_form_with_lastmod() -> None:
    parsed = parse(
        urlset(
            loc(f"{SITE}/a", "2024-05-17"),
            loc(f" {SITE.upper()}:443/b/../c?x=1&amp;y=2 ", "2024-05-17T10:00:00+02:00"),
            loc(f"{SITE}/d"),
        )
    )
    assert parsed.kind == "urlset"
    assert parsed.error is None
    assert found(parsed) == [f"{SITE}/a", f"{SITE}/c?x=1&y=2", f"{SITE}/d"]
    lastmods = [e.lastmod for e in parsed.urls]
    assert lastmods[0] == datetime(2024, 5, 17, tzinfo=UTC).timestamp()
    assert lastmods[1] == datetime(2024, 5, 17, 8, tzinfo=UTC).timestamp()
    assert lastmods[2] is None
    assert parsed.size > 0
    assert len(parsed.digest) == 16


def test_an_index_gives_its_sitemaps() -> None:
    body = (
        f'<sitemapindex xmlns="{NS}">'
        f"<sitemap><loc>{SITE}/s1.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap>"
        f"<sitemap><loc>{SITE}/deep/s2.xml</loc></sitemap>"
        "</sitemapindex>"
    ).encode()
    parsed = parse(body)
    assert parsed.kind == "index"
    assert [e.url for e in parsed.sitemaps] == [f"{SITE}/s1.xml.gz", f"{SITE}/deep/s2.xml"]
    assert parsed.urls == ()


def test_a_text_sitemap_is_one_url_a_line() -> None:
    body = f"\ufeff{SITE}/a\r\n\n  {SITE}/b  \nnot a url\nftp://a.example/c\n{SITE}/d".encode()
    parsed = parse(body, url=f"{SITE}/sitemap.txt")
    assert parsed.kind == "text"
    assert found(parsed) == [f"{SITE}/a", f"{SITE}/b", f"{SITE}/d"]
    assert dict(parsed.refused) == {"no scheme": 1, "unsupported scheme": 1}


@pytest.mark.parametrize("ns", [NS, "http://www.google.com/schemas/sitemap/0.84", ""])
def test_the_sitemaps_namespaces_and_none_are_read(ns: str) -> None:
    assert found(parse(urlset(loc(f"{SITE}/a"), ns=ns))) == [f"{SITE}/a"]


def test_gzip_files_are_inflated_also_in_several_members() -> None:
    body = urlset(*(loc(f"{SITE}/{n}") for n in range(3000)))
    half = len(body) // 2
    assert len(found(parse(gzip.compress(body)))) == 3000
    two_members = gzip.compress(body[:half]) + gzip.compress(body[half:])
    assert len(found(parse(two_members))) == 3000


def test_extension_namespaces_are_not_pages() -> None:
    image = "http://www.google.com/schemas/sitemap-image/1.1"
    item = (
        f"<loc>{SITE}/page</loc><image:image><image:loc>{SITE}/photo.jpg</image:loc>"
        "</image:image><changefreq>daily</changefreq><priority>0.5</priority>"
    )
    parsed = parse(urlset(item, extra=f' xmlns:image="{image}"'))
    assert found(parsed) == [f"{SITE}/page"]


# -- where a sitemap may speak for ------------------------------------------------------


def test_urls_outside_the_sitemaps_directory_or_host_are_refused() -> None:
    here = f"{SITE}/catalog/sitemap.xml"
    parsed = parse(
        urlset(
            loc(f"{SITE}/catalog/a"),
            loc(f"{SITE}/images/b"),
            loc("http://a.example/catalog/c"),
            loc("https://b.example/catalog/d"),
        ),
        url=here,
    )
    assert found(parsed) == [f"{SITE}/catalog/a"]
    assert dict(parsed.refused) == {"outside sitemap path": 2, "foreign host": 1}


def test_a_robots_txt_grant_lets_a_sitemap_speak_for_that_origin() -> None:
    elsewhere = "https://sitemaps.example/a/sitemap.xml"
    parsed = parse(
        urlset(loc(f"{SITE}/x"), loc("https://sitemaps.example/a/y"), loc("https://c.example/")),
        url=elsewhere,
        grant=SITE,
    )
    assert found(parsed) == [f"{SITE}/x", "https://sitemaps.example/a/y"]
    assert dict(parsed.refused) == {"foreign host": 1}
    assert location_reason(f"{SITE}/s/map.xml?page=2", None, f"{SITE}/s/q/1") is None
    assert location_reason(f"{SITE}/s/map.xml?next=/x/", None, f"{SITE}/x/1") == (
        "outside sitemap path"
    )


def test_an_index_listing_itself_or_a_foreign_sitemap_is_refused() -> None:
    body = (
        f'<sitemapindex xmlns="{NS}">'
        f"<sitemap><loc>{HERE}</loc></sitemap>"
        "<sitemap><loc>https://evil.example/sitemap.xml</loc></sitemap>"
        f"<sitemap><loc>{SITE}/other.xml</loc></sitemap>"
        "<sitemap><lastmod>2024-01-01</lastmod></sitemap>"
        "</sitemapindex>"
    ).encode()
    parsed = parse(body)
    assert [e.url for e in parsed.sitemaps] == [f"{SITE}/other.xml"]
    assert dict(parsed.refused) == {"foreign sitemap": 1, "no loc": 1, "self reference": 1}


# -- hostile files -----------------------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&lol9;</loc></url></urlset>
"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&xxe;</loc></url></urlset>
"""

EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE urlset SYSTEM "http://evil.example/sitemap.dtd">
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/</loc></url></urlset>
"""


@pytest.mark.parametrize("body", [BILLION_LAUGHS, EXTERNAL, EXTERNAL_DTD])
def test_a_document_type_declaration_refuses_the_file(body: bytes) -> None:
    parsed = parse(body)
    assert parsed.kind == "none"
    assert parsed.urls == ()
    assert parsed.error == "DTD not allowed"


def test_entities_are_not_expanded_without_a_dtd() -> None:
    parsed = parse(urlset(loc(f"{SITE}/a"), loc("&undefined;")))
    assert found(parsed) == [f"{SITE}/a"]
    assert (parsed.error or "").startswith("malformed XML at line 2: undefined entity")


def test_an_html_page_is_not_a_sitemap() -> None:
    html = b"<!DOCTYPE html>\n<html><body><a href='/a'>a</a></body></html>"
    assert parse(html).error == "not a sitemap: an HTML document"
    assert parse(b"<html><body></body></html>").error == "not a sitemap: root element 'html'"
    rss = b'<?xml version="1.0"?><rss version="2.0"><channel></channel></rss>'
    assert parse(rss).error == "not a sitemap: root element 'rss'"


def test_a_wrong_namespace_refuses_the_file() -> None:
    parsed = parse(urlset(loc(f"{SITE}/a"), ns="http://www.sitemaps.org/schemas/sitemap/0.99"))
    assert parsed.kind == "none"
    assert parsed.urls == ()
    assert parsed.error == "wrong namespace 'http://www.sitemaps.org/schemas/sitemap/0.99'"


def test_malformed_xml_keeps_what_came_before_and_says_where() -> None:
    good = urlset(loc(f"{SITE}/a"), loc(f"{SITE}/b"))
    body = good.replace(b"</urlset>", b"<url><loc>x</url></loc></urlset>")
    parsed = parse(body + b"\n")
    assert found(parsed) == [f"{SITE}/a", f"{SITE}/b"]
    assert (parsed.error or "").startswith("malformed XML at line 2: mismatched tag")
    assert parse(b"<urlset").error == "malformed XML at line 1: unclosed token"


def test_more_than_50000_urls_are_read_up_to_the_cap() -> None:
    lines = "\n".join(f"{SITE}/{n}" for n in range(MAX_URLS + 10))
    parsed = parse(lines.encode(), url=f"{SITE}/sitemap.txt")
    assert len(parsed.urls) == MAX_URLS
    assert parsed.error == "more than 50,000 URLs: the rest not read"
    assert parsed.problem == "more than 50,000 URLs"
    # Refused entries count too: the cap is on what the file lists.
    foreign = "\n".join(f"https://b.example/{n}" for n in range(MAX_URLS + 10))
    parsed = parse(foreign.encode(), url=f"{SITE}/sitemap.txt")
    assert dict(parsed.refused) == {"foreign host": MAX_URLS}
    assert parsed.problem == "more than 50,000 URLs"


def test_a_gzip_bomb_stops_at_50_mib_decoded() -> None:
    inflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = urlset(loc(f"{SITE}/a"))[: -len(b"</urlset>")]
    bomb = inflater.compress(head)
    zeros = b" " * (1 << 20)
    for _ in range(MAX_BYTES // len(zeros) + 8):
        bomb += inflater.compress(zeros)
    bomb += inflater.flush()
    assert len(bomb) < 200_000
    parsed = parse(bomb)
    assert found(parsed) == [f"{SITE}/a"]
    assert parsed.size == MAX_BYTES
    assert parsed.error == "over 50 MiB decoded: the rest not read"


def test_a_plain_file_past_50_mib_is_cut_too() -> None:
    body = urlset(loc(f"{SITE}/a"))[: -len(b"</urlset>")] + b" " * MAX_BYTES + b"</urlset>"
    parsed = parse(body)
    assert found(parsed) == [f"{SITE}/a"]
    assert parsed.error == "over 50 MiB decoded: the rest not read"


def test_broken_gzip_keeps_what_inflated() -> None:
    whole = gzip.compress(urlset(*(loc(f"{SITE}/{n}") for n in range(2000))))
    parsed = parse(whole[: len(whole) // 2])
    assert 0 < len(parsed.urls) < 2000
    assert parsed.error == "gzip data cut short: the rest not read"
    assert (parse(b"\x1f\x8b" + b"\x00" * 40).error or "").startswith("bad gzip data")


def test_deep_nesting_long_text_and_long_lines_are_bounded() -> None:
    deep = b"<urlset>" + b"<a>" * 100 + b"</a>" * 100 + b"</urlset>"
    assert parse(deep).error == "elements nested more than 32 deep"
    huge = urlset(loc(f"{SITE}/" + "a" * 1_000_000))
    parsed = parse(huge)
    assert len(parsed.urls) == 1
    assert len(parsed.urls[0].url) <= 8 * 1024
    long_line = f"{SITE}/ok\n{'x' * 100_000}\n{SITE}/next".encode()
    parsed = parse(long_line, url=f"{SITE}/sitemap.txt")
    assert found(parsed) == [f"{SITE}/ok", f"{SITE}/next"]
    assert dict(parsed.refused) == {"line too long": 1}


def test_an_empty_file_says_so() -> None:
    assert parse(b"").error == "empty file"
    assert parse(b" \n\t ").error == "empty file"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes_parse_without_raising(body: bytes) -> None:
    parsed = parse(body)
    assert parsed.kind in ("urlset", "index", "text", "none")
    for entry in parsed.urls:
        assert entry.url.startswith(SITE + "/")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_any_text_inside_a_urlset_parses_without_raising(text: str) -> None:
    parse(urlset(f"<loc>{text}</loc><lastmod>{text}</lastmod>"))


# -- lastmod -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "when"),
    [
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-05", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-17", datetime(2024, 5, 17, tzinfo=UTC)),
        ("2024-05-17T10:00Z", datetime(2024, 5, 17, 10, tzinfo=UTC)),
        ("2024-05-17T10:00:30.25-05:00", datetime(2024, 5, 17, 15, 0, 30, 250000, tzinfo=UTC)),
        (" 2024-05-17T10:00:00+0200 ", datetime(2024, 5, 17, 8, tzinfo=UTC)),
        ("2024-05-17T10:00:00", datetime(2024, 5, 17, 10, tzinfo=UTC)),
    ],
)
def test_lastmod_w3c_datetimes(text: str, when: datetime) -> None:
    assert parse_lastmod(text) == when.timestamp()


@pytest.mark.parametrize("text", ["", "yesterday", "2024-13-01", "20240517", "2024-05-17T25:00Z"])
def test_lastmod_that_is_no_date_is_none(text: str) -> None:
    assert parse_lastmod(text) is None
