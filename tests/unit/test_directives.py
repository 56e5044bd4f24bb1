"""Meta robots and X-Robots-Tag directives, generic and per agent."""

from __future__ import annotations

from trawl.parse import directives

AGENTS = ("trawl", "GPTBot")


def test_meta_generic_and_named() -> None:
    metas = [("robots", "NoIndex, follow"), ("gptbot", "nofollow"), ("otherbot", "noarchive")]
    assert directives.from_meta(metas, AGENTS) == {"noindex", "follow", "nofollow"}


def test_meta_none_means_noindex_nofollow() -> None:
    assert directives.from_meta([("ROBOTS", "none")], AGENTS) >= {"noindex", "nofollow"}


def test_header_generic_named_and_other_agent() -> None:
    values = ["noindex", "GPTBot: nofollow", "googlebot: noarchive", "max-snippet:20, noai"]
    assert directives.from_header(values, AGENTS) == {"noindex", "nofollow", "noai"}


def test_header_for_an_agent_we_are_not_does_not_apply() -> None:
    assert directives.from_header(["bingbot: noindex"], ("trawl",)) == set()


def test_unavailable_after_is_not_an_agent() -> None:
    assert directives.from_header(["unavailable_after: 25 Jun 2030 15:00:00 PST"], AGENTS) == set()


def test_unknown_words_are_ignored() -> None:
    assert directives.from_meta([("robots", "bogus, ;;, INDEX")], AGENTS) == {"index"}
