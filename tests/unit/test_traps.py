"""Trap limits and scope."""

from __future__ import annotations

import pytest

from trawl.frontier.traps import ScopeFilter, TrapLimits, hostname, registered_domain, trap_reason

LIMITS = TrapLimits(max_depth=3, max_url_length=80, max_query_params=3, max_repeated_segments=2)


@pytest.mark.parametrize(
    ("url", "depth", "reason"),
    [
        ("https://a.example/x", 3, None),
        ("https://a.example/x", 4, "too deep"),
        ("https://a.example/" + "x" * 80, 0, "url too long"),
        ("https://a.example/s?a=1&b=2&c=3", 0, None),
        ("https://a.example/s?a=1&b=2&c=3&d=4", 0, "too many query parameters"),
        ("https://a.example/a/b/a/b/", 0, None),
        ("https://a.example/a/b/a/b/a/b/", 0, "repeated path segments"),
        ("https://a.example/2026/01/01/", 0, None),
    ],
)
def test_trap_reason(url: str, depth: int, reason: str | None) -> None:
    assert trap_reason(url, depth, LIMITS) == reason


def test_registered_domain() -> None:
    assert registered_domain("www.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("a.b.books.test") == "books.test"
    assert registered_domain("127.0.0.1") == "127.0.0.1"
    assert hostname("books.test:8080") == "books.test"
    assert hostname("[::1]:8080") == "[::1]"


def test_scope_kinds() -> None:
    host = ScopeFilter("host", hosts=["books.test:8080"])
    assert host.allows("books.test:8080")
    assert host.allows("books.test")  # same name, other port: same site
    assert not host.allows("www.books.test")
    domain = ScopeFilter("domain", hosts=["www.books.test"])
    assert domain.allows("shop.books.test:9000")
    assert not domain.allows("news.test")
    allow = ScopeFilter("allowlist", allowed=["sample"])
    assert allow.allows("news-03.sample:8080")
    assert not allow.allows("news.test")
    assert ScopeFilter("any").allows("anything.example")


def test_allowlist_matches_hosts_and_their_subdomains_only() -> None:
    # Thousands of allowed hosts are looked up by label (a set), not scanned per link.
    many = [f"h{i}.sample" for i in range(5000)]
    allow = ScopeFilter("allowlist", allowed=[*many, "Sub.Example.COM.", "127.0.0.1"])
    for name in ("h0.sample", "h4999.sample:8080", "x.y.h7.sample", "sub.example.com"):
        assert allow.allows(name), name
    assert allow.allows("a.sub.example.com") and allow.allows("127.0.0.1:80")
    for name in ("h5000.sample", "h7.sample.evil", "xh7.sample", "example.com", "sample"):
        assert not allow.allows(name), name
    assert not allow.allows("1.127.0.0.2") and not ScopeFilter("allowlist").allows("a.test")


def test_scope_grows_with_redirected_seeds() -> None:
    scope = ScopeFilter("host", hosts=["a.test"])
    scope.add_host("www.a.test:443")
    assert scope.allows("www.a.test")
    assert scope.hosts == frozenset({"a.test", "www.a.test"})
