"""The parse worker's job: one page in, text, links and signals out."""

from __future__ import annotations

import hashlib
import pickle
import random

from hypothesis import given
from hypothesis import strategies as st

from trawl.parse._extract_guard import bound_tags
from trawl.parse.page import PageInput, ParseOptions, parse_page, text_hash

ARTICLE = "<p>" + " ".join(["The river town kept its old bridge and its market."] * 30) + "</p>"


def page(
    html: str, *, headers: tuple[tuple[str, str], ...] = (), url: str = "http://a.test/x/y"
) -> PageInput:
    return PageInput(url=url, headers=headers, body=html.encode(), content_type="text/html")


def test_links_resolved_normalised_and_filtered() -> None:
    html = f"""<html><head><title>T</title><link rel=canonical href="/x/y#top">
    <link rel=stylesheet href="/s.css"><link rel=alternate href="/x/y?lang=fr"></head>
    <body>{ARTICLE}
    <a href="../Z/%7eq">rel</a><a href="HTTP://B.test:80/p">abs</a><a href="mailto:x@a.test">m</a>
    <a href="javascript:void(0)">j</a><a href="data:text/html,x">d</a><a href="#frag">f</a>
    <a href="/n" rel="nofollow">n</a><area href="/area"><iframe src="/frame"></iframe>
    <a href="http://[::1">bad</a></body></html>"""
    out = parse_page(page(html), ParseOptions())
    assert out.canonical == "http://a.test/x/y"
    assert set(out.links) == {
        "http://a.test/Z/~q",
        "http://b.test/p",
        "http://a.test/x/y",
        "http://a.test/x/y?lang=fr",
        "http://a.test/area",
        "http://a.test/frame",
    }
    assert out.nofollow_links == 1
    assert out.bad_links >= 3  # mailto, javascript, data, the broken IPv6 literal


def test_rel_nofollow_links_followed_when_asked() -> None:
    html = f'<body>{ARTICLE}<a href="/n" rel="nofollow">n</a></body>'
    out = parse_page(page(html), ParseOptions(follow_nofollow_links=True))
    assert "http://a.test/n" in out.links


def test_base_href() -> None:
    html = (
        '<head><base href="http://a.test/base/dir/"></head>'
        f'<body>{ARTICLE}<a href="page">p</a></body>'
    )
    out = parse_page(page(html), ParseOptions())
    assert out.base_url == "http://a.test/base/dir/"
    assert out.links == ("http://a.test/base/dir/page",)


def test_meta_and_header_robots() -> None:
    html = (
        '<head><meta name="robots" content="nofollow"></head>'
        f'<body>{ARTICLE}<a href="/n">n</a></body>'
    )
    out = parse_page(page(html, headers=(("X-Robots-Tag", "trawl: noindex"),)), ParseOptions())
    assert out.noindex
    assert out.nofollow
    assert out.links == ()


def test_text_title_language_and_hash() -> None:
    html = (
        "<html><head><title>River towns</title></head>"
        f"<body><article>{ARTICLE}</article></body></html>"
    )
    out = parse_page(page(html), ParseOptions())
    assert out.title == "River towns"
    assert "old bridge" in out.text
    assert out.language == "en"
    assert out.language_confidence is not None
    assert out.content_hash == text_hash(out.text)
    assert text_hash("a  b\n c") == text_hash("a b c")


_SPACES_AND_WORDS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1fab.\x00"


@given(
    st.text(alphabet=st.sampled_from(_SPACES_AND_WORDS), max_size=80)
    | st.text(alphabet=st.sampled_from(_SPACES_AND_WORDS + "\x85\xa0\u2028\u3000é"), max_size=80)
)
def test_text_hash_is_sha256_of_the_words_joined_by_single_spaces(text: str) -> None:
    expected = hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()
    assert text_hash(text) == expected


def test_license_link() -> None:
    html = (
        '<head><link rel="license" href="https://creativecommons.org/licenses/by/4.0/"></head>'
        f"<body>{ARTICLE}</body>"
    )
    out = parse_page(page(html), ParseOptions())
    assert out.license == "https://creativecommons.org/licenses/by/4.0/"


def test_hostile_input_never_raises_and_result_pickles() -> None:
    for body in (b"", b"\x00\xff" * 1000, b"<" * 10_000, b"<div>" * 50_000, b"<a href='\x00'>"):
        out = parse_page(PageInput(url="http://a.test/", headers=(), body=body), ParseOptions())
        assert pickle.loads(pickle.dumps(out)) == out
    empty = parse_page(PageInput(url="http://a.test/", headers=(), body=b""), ParseOptions())
    assert empty.content_hash is None


def test_a_page_is_parsed_up_to_its_tag_cap_and_the_rest_is_counted() -> None:
    """``memory.parse_tags``: what bounds a parse worker is the tree it builds."""
    anchors = "".join(f'<p><a href="/p/{n}">link {n}</a></p>' for n in range(50))
    html = f"<html><head><title>T</title></head><body>{ARTICLE}{anchors}</body></html>"
    whole = parse_page(page(html), ParseOptions())
    assert whole.tags_over_cap == 0 and len(whole.links) == 50
    tags = html.count("<")
    head = html[: html.index('<p><a href="/p/10"')].count("<")  # the tags before link 10
    cut = parse_page(page(html), ParseOptions(max_tags=head))
    assert cut.tags_over_cap == tags - head
    assert cut.links == tuple(f"http://a.test/p/{n}" for n in range(10))
    assert cut.title == whole.title and cut.text.startswith(whole.text[:200])
    assert parse_page(page(html), ParseOptions(max_tags=tags)).tags_over_cap == 0


def test_the_tag_bound_cuts_before_a_tag() -> None:
    assert bound_tags(b"a<b>c</b>d", 0, 2) == (b"a<b>c</b>d", 0)  # 0: no bound
    assert bound_tags(b"a<b>c</b>d", 2, 2) == (b"a<b>c</b>d", 0)
    assert bound_tags(b"a<b>c</b>d", 1, 2) == (b"a<b>c", 1)
    assert bound_tags("<é>ü<x>".encode(), 1, 2) == ("<é>ü".encode(), 1)
    page_text = b"x" * 1000
    assert bound_tags(page_text, 1, 0)[0] is page_text


def test_links_stop_at_the_per_page_cap_and_the_rest_are_counted() -> None:
    anchors = "".join(f'<a href="/p/{n}">{n}</a>' for n in range(12))
    html = (
        f"<html><head><title>T</title></head><body>{ARTICLE}{anchors}"
        # After the cap: a repeat of a kept link (not dropped), a nofollow link (not
        # followed anyway), a broken href (no URL), and a canonical link (still read).
        '<a href="/p/1">again</a><a href="/x" rel="nofollow">n</a><a href="http://[::1">b</a>'
        '<link rel="canonical" href="/canonical"></body></html>'
    )
    out = parse_page(page(html), ParseOptions(max_links=5))
    assert out.links == tuple(f"http://a.test/p/{n}" for n in range(5))
    # /p/5../p/11, then the broken href and the canonical as a link, both unparsed.
    assert out.links_over_cap == 7 + 2
    assert out.canonical == "http://a.test/canonical"
    assert out.nofollow_links == 1
    every = parse_page(page(html), ParseOptions(max_links=0))
    assert len(every.links) == 13  # twelve and the canonical (a link rel=canonical)
    assert every.links_over_cap == 0
    assert parse_page(page(html), ParseOptions()).links_over_cap == 0  # 5,000 by default


# -- bodies that are not text (issue 16) ----------------------------------------------------

ENGLISH_PAGE = (
    f"<html><head><title>River towns</title></head><body><article>{ARTICLE}</article></body></html>"
)


def raw(body: bytes, content_type: str | None = "text/html") -> PageInput:
    return PageInput(url="http://a.test/p", headers=(), body=body, content_type=content_type)


def test_utf16_header_on_an_ascii_body_gives_the_english_text() -> None:
    out = parse_page(raw(ENGLISH_PAGE.encode(), "text/html; charset=utf-16"), ParseOptions())
    assert out.not_text is None
    assert out.encoding == "utf-8"
    assert out.title == "River towns"
    assert "old bridge" in out.text
    assert out.language == "en"
    assert out.content_hash == text_hash(out.text)


def test_utf32_header_on_an_ascii_body_gives_the_english_text() -> None:
    out = parse_page(raw(ENGLISH_PAGE.encode(), "text/html; charset=utf-32"), ParseOptions())
    assert (out.not_text, out.language) == (None, "en")
    assert "old bridge" in out.text


def test_random_bytes_as_html_are_not_a_document() -> None:
    body = random.Random(7).randbytes(256 * 1024)
    out = parse_page(raw(body), ParseOptions(quality=True))
    assert out.not_text == "binary content"
    assert (out.text, out.title, out.content_hash, out.language, out.links) == (
        "",
        "",
        None,
        None,
        (),
    )
    assert out.quality is None and out.near_signature is None and out.error is None


def test_a_body_of_nuls_is_not_a_document() -> None:
    out = parse_page(raw(bytes(100_000)), ParseOptions())
    assert out.not_text == "binary content"
    assert out.content_hash is None


def test_png_bytes_served_as_html_are_not_a_document() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(5).randbytes(20_000)
    for ctype in ("text/html", None, "text/html; charset=utf-8"):
        out = parse_page(raw(png, ctype), ParseOptions())
        assert out.not_text == "binary content", ctype


def test_a_mostly_valid_page_with_a_few_bad_bytes_is_still_a_document() -> None:
    good = ENGLISH_PAGE.encode()
    body = good[:400] + b"\xff\xfe" + good[400:1200] + b"\x00\x01" + good[1200:]
    out = parse_page(raw(body, "text/html; charset=utf-8"), ParseOptions())
    assert out.not_text is None
    assert out.language == "en"
    assert out.content_hash is not None
    assert "old bridge" in out.text


def test_link_graph_keeps_anchor_texts_and_the_links_not_followed() -> None:
    html = (
        f"<body>{ARTICLE}<a href='/a'>  River\n <b>towns</b> </a><a href='/img'><img alt='Map'></a>"
        "<a href='/t' title='Tip'></a><area href='/ar' alt='Zone'><a href='/n' rel='nofollow'>"
        f"Sponsor</a><a href='/a'>again</a><a href='/long'>{'w ' * 80}</a>"
        "<a href='/both' rel='nofollow'>x</a><a href='/both'>y</a></body>"
    )
    out = parse_page(page(html), ParseOptions(link_graph=True))
    graph = dict(zip(out.links, out.anchors, strict=True))
    assert graph["http://a.test/a"] == "River towns"  # the first anchor of a repeated link
    assert graph["http://a.test/img"] == "Map"
    assert graph["http://a.test/t"] == "Tip"
    assert graph["http://a.test/ar"] == "Zone"
    assert graph["http://a.test/both"] == "y"  # followed elsewhere on the page
    assert len(graph["http://a.test/long"]) == 100
    assert out.unfollowed == (("http://a.test/n", "Sponsor"),)
    assert out.nofollow_links == 2
    plain = parse_page(page(html), ParseOptions())
    assert plain.links == out.links and plain.anchors == () and plain.unfollowed == ()


def test_link_graph_of_a_nofollow_page_holds_every_link_unfollowed() -> None:
    html = (
        '<head><meta name="robots" content="nofollow"></head>'
        f'<body>{ARTICLE}<a href="/n">one</a><a href="/m">two</a></body>'
    )
    out = parse_page(page(html), ParseOptions(link_graph=True, max_links=1))
    assert out.links == ()
    assert out.unfollowed == (("http://a.test/n", "one"),)  # as capped as followed links


def test_parse_jobs_and_results_pickle_as_their_fields() -> None:
    from dataclasses import dataclass, field

    import pytest

    from trawl.dedup.minhash import MinHasher
    from trawl.parse.page import PageInput, ParsedPage, ParseOptions
    from trawl.pickling import by_fields

    job = PageInput(url="http://a.test/", headers=(("a", "b"),), body=b"<p>x", rendered=True)
    options = ParseOptions(near=MinHasher(perms=64, bands=16), link_graph=True, max_tags=9)
    page = parse_page(PageInput(url="http://a.test/", headers=(), body=b"<p>x, y.</p>"), options)
    page = ParsedPage(**{**{f: getattr(page, f) for f in page.__slots__}, "meta": {"k": "v"}})
    quality = parse_page(
        PageInput(
            url="http://a.test/",
            headers=(),
            body=b'<meta name="tdm-reservation" content="1"><p>Some words here.</p>',
        ),
        ParseOptions(quality=True),
    )
    assert quality.quality is not None and quality.tdm is not None
    nested = (quality, quality.quality, quality.tdm, options.near)
    for value in (job, options, page, *nested):
        again = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == value and type(again) is type(value)
        assert value.__reduce__()[0] is type(value)  # by_fields, not dataclass state

    @by_fields
    @dataclass(frozen=True, slots=True)
    class One:
        x: int

    assert One(3).__reduce__() == (One, (3,))

    with pytest.raises(TypeError):

        @by_fields
        @dataclass
        class Hidden:
            x: int
            y: int = field(init=False, default=0)
