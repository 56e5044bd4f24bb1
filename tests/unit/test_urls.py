"""URL normal form (RFC 3986 section 6 over WHATWG parsing), join, fingerprint, host key."""

from __future__ import annotations

import subprocess
import sys

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from trawl.errors import UrlError
from trawl.urls import (
    TRACKING_PARAM_PREFIXES,
    TRACKING_PARAMS,
    fingerprint,
    host_key,
    join,
    normalize,
    without_tracking,
)


def _reason(url: str, *, strip_tracking: bool = False) -> str:
    with pytest.raises(UrlError) as caught:
        normalize(url, strip_tracking=strip_tracking)
    return caught.value.reason


# --- the examples the issue pins -------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTP://Books.Example/Fiction/Page", "http://books.example/Fiction/Page"),
        ("https://books.example:443/a", "https://books.example/a"),
        ("http://books.example:8080/a", "http://books.example:8080/a"),
        ("https://books.example/a/b/../../c/", "https://books.example/c/"),
        ("https://books.example", "https://books.example/"),
        ("https://books.example/a#reviews", "https://books.example/a"),
        ("https://books.example/%7euser/a%3ab", "https://books.example/~user/a%3Ab"),
        ("https://books.example/%41%2F", "https://books.example/A%2F"),
        ("https://books.example/s?q=Dosa&page=2", "https://books.example/s?q=Dosa&page=2"),
    ],
)
def test_issue_examples(url: str, normal: str) -> None:
    assert normalize(url) == normal
    assert normalize(normal) == normal


# --- scheme and host ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTPS://WWW.EXAMPLE.COM/Path", "https://www.example.com/Path"),
        ("hTtP://MiXeD.Example/", "http://mixed.example/"),
        # IDN: UTS 46 non-transitional, so ß is kept (not mapped to "ss")
        ("http://faß.de/", "http://xn--fa-hia.de/"),
        ("https://Bücher.example/", "https://xn--bcher-kva.example/"),
        ("https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example/"),
        ("https://日本語.jp/", "https://xn--wgv71a119e.jp/"),
        ("https://ｅｘａｍｐｌｅ.com/", "https://example.com/"),  # full-width mapped
        ("https://a.example。com/", "https://a.example.com/"),  # ideographic full stop
        ("https://xn--ls8h.la/", "https://xn--ls8h.la/"),
        # one trailing dot removed, with or without a port
        ("http://a.example./x", "http://a.example/x"),
        ("http://a.example.:8080/x", "http://a.example:8080/x"),
        ("http://A.Example./", "http://a.example/"),
        # IPv6 in RFC 5952 form, brackets kept
        ("http://[2001:DB8:0:0::1]/", "http://[2001:db8::1]/"),
        ("http://[2001:0db8:0000:0000:0000:0000:0000:0001]:8080/", "http://[2001:db8::1]:8080/"),
        ("http://[::1]:80/", "http://[::1]/"),
        # WHATWG IPv4 spellings become dotted decimal
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("http://2130706433/", "http://127.0.0.1/"),
        ("http://0177.0.0.1/", "http://127.0.0.1/"),
        ("http://127.1/", "http://127.0.0.1/"),
        ("http://1.2.3.4./", "http://1.2.3.4/"),
        # percent-escapes in a host are decoded before IDNA
        ("http://a%41.example/", "http://aa.example/"),
    ],
)
def test_scheme_and_host(url: str, normal: str) -> None:
    assert normalize(url) == normal


def test_long_but_valid_labels_are_kept() -> None:
    label = "a" * 63
    assert normalize(f"http://{label}.example/") == f"http://{label}.example/"


# --- ports -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://a.example:80/", "http://a.example/"),
        ("https://a.example:443/", "https://a.example/"),
        ("http://a.example:/", "http://a.example/"),
        ("https://a.example:/x", "https://a.example/x"),
        ("http://a.example:0080/", "http://a.example/"),
        ("http://a.example:443/", "http://a.example:443/"),
        ("https://a.example:80/", "https://a.example:80/"),
        ("http://a.example:8080/", "http://a.example:8080/"),
        ("http://a.example:65535/", "http://a.example:65535/"),
    ],
)
def test_ports(url: str, normal: str) -> None:
    assert normalize(url) == normal


@pytest.mark.parametrize(
    "url",
    ["http://a.example:65536/", "http://a.example:99999/", "http://a.example:8o/", "http://a:x/"],
)
def test_bad_port(url: str) -> None:
    assert _reason(url) == "bad port"


@pytest.mark.parametrize("url", ["http://a.example:0/", "http://a.example:00/"])
def test_port_zero_is_bad(url: str) -> None:
    assert _reason(url) == "bad port"


# --- path --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://a.example", "http://a.example/"),
        ("http://a.example?q", "http://a.example/?q"),
        ("http://a.example/a/./b/../c", "http://a.example/a/c"),
        ("http://a.example/../../x", "http://a.example/x"),
        ("http://a.example/a/b/../../../../x/", "http://a.example/x/"),
        ("http://a.example/a/..", "http://a.example/"),
        ("http://a.example/a/.", "http://a.example/a/"),
        # dot segments written with %2E / %2e
        ("http://a.example/a/%2E/b/%2e%2E/c", "http://a.example/a/c"),
        ("http://a.example/a/.%2e/b", "http://a.example/b"),
        ("http://a.example/a/%2e./b", "http://a.example/b"),
        # a %2E inside a segment is just a dot
        ("http://a.example/a%2Eb/%2E%2Ex", "http://a.example/a.b/..x"),
        # runs of slashes are kept
        ("http://a.example/a//b///c", "http://a.example/a//b///c"),
        ("http://a.example//x", "http://a.example//x"),
        # backslash is a path separator for http(s) (WHATWG)
        ("http://a.example\\b\\c", "http://a.example/b/c"),
        ("http://a.example/b\\..\\c", "http://a.example/c"),
    ],
)
def test_path(url: str, normal: str) -> None:
    assert normalize(url) == normal


# --- percent-encoding ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        # hex upper case
        ("http://a.example/%3a%2f%c3%a9", "http://a.example/%3A%2F%C3%A9"),
        # unreserved decoded, in upper and lower hex
        ("http://a.example/%41%5A%61%7a%30%39", "http://a.example/AZaz09"),
        ("http://a.example/%2D%2E%5F%7E%2d%2e%5f%7e", "http://a.example/-._~-._~"),
        # reserved kept
        (
            "http://a.example/%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D",
            "http://a.example/%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D",
        ),
        ("http://a.example/%25", "http://a.example/%25"),
        ("http://a.example/%25%32%35", "http://a.example/%2525"),
        # space, non-ASCII and forbidden characters are encoded as UTF-8
        ("http://a.example/a b", "http://a.example/a%20b"),
        ("http://a.example/é/€", "http://a.example/%C3%A9/%E2%82%AC"),
        ('http://a.example/"<>`{}', "http://a.example/%22%3C%3E%60%7B%7D"),
        ("http://a.example/|^[]", "http://a.example/%7C%5E%5B%5D"),
        ("http://a.example/\x7f\x00x", "http://a.example/%7F%00x"),
        # characters RFC 3986 allows in a path stay literal
        ("http://a.example/!$&'()*+,;=:@", "http://a.example/!$&'()*+,;=:@"),
        # a stray % is kept as it is (not encoded as %25)
        ("http://a.example/100%", "http://a.example/100%"),
        ("http://a.example/%zz%4", "http://a.example/%zz%4"),
        ("http://a.example/%%7e", "http://a.example/%~"),
        # ... and a hex digit decoded right after it would forge an escape: kept encoded
        ("http://a.example/%%34%31", "http://a.example/%%341"),
        ("http://a.example/%4%31", "http://a.example/%4%31"),
        ("http://a.example/%%41", "http://a.example/%%41"),
        ("http://a.example/%%47", "http://a.example/%G"),
    ],
)
def test_percent_encoding(url: str, normal: str) -> None:
    assert normalize(url) == normal
    assert normalize(normal) == normal


# --- userinfo ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://user:pass@a.example/", "http://user:pass@a.example/"),
        ("http://User@A.example/", "http://User@a.example/"),
        ("http://us%65r:p%3a@a.example./", "http://user:p%3A@a.example/"),
        ("http://u:p@a.example:80/", "http://u:p@a.example/"),
        # WHATWG drops an empty userinfo
        ("http://@a.example/", "http://a.example/"),
        ("http://:@a.example/", "http://a.example/"),
    ],
)
def test_userinfo(url: str, normal: str) -> None:
    assert normalize(url) == normal


# --- query ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://a.example/s?b=2&a=1", "http://a.example/s?b=2&a=1"),
        ("http://a.example/s?a=&&b", "http://a.example/s?a=&&b"),
        ("http://a.example/p?", "http://a.example/p?"),
        ("http://a.example/p?#frag", "http://a.example/p?"),
        ("http://a.example/?q=%7e%3a%41", "http://a.example/?q=~%3AA"),
        ("http://a.example/?q=a b&r=é", "http://a.example/?q=a%20b&r=%C3%A9"),
        ("http://a.example/?q=`{}|^[]\\", "http://a.example/?q=%60%7B%7D%7C%5E%5B%5D%5C"),
        ("http://a.example/?q=/?:@!$'()*+,;=", "http://a.example/?q=/?:@!$%27()*+,;="),
        ("http://a.example/?q=100%", "http://a.example/?q=100%"),
        ("http://a.example/?utm_source=x", "http://a.example/?utm_source=x"),
    ],
)
def test_query(url: str, normal: str) -> None:
    assert normalize(url) == normal


@pytest.mark.parametrize(
    ("url", "stripped"),
    [
        ("http://a.example/?utm_source=x", "http://a.example/"),
        ("http://a.example/?utm_source=x&utm_medium=y&utm_foo", "http://a.example/"),
        ("http://a.example/p?id=7&utm_campaign=z&x=", "http://a.example/p?id=7&x="),
        ("http://a.example/p?gclid=1&b=2&fbclid=3&a=1", "http://a.example/p?b=2&a=1"),
        ("http://a.example/p?UTM_Source=x&GCLID=1&keep=1", "http://a.example/p?keep=1"),
        ("http://a.example/p?utm%5Fsource=x&k=1", "http://a.example/p?k=1"),
        ("http://a.example/p?utm_source=x&", "http://a.example/p"),
        ("http://a.example/p?a&&utm_source=x", "http://a.example/p?a&"),
        ("http://a.example/p?gclidx=1&xgclid=2", "http://a.example/p?gclidx=1&xgclid=2"),
        ("http://a.example/p?", "http://a.example/p?"),
        ("http://a.example/p?q=utm_source", "http://a.example/p?q=utm_source"),
        ("http://a.example/p?utm_source=x#f", "http://a.example/p"),
        ("http://a.example/p?_hsenc=1&_hsmi=2&mc_cid=3&mc_eid=4&msclkid=5", "http://a.example/p"),
        ("http://a.example/p?dclid=1&gbraid=2&wbraid=3&yclid=4&igshid=5", "http://a.example/p"),
    ],
)
def test_strip_tracking(url: str, stripped: str) -> None:
    assert normalize(url, strip_tracking=True) == stripped
    assert normalize(stripped, strip_tracking=True) == stripped


def test_tracking_is_kept_by_default() -> None:
    url = "http://a.example/p?utm_source=x&gclid=1"
    assert normalize(url) == url


def test_tracking_list_is_lower_case_and_documented() -> None:
    for name in ("gclid", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "mc_cid", "mc_eid"):
        assert name in TRACKING_PARAMS
    for name in ("yclid", "_hsenc", "_hsmi", "igshid"):
        assert name in TRACKING_PARAMS
    for name in ("_ga", "_gl", "ttclid", "twclid", "li_fat_id", "srsltid", "oly_anon_id"):
        assert name in TRACKING_PARAMS
    for name in ("oly_enc_id", "vero_id", "wickedid", "rb_clickid", "s_cid"):
        assert name in TRACKING_PARAMS
    assert all(name == name.lower() for name in TRACKING_PARAMS)
    # Names sites use to choose content are never on it.
    for name in ("ref", "source", "id", "page", "p", "q", "s", "lang", "sid", "campaign"):
        assert name not in TRACKING_PARAMS
        assert not name.startswith(TRACKING_PARAM_PREFIXES)


@pytest.mark.parametrize(
    ("url", "stripped"),
    [
        ("http://a.example/p?mtm_campaign=x&hsa_acc=1&k=1", "http://a.example/p?k=1"),
        ("http://a.example/p?wt.mc_id=x&pk_campaign=y&_ga=2.1", "http://a.example/p"),
        ("http://a.example/p?ttclid=1&twclid=2&srsltid=3&wickedid=4", "http://a.example/p"),
        ("http://a.example/p?ref=home&sid=7", "http://a.example/p?ref=home&sid=7"),
        ("http://a.example/p", "http://a.example/p"),
    ],
)
def test_without_tracking_is_normalize_stripping(url: str, stripped: str) -> None:
    assert without_tracking(url) == stripped
    assert normalize(url, strip_tracking=True) == stripped


# --- fragment, whitespace and controls ------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://a.example/a#", "http://a.example/a"),
        ("http://a.example/a#b#c", "http://a.example/a"),
        ("http://a.example#x", "http://a.example/"),
        ("http://a.example/a?b#c?d", "http://a.example/a?b"),
        ("  http://a.example/x \n", "http://a.example/x"),
        ("\x00\x1fhttp://a.example/x\x01 ", "http://a.example/x"),
        ("ht\ttp://a.exa\nmple/x\ry", "http://a.example/xy"),
        ("http://a.example/a\tb?c\nd", "http://a.example/ab?cd"),
        # WHATWG: a special scheme ignores missing or extra slashes
        ("http:a.example/x", "http://a.example/x"),
        ("http:///a.example/x", "http://a.example/x"),
        ("https:\\\\a.example\\x", "https://a.example/x"),
    ],
)
def test_fragment_whitespace_controls(url: str, normal: str) -> None:
    assert normalize(url) == normal


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["", " ", "a.example", "/path", "//a.example/x", "?q", "#f"])
def test_no_scheme(url: str) -> None:
    assert _reason(url) == "no scheme"


@pytest.mark.parametrize(
    "url",
    [
        "mailto:someone@a.example",
        "javascript:alert(1)",
        "JavaScript:void(0)",
        "data:text/html,<p>x</p>",
        "file:///etc/passwd",
        "ftp://a.example/f",
        "ws://a.example/",
        "tel:+1234",
        "about:blank",
        "blob:https://a.example/uuid",
        "httpx://a.example/",
        "localhost:8080/x",
    ],
)
def test_unsupported_scheme(url: str) -> None:
    assert _reason(url) == "unsupported scheme"


@pytest.mark.parametrize("url", ["http://", "https://", "http:", "http://:80/", "http://./"])
def test_empty_host(url: str) -> None:
    assert _reason(url) == "empty host"


@pytest.mark.parametrize(
    "url",
    [
        "http://xn--zz.example/",  # invalid punycode
        "http://xn--a.example/",
        "http://xn--.example/",
        "http://" + "ä" * 60 + ".example/",  # the A-label is longer than 63
        "http://xn--4caaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.de/",
        "http://a\u2028b.example/",  # disallowed code point
        "http://\u0301a.example/",  # label starts with a combining mark
        "http://a\u200db.example/",  # ZERO WIDTH JOINER out of context
        "http://\u05d0a.example/",  # bidi rule
    ],
)
def test_bad_idn(url: str) -> None:
    assert _reason(url) == "bad IDN"


@pytest.mark.parametrize(
    "url",
    [
        "http://a b/",
        "http://a<b/",
        "http://a..b/",
        "http://.a.example/",
        "http://a.example../",
        "http://" + "a" * 64 + ".example/",
        "http://" + ".".join(["a" * 50] * 6) + "/",  # longer than 253
        "http://[::1/",
        "http://[1:2:3:4:5:6:7:8:9]/",
        "http://[fe80::1%25eth0]/",
        "http://256.0.0.1/",
        "http://1.2.3.4.5/",
        "http://a.123/",
    ],
)
def test_bad_host(url: str) -> None:
    assert _reason(url) == "bad host"


@pytest.mark.parametrize(
    "url",
    [
        "http://a.example:" + "9" * 5000 + "/",
        "http://a.example:" + "0" * 5000 + "80/\ud800",
        "http://" + "a" * 100_000 + "/",
        "http://[" + "1:" * 5000 + "]/",
        "\ud800:x",
        "http:\ud800",
    ],
)
def test_huge_or_odd_inputs_only_raise_url_error(url: str) -> None:
    with pytest.raises(UrlError):
        normalize(url)
    with pytest.raises(UrlError):
        join("https://a.example/", url)


def test_long_runs_of_stray_percent_signs_are_kept() -> None:
    url = "http://a.example/" + "%" * 10_000 + "%41"
    assert normalize(url) == "http://a.example/" + "%" * 10_000 + "%41"
    assert normalize(normalize(url)) == normalize(url)


def test_url_error_is_a_value_error_with_reason_and_url() -> None:
    with pytest.raises(ValueError, match="unsupported scheme") as caught:
        normalize("mailto:x")
    assert isinstance(caught.value, UrlError)
    assert caught.value.url == "mailto:x"


def test_lone_surrogate_is_a_url_error() -> None:
    assert _reason("http://a.example/\ud800") == "unparseable URL"
    assert _reason("http://\ud800.example/") == "bad IDN"


# --- join ------------------------------------------------------------------------------------

_RFC_BASE = "http://a/b/c/d;p?q"


@pytest.mark.parametrize(
    ("href", "joined"),
    [
        # RFC 3986 section 5.4.1, normal examples (fragments dropped)
        ("g:h", None),
        ("g", "http://a/b/c/g"),
        ("./g", "http://a/b/c/g"),
        ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"),
        ("//g", "http://g/"),
        ("?y", "http://a/b/c/d;p?y"),
        ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q"),
        ("g#s", "http://a/b/c/g"),
        ("g?y#s", "http://a/b/c/g?y"),
        (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"),
        ("g;x?y#s", "http://a/b/c/g;x?y"),
        ("", "http://a/b/c/d;p?q"),
        (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"),
        ("..", "http://a/b/"),
        ("../", "http://a/b/"),
        ("../g", "http://a/b/g"),
        ("../..", "http://a/"),
        ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        # section 5.4.2, abnormal examples
        ("../../../g", "http://a/g"),
        ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"),
        ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."),
        (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"),
        ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g"),
        ("g#s/../x", "http://a/b/c/g"),
        ("http:g", "http://a/b/c/g"),  # the non-strict reading
    ],
)
def test_join_rfc3986_examples(href: str, joined: str | None) -> None:
    if joined is None:
        with pytest.raises(UrlError, match="unsupported scheme"):
            join(_RFC_BASE, href)
    else:
        assert join(_RFC_BASE, href) == joined


@pytest.mark.parametrize(
    ("base", "href", "joined"),
    [
        ("https://a.example/x/y", "HTTPS://B.Example:443/%7e", "https://b.example/~"),
        ("https://a.example/x/y", "  z \n", "https://a.example/x/z"),
        ("https://a.example/x/y", "\\z\\w", "https://a.example/z/w"),
        ("https://a.example/x/y", "//b.example", "https://b.example/"),
        ("https://a.example/x/y", "http:z", "http://z/"),
        ("https://a.example/x/y", "https:z", "https://a.example/x/z"),
        ("https://a.example/x/y#frag", "", "https://a.example/x/y"),
        ("https://a.example/x/y", "?q=%7e", "https://a.example/x/y?q=~"),
        ("https://a.example/x/y", "b%20c/d", "https://a.example/x/b%20c/d"),
        ("https://a.example/x/y", "ü", "https://a.example/x/%C3%BC"),
        ("HTTPS://A.EXAMPLE:443/x/y", "z", "https://a.example/x/z"),
        ("mailto:x", "https://a.example/", "https://a.example/"),
    ],
)
def test_join(base: str, href: str, joined: str) -> None:
    assert join(base, href) == joined


def test_join_strip_tracking() -> None:
    base = "https://a.example/x/"
    assert join(base, "p?utm_source=n&id=3", strip_tracking=True) == "https://a.example/x/p?id=3"
    assert join(base, "p?utm_source=n&id=3") == "https://a.example/x/p?utm_source=n&id=3"


@pytest.mark.parametrize(
    ("base", "href", "reason"),
    [
        ("https://a.example/", "mailto:x@y", "unsupported scheme"),
        ("https://a.example/", "javascript:void(0)", "unsupported scheme"),
        ("https://a.example/", "//b.example:99999/", "bad port"),
        ("https://a.example/", "http://b.example:x/", "bad port"),
        ("https://a.example/", "//xn--zz/", "bad IDN"),
        ("https://a.example/", "http://a..b/", "bad host"),
        ("not a url", "g", "bad base URL"),
        ("", "https://a.example/", "bad base URL"),
        ("mailto:x", "g", "unsupported scheme"),
    ],
)
def test_join_errors(base: str, href: str, reason: str) -> None:
    with pytest.raises(UrlError) as caught:
        join(base, href)
    assert caught.value.reason == reason


# --- fingerprint and host key ------------------------------------------------------------------


def test_fingerprint_is_xxh3_as_signed_int64() -> None:
    for url in ("https://books.example/", "http://a.example/p?q=1", "https://x/é"):
        expected = int.from_bytes(xxhash.xxh3_64_digest(url.encode()), "big", signed=True)
        assert fingerprint(url) == expected
        assert -(2**63) <= fingerprint(url) < 2**63


def test_fingerprint_is_pinned_and_deterministic_across_processes() -> None:
    url = "https://books.example/"
    code = f"from trawl.urls import fingerprint; print(fingerprint({url!r}))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outputs == {str(fingerprint(url))}
    assert fingerprint(url) == int.from_bytes(
        xxhash.xxh3_64_digest(b"https://books.example/"), "big", signed=True
    )


def test_fingerprint_covers_negative_values_and_differs() -> None:
    values = {fingerprint(f"https://a.example/{i}") for i in range(200)}
    assert len(values) == 200
    assert any(v < 0 for v in values) and any(v > 0 for v in values)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://a.example/", "a.example"),
        ("https://a.example/x?y", "a.example"),
        ("http://a.example:8080/", "a.example:8080"),
        ("https://a.example:80/", "a.example:80"),
        ("https://user:pw@a.example:8443/", "a.example:8443"),
        ("http://[2001:db8::1]/", "[2001:db8::1]"),
        ("http://[2001:db8::1]:81/", "[2001:db8::1]:81"),
        ("http://127.0.0.1/", "127.0.0.1"),
        ("https://xn--fa-hia.de/", "xn--fa-hia.de"),
    ],
)
def test_host_key(url: str, key: str) -> None:
    assert host_key(url) == key


def test_host_key_shares_http_and_https_but_not_ports() -> None:
    assert host_key(normalize("http://A.example:80/")) == host_key(normalize("https://a.example/"))
    assert host_key(normalize("http://a.example:8080/")) != host_key(normalize("http://a.example/"))
    assert host_key(normalize("https://Faß.DE./x")) == "xn--fa-hia.de"


@pytest.mark.parametrize("url", ["ftp://a/", "mailto:x", "a.example", "http://", "http:///"])
def test_host_key_rejects_non_urls(url: str) -> None:
    with pytest.raises(UrlError):
        host_key(url)


# --- properties ---------------------------------------------------------------------------------

_PIECE = st.sampled_from(
    [
        "a", "B", "0", "-", ".", "..", "/", "//", "\\", "%", "%2e", "%2E", "%41", "%7e", "%3a",
        "%zz", "%4", "%%", "%25", "?", "&", "=", "#", "@", ":", ";", "[", "]", "|", "^", "`",
        "{", "}", " ", "\t", "\n", "\x00", "\x7f", "é", "ß", "€", "日", "\u200d", "\u0301",
        "utm_source=x", "gclid=1", "xn--", "~", "+", "!", "'", '"', "<", ">",
    ]
)  # fmt: skip
_TEXT = st.lists(_PIECE | st.text(max_size=3), max_size=8).map("".join)
_HOST = st.sampled_from(
    [
        "a.example", "A.EXAMPLE.", "faß.de", "bücher.example", "xn--zz", "xn--fa-hia.de",
        "[::1]", "[2001:DB8::1]", "[::ffff:1.2.3.4]", "0x7f.1", "127.1", "2130706433",
        "1.2.3.4.", "..", ".", "", "a..b", "localhost", "a_b.example", "%41.example",
        "a" * 64, "ｅｘ.com", "a.example..",
    ]
) | _TEXT  # fmt: skip
_URLISH = st.builds(
    lambda scheme, sep, user, host, port, path, query, frag: (
        f"{scheme}{sep}{user}{host}{port}{path}{query}{frag}"
    ),
    st.sampled_from(["http", "https", "HTTP", "hTtPs", "ftp", "mailto", "javascript", ""]),
    st.sampled_from(["://", ":", ":/", ":\\\\", "//", ":///", ""]),
    st.sampled_from(["", "u@", "u:p@", ":@", "%41:%3a@", "a b@"]) | _TEXT.map(lambda t: t + "@"),
    _HOST,
    st.sampled_from(["", ":", ":80", ":443", ":8080", ":0", ":65536", ":x", ":00080"]),
    st.lists(_TEXT, max_size=5).map(lambda parts: "/" + "/".join(parts) if parts else ""),
    st.sampled_from(["", "?"]) | _TEXT.map(lambda t: "?" + t),
    st.sampled_from(["", "#", "#f"]) | _TEXT.map(lambda t: "#" + t),
)
_BASE = st.sampled_from(
    ["http://a/b/c/d;p?q", "https://a.example/x/y?z#f", "https://[::1]:8080/", "HTTP://A.B./%7e/"]
)


def _normal_or_none(url: str, strip_tracking: bool = False) -> str | None:
    try:
        return normalize(url, strip_tracking=strip_tracking)
    except UrlError:
        return None


@given(st.text() | _URLISH, st.booleans())
def test_normalize_is_idempotent_and_raises_only_url_error(url: str, strip: bool) -> None:
    normal = _normal_or_none(url, strip)
    if normal is not None:
        assert normalize(normal, strip_tracking=strip) == normal
        assert normal.isascii()
        assert "#" not in normal
        assert normal.startswith(("http://", "https://"))
        host_key(normal)  # a normal form always has a host key


@given(_BASE | _URLISH, st.text() | _URLISH | _TEXT, st.booleans())
def test_join_results_are_normal_and_raise_only_url_error(
    base: str, href: str, strip: bool
) -> None:
    try:
        joined = join(base, href, strip_tracking=strip)
    except UrlError:
        return
    assert normalize(joined, strip_tracking=strip) == joined


@given(_URLISH)
def test_stripping_tracking_only_removes_parameters(url: str) -> None:
    normal = _normal_or_none(url)
    if normal is not None:
        stripped = normalize(normal, strip_tracking=True)
        assert normal.startswith(stripped.partition("?")[0])
        kept = stripped.partition("?")[2].split("&")
        assert all(p in normal.partition("?")[2].split("&") for p in kept if p)
        assert without_tracking(normal) == stripped
