"""robots.txt parsing, group selection and matching (trawl.fetch.robots).

Includes the RFC 9309 section 5 examples, the examples of Google's robots.txt
documentation (as encoded in google/robotstxt's tests), and the cases where Protego
(Scrapy's parser) is known to go wrong: token prefix matching, a BOM hiding the first
group, and groups split by unknown lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from trawl.fetch.robots import MAX_BYTES, RobotsGroup, RobotsRule, RobotsRules


def allowed(body: str | bytes, agents: str | Sequence[str], url: str) -> bool:
    raw = body.encode() if isinstance(body, str) else body
    return RobotsRules.parse(raw).is_allowed(url, agents)


def rules_of(body: str | bytes, agent: str) -> list[tuple[bool, str]]:
    """The (allow, pattern) rules of every group that names ``agent``."""
    raw = body.encode() if isinstance(body, str) else body
    groups = RobotsRules.parse(raw).groups
    return [(r.allow, r.pattern) for g in groups if agent in g.agents for r in g.rules]


# --- Group selection by product token -------------------------------------------------


@pytest.mark.parametrize(
    ("line", "applies"),
    [
        ("User-agent: foobot", True),
        ("User-agent: FOOBOT", True),
        ("User-agent: FooBot", True),
        ("User-agent: FooBot/1.0", True),
        ("User-agent: FooBot 1.0 (compatible)", True),
        ("User-agent:FooBot", True),
        ("User-agent: Foo", False),  # Protego matches token prefixes: must not
        ("User-agent: Foo Bot", False),  # the token is "Foo"
        ("User-agent: FooBotExtra", False),
        ("User-agent: Bot", False),
        ("User-agent: *FooBot", False),
        ("User-agent: xFooBot", False),
    ],
)
def test_user_agent_line_applies_by_exact_token(line: str, applies: bool) -> None:
    body = f"{line}\nDisallow: /private\n"
    assert allowed(body, "FooBot", "/private") is not applies


def test_token_prefix_group_does_not_hide_the_star_group() -> None:
    body = "User-agent: Foo\nAllow: /\n\nUser-agent: *\nDisallow: /\n"
    assert not allowed(body, "FooBot", "/page")
    assert allowed(body, "Foo", "/page")


@pytest.mark.parametrize("agent", ["foobot", "FOOBOT", "FooBot", "FooBot/2.1", " FooBot "])
def test_caller_token_is_case_insensitive_and_trimmed(agent: str) -> None:
    assert not allowed("User-agent: FooBot\nDisallow: /\n", agent, "/x")


def test_groups_for_the_same_token_are_merged() -> None:
    body = (
        "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n"
        "user-agent: OtherBot\ndisallow: /\n\n"
        "user-agent: examplebot\ndisallow: /baz\n"
    )
    for path in ("/foo", "/bar", "/baz"):
        assert not allowed(body, "ExampleBot", path)
    assert allowed(body, "ExampleBot", "/qux")


def test_longest_match_runs_across_merged_groups() -> None:
    body = "User-agent: a\nDisallow: /x/\n\nUser-agent: a\nAllow: /x/y/\n"
    assert allowed(body, "a", "/x/y/z")
    assert not allowed(body, "a", "/x/z")


def test_star_group_applies_only_when_no_group_names_the_token() -> None:
    body = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n"
    assert allowed(body, "FooBot", "/x/page")
    assert not allowed(body, "FooBot", "/y/page")
    assert not allowed(body, "BarBot", "/x/page")
    assert allowed(body, "BarBot", "/y/page")


def test_star_groups_are_merged() -> None:
    body = (
        "User-agent: *\nDisallow: /a\n\nUser-agent: x\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n"
    )
    assert not allowed(body, "trawl", "/a")
    assert not allowed(body, "trawl", "/b")
    assert allowed(body, "trawl", "/c")


def test_empty_group_for_the_token_allows_everything_despite_star() -> None:
    body = "User-agent: *\nDisallow: /\n\nUser-agent: quxbot\n"
    assert allowed(body, "quxbot", "/anything")
    assert not allowed(body, "other", "/anything")


def test_no_matching_group_and_no_star_group_means_no_rules() -> None:
    body = "User-agent: FooBot\nDisallow: /\nUser-agent: BarBot\nDisallow: /\n"
    assert allowed(body, "QuxBot", "/x/y")
    assert allowed(b"", "QuxBot", "/x/y")


def test_star_followed_by_text_is_still_the_star_group() -> None:
    assert not allowed("User-agent: * # everyone\nDisallow: /\n", "any", "/x")
    assert not allowed("User-agent: * and friends\nDisallow: /\n", "any", "/x")


def test_star_as_the_callers_token_selects_the_star_group() -> None:
    body = "User-agent: *\nDisallow: /x\nUser-agent: a\nAllow: /\n"
    assert not allowed(body, "*", "/x")


def test_empty_caller_token_falls_back_to_star() -> None:
    body = "User-agent:\nAllow: /\n\nUser-agent: *\nDisallow: /\n"
    assert not allowed(body, "", "/x")
    assert not allowed(body, ["", " "], "/x")


def test_empty_user_agent_value_starts_a_group_that_applies_to_nobody() -> None:
    body = "User-agent: a\nDisallow: /a\nUser-agent:\nDisallow: /b\n"
    assert rules_of(body, "a") == [(False, "/a")]
    assert allowed(body, "a", "/b")


# --- Group boundaries ------------------------------------------------------------------


def test_consecutive_user_agent_lines_share_one_group() -> None:
    body = "User-agent: barbot\nUser-agent: bazbot\nDisallow: /example/page.html\n"
    assert not allowed(body, "barbot", "/example/page.html")
    assert not allowed(body, "bazbot", "/example/page.html")
    assert RobotsRules.parse(body.encode()).groups[0].agents == ("barbot", "bazbot")


@pytest.mark.parametrize(
    "separator",
    [
        "\n",
        "# a comment\n",
        "Sitemap: https://example.com/sitemap.xml\n",
        "Host: example.com\n",
        "Clean-param: ref /articles/\n",
        "Request-rate: 1/5\n",
        "Crawl-delay: 5\n",
        "Crawl-delay: not a number\n",
        "nonsense line without colon and many words\n",
        "\n# comment\nSitemap: https://example.com/s.xml\nfoo: bar\n\n",
    ],
)
def test_lines_that_are_not_rules_do_not_split_a_group(separator: str) -> None:
    # Protego starts a new group at such lines and loses the first agent's rules.
    body = f"User-agent: FooBot\n{separator}User-agent: BarBot\nDisallow: /private\n"
    assert not allowed(body, "FooBot", "/private")
    assert not allowed(body, "BarBot", "/private")


def test_sitemap_between_rules_does_not_end_a_group() -> None:
    body = "User-agent: a\nDisallow: /x\nSitemap: https://e/s.xml\nDisallow: /y\n"
    assert rules_of(body, "a") == [(False, "/x"), (False, "/y")]


def test_user_agent_line_after_a_rule_starts_a_new_group() -> None:
    body = "User-agent: a\nDisallow: /a\nUser-agent: b\nDisallow: /b\n"
    assert rules_of(body, "a") == [(False, "/a")]
    assert rules_of(body, "b") == [(False, "/b")]


def test_user_agent_line_after_an_empty_rule_starts_a_new_group() -> None:
    body = "User-agent: a\nDisallow:\nUser-agent: b\nDisallow: /\n"
    assert allowed(body, "a", "/x")
    assert not allowed(body, "b", "/x")


def test_user_agent_after_rule_and_blank_lines_starts_a_new_group() -> None:
    body = "User-agent: a\nAllow: /x\n\n# next\n\nUser-agent: b\nDisallow: /\n"
    assert allowed(body, "a", "/y")
    assert not allowed(body, "b", "/y")


def test_rules_before_the_first_user_agent_are_ignored() -> None:
    body = "Disallow: /\nAllow: /x\n\nUser-agent: a\nDisallow: /a\n"
    assert allowed(body, "a", "/b")
    assert allowed(body, "zed", "/b")


def test_google_groups_example() -> None:
    # google/robotstxt robots_test.cc ID_LineSyntax_Groups
    body = (
        "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\n"
        "user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\n"
        "user-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
    )
    url = "http://foo.bar"
    assert allowed(body, "FooBot", url + "/x/b")
    assert allowed(body, "FooBot", url + "/z/d")
    assert not allowed(body, "FooBot", url + "/y/c")
    assert allowed(body, "BarBot", url + "/y/c")
    assert allowed(body, "BarBot", url + "/w/a")
    assert not allowed(body, "BarBot", url + "/z/d")
    assert allowed(body, "BazBot", url + "/z/d")
    for agent in ("FooBot", "BarBot", "BazBot"):
        assert not allowed(body, agent, url + "/foo/bar/")


# --- Parsing: bytes, lines, keys ----------------------------------------------------------


@pytest.mark.parametrize("bom", [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"])
def test_byte_order_mark_does_not_hide_the_first_group(bom: bytes) -> None:
    body = bom + b"User-agent: FooBot\nDisallow: /\n"
    assert not allowed(body, "FooBot", "/x")


def test_byte_order_mark_is_only_skipped_at_the_start() -> None:
    body = b"User-agent: foo\n\xef\xbb\xbfDisallow: /x\n"
    assert allowed(body, "foo", "/x")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings(newline: str) -> None:
    body = newline.join(["User-agent: a", "Disallow: /x", "", "User-agent: b", "Disallow: /y"])
    assert rules_of(body, "a") == [(False, "/x")]
    assert rules_of(body, "b") == [(False, "/y")]


def test_mixed_line_endings_and_no_final_newline() -> None:
    body = "User-agent: a\r\nDisallow: /x\rAllow: /x/y\n\r\nDisallow: /z"
    assert rules_of(body, "a") == [(False, "/x"), (True, "/x/y"), (False, "/z")]


def test_comments_on_own_line_and_at_end_of_line() -> None:
    body = (
        "# intro\nUser-agent: FooBot # the bot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n"
    )
    assert allowed(body, "FooBot", "/foo/bar")
    assert not allowed(body, "FooBot", "/foo/quz")
    assert rules_of(body, "foobot") == [(False, "/foo/quz"), (True, "/")]


def test_whitespace_around_key_and_value_is_trimmed() -> None:
    body = "  User-agent  :   FooBot  \n\t Disallow\t:\t/private \t\n"
    assert rules_of(body, "foobot") == [(False, "/private")]


@pytest.mark.parametrize("key", ["USER-AGENT", "user-agent", "uSeR-aGeNt"])
def test_keys_are_case_insensitive(key: str) -> None:
    body = f"{key}: FooBot\nALLOW: /x/\nDiSaLlOw: /\n"
    assert allowed(body, "FooBot", "/x/y")
    assert not allowed(body, "FooBot", "/a/b")


def test_missing_colon_with_exactly_two_words_is_accepted() -> None:
    assert not allowed("user-agent FooBot\ndisallow /\n", "FooBot", "/x/y")
    assert allowed("foo: FooBot\nbar: /\n", "FooBot", "/x/y")
    assert allowed("user-agent FooBot\ndisallow / now\n", "FooBot", "/x/y")


@pytest.mark.parametrize(
    "key", ["disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw", "Disallowed"]
)
def test_disallow_spellings_google_accepts(key: str) -> None:
    assert not allowed(f"User-agent: *\n{key}: /x\n", "a", "/x")


@pytest.mark.parametrize("key", ["user-agent", "useragent", "user agent", "User-agents"])
def test_user_agent_spellings_google_accepts(key: str) -> None:
    assert not allowed(f"{key}: FooBot\nDisallow: /x\n", "FooBot", "/x")


@pytest.mark.parametrize("key", ["sitemap", "Sitemaps", "site-map", "SITEMAP"])
def test_sitemap_spellings_google_accepts(key: str) -> None:
    rules = RobotsRules.parse(f"{key}: https://e.com/s.xml\n".encode())
    assert rules.sitemaps == ("https://e.com/s.xml",)


@pytest.mark.parametrize(
    "line", ["Host: example.com", "Noindex: /x", "Alow: /x", "User_agent: b", "Disallow/x"]
)
def test_unknown_lines_are_ignored(line: str) -> None:
    body = f"User-agent: a\n{line}\nDisallow: /y\n"
    assert rules_of(body, "a") == [(False, "/y")]
    assert allowed(body, "a", "/x")


def test_empty_body_and_garbage_mean_no_rules() -> None:
    for body in (b"", b"\n\n", b"\x00\xff\xfe garbage \x80", b"<html><body>404</body></html>"):
        rules = RobotsRules.parse(body)
        assert rules.groups == ()
        assert rules.is_allowed("/anything", "a")


def test_parse_limit_keeps_rules_within_512000_bytes() -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"#" * (MAX_BYTES - len(head) - 1) + b"\n"
    body = head + filler + b"Disallow: /late\n"
    assert len(head + filler) == MAX_BYTES
    assert not allowed(body, "a", "/early")
    assert allowed(body, "a", "/late")


def test_line_cut_by_the_limit_is_dropped() -> None:
    head = b"User-agent: *\n"
    filler = b"#" * (MAX_BYTES - len(head) - len(b"\nDisallow: /ab")) + b"\n"
    body = head + filler + b"Disallow: /abc\n"  # the limit falls between "/ab" and "c"
    assert len(head + filler) + len(b"Disallow: /ab") == MAX_BYTES
    assert allowed(body, "a", "/ab")
    assert allowed(body, "a", "/abc")


@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_line_ending_exactly_at_the_limit_is_kept(end: bytes) -> None:
    head = b"User-agent: *\n"
    rule = b"Disallow: /last"
    filler = b"#" * (MAX_BYTES - len(head) - len(rule) - 1) + b"\n"
    body = head + filler + rule + end + b"Disallow: /beyond\n"
    assert len(head + filler + rule) == MAX_BYTES
    assert not allowed(body, "a", "/last")
    assert allowed(body, "a", "/beyond")


def test_non_utf8_bytes_never_raise_and_are_matched_byte_for_byte() -> None:
    body = b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /\xff\xfe\n"
    assert not allowed(body, "a", "/caf%E9")
    assert not allowed(body, "a", "/caf%e9/menu")
    assert not allowed(body, "a", "/%FF%FE")
    assert allowed(body, "a", "/caf%C3%A9")  # the UTF-8 é is another octet sequence


def test_non_utf8_user_agent_value_does_not_raise() -> None:
    rules = RobotsRules.parse(b"User-agent: \xffbot\nDisallow: /\n")
    assert rules.is_allowed("/x", "bot")
    assert rules.groups[0].agents == ("\ufffdbot",)


# --- Matching -----------------------------------------------------------------------------


def test_rfc9309_simple_example() -> None:
    body = (
        "User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n"
        "User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n"
        "User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\n"
        "User-Agent: quxbot\n\nEOF\n"
    )
    rules = RobotsRules.parse(body.encode())
    base = "https://www.example.com"
    assert rules.is_allowed(base + "/publications/a.html", "somebot")
    assert not rules.is_allowed(base + "/example/x", "somebot")
    assert not rules.is_allowed(base + "/images/a.gif", "somebot")
    assert rules.is_allowed(base + "/images/a.gif?size=2", "somebot")
    assert rules.is_allowed(base + "/other", "somebot")
    assert rules.is_allowed(base + "/example/page.html", "foobot")
    assert rules.is_allowed(base + "/example/allowed.gif", "foobot")
    assert not rules.is_allowed(base + "/example/other.html", "foobot")
    assert not rules.is_allowed(base + "/", "foobot")
    for bot in ("barbot", "bazbot"):
        assert not rules.is_allowed(base + "/example/page.html", bot)
        assert rules.is_allowed(base + "/example/other.html", bot)
        assert rules.is_allowed(base + "/a.gif", bot)
    assert rules.is_allowed(base + "/example/page.html", "quxbot")


def test_rfc9309_longest_match_example() -> None:
    body = "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
    assert not allowed(body, "foobot", "https://example.com/example/page/disallowed.gif")
    assert allowed(body, "foobot", "https://example.com/example/page/allowed.gif")


_FISH = [
    # (pattern, allowed paths, disallowed paths) from Google's robots.txt documentation
    (
        "/fish",
        [
            "/fish",
            "/fish.html",
            "/fish/salmon.html",
            "/fishheads",
            "/fishheads/yummy.html",
            "/fish.html?id=anything",
        ],
        ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"],
    ),
    (
        "/fish*",
        [
            "/fish",
            "/fish.html",
            "/fish/salmon.html",
            "/fishheads",
            "/fishheads/yummy.html",
            "/fish.html?id=anything",
        ],
        ["/Fish.bar", "/catfish", "/?id=fish"],
    ),
    (
        "/fish/",
        ["/fish/", "/fish/salmon", "/fish/?salmon", "/fish/salmon.html", "/fish/?id=anything"],
        ["/fish", "/fish.html", "/Fish/Salmon.html", "/animals/fish/"],
    ),
    (
        "/*.php",
        [
            "/filename.php",
            "/folder/filename.php",
            "/folder/filename.php?parameters",
            "//folder/any.php.file.html",
            "/filename.php/",
            "/index?f=filename.php/",
        ],
        ["/bar", "/php/", "/index?php", "/windows.PHP"],
    ),
    (
        "/*.php$",
        ["/filename.php", "/folder/filename.php"],
        [
            "/filename.php?parameters",
            "/filename.php/",
            "/filename.php5",
            "/php/",
            "/filename?php",
            "/aaaphpaaa",
            "//windows.PHP",
            "/windows.PHP",
        ],
    ),
    (
        "/fish*.php",
        ["/fish.php", "/fishheads/catfish.php?parameters"],
        ["/Fish.PHP", "/bar"],
    ),
]


@pytest.mark.parametrize(("pattern", "hits", "misses"), _FISH)
def test_google_documented_path_matching(pattern: str, hits: list[str], misses: list[str]) -> None:
    rules = RobotsRules.parse(f"user-agent: FooBot\ndisallow: /\nallow: {pattern}\n".encode())
    for path in hits:
        assert rules.is_allowed("http://foo.bar" + path, "FooBot"), path
    for path in misses:
        assert not rules.is_allowed("http://foo.bar" + path, "FooBot"), path


@pytest.mark.parametrize(
    ("body", "url", "expected"),
    [
        # Google's "order of precedence" examples
        ("allow: /p\ndisallow: /", "http://example.com/page", True),
        ("allow: /folder\ndisallow: /folder", "http://example.com/folder/page", True),
        ("allow: /page\ndisallow: /*.htm", "http://example.com/page.htm", False),
        ("allow: /$\ndisallow: /", "http://example.com/", True),
        ("allow: /$\ndisallow: /", "http://example.com/page.html", False),
        # google/robotstxt ID_LongestMatch
        ("disallow: /x/page.html\nallow: /x/", "http://foo.bar/x/page.html", False),
        ("allow: /x/page.html\ndisallow: /x/", "http://foo.bar/x/page.html", True),
        ("allow: /x/page.html\ndisallow: /x/", "http://foo.bar/x/", False),
        ("disallow: \nallow: ", "http://foo.bar/x/page.html", True),
        ("disallow: /\nallow: /", "http://foo.bar/x/page.html", True),
        ("disallow: /x\nallow: /x/", "http://foo.bar/x", False),
        ("disallow: /x\nallow: /x/", "http://foo.bar/x/", True),
        ("disallow: /x/page.html\nallow: /x/page.html", "http://foo.bar/x/page.html", True),
        ("allow: /page\ndisallow: /*.html", "http://foo.bar/page.html", False),
        ("allow: /page\ndisallow: /*.html", "http://foo.bar/page", True),
        ("allow: /x/page.\ndisallow: /*.html", "http://foo.bar/x/page.html", True),
        ("allow: /x/page.\ndisallow: /*.html", "http://foo.bar/x/y.html", False),
    ],
)
def test_precedence(body: str, url: str, expected: bool) -> None:
    assert allowed("user-agent: FooBot\n" + body + "\n", "FooBot", url) is expected


def test_allow_wins_a_tie_between_different_patterns_of_equal_length() -> None:
    body = "User-agent: a\nDisallow: /ab\nAllow: /a*\n"
    assert allowed(body, "a", "/abc")
    body = "User-agent: a\nAllow: /a*\nDisallow: /ab\n"
    assert allowed(body, "a", "/abc")


def test_specificity_counts_octets_of_the_normalised_pattern() -> None:
    # "/%7Ea" is "/~a" (3 octets) once normalised: shorter than "/~ab" (4).
    body = "User-agent: a\nAllow: /%7Ea\nDisallow: /~ab\n"
    assert not allowed(body, "a", "/~abc")
    # "/é" counts as "/%C3%A9", 7 octets rather than 2 characters: it beats "/%C3*" (5).
    body = "User-agent: a\nDisallow: /é\nAllow: /%C3*\n"
    assert not allowed(body, "a", "/%C3%A9")


def test_matching_is_case_sensitive() -> None:
    assert not allowed("user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y")
    assert allowed("user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://foo.bar/x/y")


def test_empty_disallow_allows_everything() -> None:
    body = "User-agent: *\nDisallow:\n"
    assert allowed(body, "a", "/")
    assert allowed(body, "a", "/anything/at/all?q=1")
    assert RobotsRules.parse(body.encode()).groups[0].rules == ()


def test_wildcards_and_anchor() -> None:
    body = (
        "User-agent: a\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n"
        "Disallow: /a*b*c$\nDisallow: /**zz\nDisallow: /end$\n"
    )
    assert not allowed(body, "a", "/foo/bar/quz")
    assert allowed(body, "a", "/foo/quz")
    assert allowed(body, "a", "/foo/bax/qux")
    assert not allowed(body, "a", "/a-b-c")
    assert not allowed(body, "a", "/abcbc")
    assert allowed(body, "a", "/a-b-c-d")
    assert not allowed(body, "a", "/x/y/zz")
    assert not allowed(body, "a", "/end")
    assert allowed(body, "a", "/end/")
    assert allowed(body, "a", "/ending")


def test_star_matches_across_slashes_and_the_query() -> None:
    body = "User-agent: a\nDisallow: /*/print/\nDisallow: /*?sort=\n"
    assert not allowed(body, "a", "/a/b/print/page")
    assert not allowed(body, "a", "/list?page=2&x=1?sort=asc")
    assert not allowed(body, "a", "/list?sort=asc")
    assert allowed(body, "a", "/list?order=asc")


def test_dollar_inside_a_pattern_is_literal() -> None:
    body = "User-agent: a\nDisallow: /price$list\n"
    assert not allowed(body, "a", "/price$list")
    assert not allowed(body, "a", "/price%24list")
    assert allowed(body, "a", "/price")


def test_a_literal_dollar_counts_as_its_three_octets() -> None:
    # RFC 9309 2.2.2: reserved characters ("$" is one, RFC 3986 2.2) are percent-encoded
    # before comparison and the most specific match is the one with the most octets. A
    # "$" inside a rule is a literal, so "/$a" is "/%24a" (5 octets) and beats "/%24" (4).
    body = "User-agent: a\nDisallow: /$a\nAllow: /%24\n"
    assert not allowed(body, "a", "/$a")
    assert not allowed(body, "a", "/%24a")
    assert allowed(body, "a", "/$b")
    # The two spellings of one path are one rule: equal length, so allow wins the tie.
    assert allowed("User-agent: a\nDisallow: /$a\nAllow: /%24a\n", "a", "/$a")
    assert allowed("User-agent: a\nAllow: /$a\nDisallow: /%24a\n", "a", "/$a")


def test_dollar_anchor_with_query() -> None:
    body = "User-agent: a\nDisallow: /*?$\n"
    assert not allowed(body, "a", "/page?")
    assert allowed(body, "a", "/page?x")


def test_pattern_without_leading_slash_gets_one() -> None:
    # Google documents "fish/" as equivalent to "/fish/"; its C++ parser never matches it.
    body = "User-agent: a\nDisallow: fish/\nDisallow: private\n"
    assert rules_of(body, "a") == [(False, "/fish/"), (False, "/private")]
    assert not allowed(body, "a", "/fish/salmon")
    assert not allowed(body, "a", "/private/x")
    assert allowed(body, "a", "/catfish/")


def test_pattern_starting_with_star_is_kept() -> None:
    body = "User-agent: a\nDisallow: *.pdf$\n"
    assert rules_of(body, "a") == [(False, "*.pdf$")]
    assert not allowed(body, "a", "/docs/a.pdf")


def test_query_takes_part_in_matching() -> None:
    body = "User-agent: a\nDisallow: /search?q=\nAllow: /search?q=public\n"
    assert not allowed(body, "a", "/search?q=secret")
    assert allowed(body, "a", "/search?q=public+stuff")
    assert allowed(body, "a", "/search")
    assert not allowed(body, "a", "https://e.com/search?q=x#frag")


def test_fragment_is_ignored() -> None:
    body = "User-agent: a\nDisallow: /page$\n"
    assert not allowed(body, "a", "https://e.com/page#section")
    assert not allowed(body, "a", "/page#x?y")


def test_robots_txt_itself_is_always_allowed() -> None:
    body = "User-agent: *\nDisallow: /\nDisallow: /robots.txt\n"
    assert allowed(body, "a", "/robots.txt")
    assert allowed(body, "a", "https://example.com/robots.txt")
    assert allowed(body, "a", "https://example.com/robots.txt?x=1")
    assert allowed(body, "a", "/robots%2Etxt")  # %2E is "." once normalised
    assert not allowed(body, "a", "/robots.txt.bak")
    assert not allowed(body, "a", "/robots.txtx")
    assert not allowed(body, "a", "/dir/robots.txt")


@pytest.mark.parametrize(
    "url",
    ["http://h/p?q", "https://user:pw@h:8080/p?q", "//h/p?q", "/p?q", "h/p?q", "HTTP://H/p?q#f"],
)
def test_full_urls_and_paths_match_the_same(url: str) -> None:
    body = "User-agent: a\nDisallow: /p?q$\n"
    assert not allowed(body, "a", url)


@pytest.mark.parametrize("url", ["", "http://h", "http://h#/frag", "h", "mailto:x@y"])
def test_urls_without_a_path_match_as_root(url: str) -> None:
    assert not allowed("User-agent: a\nDisallow: /$\n", "a", url)


def test_query_without_path_is_matched_under_root() -> None:
    body = "User-agent: a\nDisallow: /?x\n"
    assert not allowed(body, "a", "https://h?x=1")
    assert allowed(body, "a", "https://h?y")


# --- Percent-encoding equivalence -----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "url", "match"),
    [
        ("/%7Ea", "/~a", True),
        ("/~a", "/%7Ea", True),
        ("/~a", "/%7ea", True),
        ("/%7ea", "/~a", True),
        ("/foo/bar/%62%61%7A", "/foo/bar/baz", True),  # RFC 9309 2.2.2 table
        ("/foo/bar/baz", "/foo/bar/%62%61%7A", True),
        ("/foo/bar/ツ", "/foo/bar/%E3%83%84", True),  # raw UTF-8 in the rule
        ("/foo/bar/ツ", "/foo/bar/%e3%83%84", True),
        ("/foo/bar/%E3%83%84", "/foo/bar/ツ", True),  # raw UTF-8 in the URL
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84", True),
        ("/SanJoséSellers", "/SanJos%C3%A9Sellers", True),
        ("/a%2Fb", "/a/b", False),  # %2F is not /
        ("/a/b", "/a%2Fb", False),
        ("/a%2fb", "/a%2Fb", True),
        ("/a%3Fb", "/a?b", False),
        ("/path/file-with-a-%2A.html", "/path/file-with-a-*.html", True),  # RFC 9309 2.2.3
        ("/path/file-with-a-%2A.html", "/path/file-with-a-x.html", False),  # not a wildcard
        ("/path/foo-%24", "/path/foo-$", True),
        ("/path/foo-%24", "/path/foo-", False),
        ("/a b", "/a%20b", True),
        ("/a%20b", "/a b", True),
        ("/100%", "/100%25", True),
        ("/%zz", "/%25zz", True),
        (
            "/foo/bar?qux=taz&baz=http://foo.bar?tar&par",
            "/foo/bar?qux=taz&baz=http://foo.bar?tar&par",
            True,
        ),
    ],
)
def test_percent_encoding_equivalence(pattern: str, url: str, match: bool) -> None:
    body = f"User-agent: a\nDisallow: {pattern}$\n"
    assert allowed(body, "a", url) is not match


def test_rule_patterns_are_stored_in_normal_form() -> None:
    body = "User-agent: a\nDisallow: /caf%c3%a9/%7Euser/%2f/é/a b\n"
    assert rules_of(body, "a") == [(False, "/caf%C3%A9/~user/%2F/%C3%A9/a%20b")]


# --- Several tokens -------------------------------------------------------------------------


_OPT_OUT = (
    "User-agent: *\nDisallow: /private/\n\n"
    "User-agent: GPTBot\nDisallow: /\n\n"
    "User-agent: CCBot\nDisallow: /articles/\n"
)


def test_several_tokens_disallowed_if_any_token_is() -> None:
    rules = RobotsRules.parse(_OPT_OUT.encode())
    assert rules.is_allowed("/news", "trawl")
    assert not rules.is_allowed("/news", ["trawl", "GPTBot"])
    assert not rules.is_allowed("/news", ("GPTBot", "trawl"))
    assert rules.is_allowed("/news", ("trawl", "CCBot", "Google-Extended"))
    assert not rules.is_allowed("/articles/1", ("trawl", "CCBot"))
    assert rules.is_allowed("/private/x", ("CCBot",))  # CCBot has its own group
    assert not rules.is_allowed("/private/x", ("trawl", "CCBot"))


def test_each_token_falls_back_to_star_on_its_own() -> None:
    body = "User-agent: *\nDisallow: /star-only\n\nUser-agent: CCBot\nAllow: /\n"
    rules = RobotsRules.parse(body.encode())
    assert rules.is_allowed("/star-only", "CCBot")
    assert not rules.is_allowed("/star-only", ["CCBot", "trawl"])


def test_empty_token_sequence_means_no_restrictions() -> None:
    rules = RobotsRules.parse(_OPT_OUT.encode())
    assert rules.is_allowed("/private/x", [])


def test_results_are_stable_across_agent_argument_types() -> None:
    rules = RobotsRules.parse(_OPT_OUT.encode())
    for agents in (["trawl", "GPTBot"], ("trawl", "GPTBot"), ("TRAWL", "gptbot")):
        for _ in range(3):
            assert not rules.is_allowed("/news", agents)


# --- Crawl-delay ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2.5", 2.5),
        ("10", 10.0),
        ("0", 0.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("007", 7.0),
        ("10 # seconds", 10.0),
        ("", None),
        ("abc", None),
        ("-1", None),
        ("+1", None),
        ("1e3", None),
        ("inf", None),
        ("nan", None),
        ("10s", None),
        ("2,5", None),
        ("1 2", None),
        ("9" * 400, None),  # overflows to infinity
    ],
)
def test_crawl_delay_values(value: str, expected: float | None) -> None:
    rules = RobotsRules.parse(f"User-agent: a\nCrawl-delay: {value}\n".encode())
    assert rules.crawl_delay("a") == expected


@pytest.mark.parametrize(
    "key", ["Crawl-delay", "crawl-delay", "CRAWL-DELAY", "Crawldelay", "crawl delay"]
)
def test_crawl_delay_key_spellings(key: str) -> None:
    assert RobotsRules.parse(f"User-agent: a\n{key}: 3\n".encode()).crawl_delay("A") == 3.0


def test_crawl_delay_follows_group_selection() -> None:
    body = (
        "Crawl-delay: 99\n"  # outside any group: ignored
        "User-agent: *\nCrawl-delay: 5\nDisallow:\n\n"  # the empty rule ends the group
        "User-agent: slowbot\nDisallow: /x\nCrawl-delay: 2.5\n\n"
        "User-agent: plainbot\nDisallow: /y\n"
    )
    rules = RobotsRules.parse(body.encode())
    assert rules.crawl_delay("slowbot") == 2.5
    assert rules.crawl_delay("SlowBot/1.2") == 2.5
    assert rules.crawl_delay("plainbot") is None  # its own group has none; * does not apply
    assert rules.crawl_delay("other") == 5.0


def test_crawl_delay_of_merged_groups_is_the_first_valid_value() -> None:
    body = (
        "User-agent: a\nCrawl-delay: soon\nDisallow: /x\n\n"
        "User-agent: a\nCrawl-delay: 4\nCrawl-delay: 1\n\n"
        "User-agent: a\nCrawl-delay: 7\n"
    )
    assert RobotsRules.parse(body.encode()).crawl_delay("a") == 4.0


def test_crawl_delay_for_several_tokens_is_the_largest() -> None:
    body = (
        "User-agent: a\nCrawl-delay: 2\nAllow:\n\n"
        "User-agent: b\nCrawl-delay: 7.5\nAllow:\n\n"
        "User-agent: c\n"
    )
    rules = RobotsRules.parse(body.encode())
    assert rules.crawl_delay(["a", "b"]) == 7.5
    assert rules.crawl_delay(["c", "a"]) == 2.0
    assert rules.crawl_delay(["c"]) is None
    assert rules.crawl_delay([]) is None


def test_crawl_delay_between_user_agent_lines_does_not_split_the_group() -> None:
    # RFC 9309 2.2.4: records other than user-agent, allow and disallow must not
    # interfere with the groups. The crawl-delay is a member of the one group, so it
    # applies to both agents, like the rule that follows.
    body = "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n"
    rules = RobotsRules.parse(body.encode())
    assert rules.groups == (
        RobotsGroup(agents=("a", "b"), rules=(RobotsRule(False, "/x"),), crawl_delay=5.0),
    )
    for agent in ("a", "b"):
        assert not rules.is_allowed("/x", agent)
        assert rules.crawl_delay(agent) == 5.0
    assert rules.is_allowed("/x", "c")
    assert rules.crawl_delay("c") is None


def test_crawl_delay_then_blank_line_then_user_agent_is_one_group() -> None:
    # The layout "*, Crawl-delay, blank, another agent, rules" reads as one group, as in
    # the RFC's grammar (blank lines may stand between start-of-group lines) and in
    # Google's parser: the star agent gets the other agent's rules too.
    body = "User-agent: *\nCrawl-delay: 10\n\nUser-agent: Googlebot\nDisallow: /x\n"
    rules = RobotsRules.parse(body.encode())
    assert rules.crawl_delay("trawl") == 10.0
    assert not rules.is_allowed("/x", "trawl")
    assert rules.crawl_delay("Googlebot") == 10.0
    assert not rules.is_allowed("/x", "Googlebot")


def test_crawl_delay_after_a_rule_does_not_start_a_group() -> None:
    body = "User-agent: a\nDisallow: /x\nCrawl-delay: 3\nUser-agent: b\nDisallow: /y\n"
    rules = RobotsRules.parse(body.encode())
    assert rules_of(body, "a") == [(False, "/x")]
    assert rules_of(body, "b") == [(False, "/y")]
    assert rules.crawl_delay("a") == 3.0
    assert rules.crawl_delay("b") is None


def test_sitemap_and_unknown_lines_between_agents_keep_one_group() -> None:
    body = (
        "User-agent: a\nSitemap: https://e/s.xml\nUser-agent: b\nHost: e\n"
        "User-agent: c\nCrawl-delay: 2\nUser-agent: d\nDisallow: /\n"
    )
    rules = RobotsRules.parse(body.encode())
    assert [g.agents for g in rules.groups] == [("a", "b", "c", "d")]
    assert all(not rules.is_allowed("/p", agent) for agent in "abcd")
    assert rules.sitemaps == ("https://e/s.xml",)


# --- Sitemaps -------------------------------------------------------------------------------


def test_sitemaps_anywhere_in_file_order_without_duplicates() -> None:
    body = (
        "Sitemap: https://e.com/first.xml\n"
        "User-agent: a\nSitemap: https://e.com/second.xml\nDisallow: /\n"
        "sitemap:https://e.com/first.xml\n"
        "User-agent: b\n  SITEMAP :  https://e.com/third.xml  # comment\nSitemap:\n"
        "Sitemap: https://e.com/second.xml\n"
    )
    rules = RobotsRules.parse(body.encode())
    assert rules.sitemaps == (
        "https://e.com/first.xml",
        "https://e.com/second.xml",
        "https://e.com/third.xml",
    )


def test_sitemap_non_utf8_bytes_are_replaced() -> None:
    rules = RobotsRules.parse(b"Sitemap: https://e.com/\xff.xml\n")
    assert rules.sitemaps == ("https://e.com/\ufffd.xml",)


# --- Parsed structure ------------------------------------------------------------------------


def test_parsed_groups_are_exposed_in_file_order() -> None:
    body = "User-agent: A\nUser-agent: b/2\nAllow: /x\nDisallow: /\nCrawl-delay: 1.5\n"
    assert RobotsRules.parse(body.encode()).groups == (
        RobotsGroup(
            agents=("a", "b"),
            rules=(RobotsRule(True, "/x"), RobotsRule(False, "/")),
            crawl_delay=1.5,
        ),
    )
