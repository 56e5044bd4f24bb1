"""Properties of robots.txt parsing and matching, checked on generated input (Hypothesis).

Parsing and matching never raise, whatever the bytes and URLs; answers are deterministic
and survive pickling; a file without rules for an agent allows it everything; and the
compiled matcher agrees with the plain-Python definition (``reference_verdict``), also
when rules are split over many small chunks and the compile budget runs out.
"""

from __future__ import annotations

import math
import pickle
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from trawl.fetch import _robots_match
from trawl.fetch._robots_match import compile_group, reference_verdict
from trawl.fetch.robots import RobotsRule, RobotsRules
from trawl.rules import request_target

_KEYS = st.sampled_from(
    ["User-agent", "user-agent", "Allow", "Disallow", "disalow", "Sitemap", "Crawl-delay",
     "useragent", "Host", "", "#"]
)  # fmt: skip
_VALUE_CHARS = st.sampled_from([*list("/*$?=&%7Ea.b#é ツ\t:"), "%2F", "%2A", "%e3%83%84"])
_VALUES = st.lists(_VALUE_CHARS, max_size=12).map("".join)
_AGENTS = st.sampled_from(["*", "FooBot", "foobot/1.0", "BarBot", "GPTBot", "CCBot", ""])
_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def robots_files(draw: st.DrawFn) -> bytes:
    """Robots-like text: mostly meaningful lines, with noise mixed in."""
    lines = []
    for _ in range(draw(st.integers(0, 25))):
        key = draw(_KEYS)
        value = draw(_AGENTS) if key.lower().startswith("user") else draw(_VALUES)
        lines.append(f"{key}:{draw(st.sampled_from(['', ' ', '  ']))}{value}")
    text = draw(_ENDINGS).join(lines)
    prefix = draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff"]))
    return prefix + text.encode("utf-8")


_URLS = st.one_of(
    st.text(max_size=60),
    st.lists(_VALUE_CHARS, max_size=15).map(lambda parts: "/" + "".join(parts)),
    st.lists(_VALUE_CHARS, max_size=15).map(lambda parts: "https://h.example/" + "".join(parts)),
)
_TOKEN_LISTS = st.lists(st.one_of(_AGENTS, st.text(max_size=10)), max_size=4)


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=3000), url=st.text(max_size=80), agent=st.text(max_size=12))
def test_arbitrary_bytes_and_urls_never_raise(body: bytes, url: str, agent: str) -> None:
    rules = RobotsRules.parse(body)
    assert isinstance(rules.is_allowed(url, agent), bool)
    assert isinstance(rules.is_allowed(url, [agent, "*", "x"]), bool)
    delay = rules.crawl_delay(agent)
    assert delay is None or (math.isfinite(delay) and delay >= 0.0)


@settings(max_examples=100, deadline=None)
@given(body=robots_files(), url=_URLS, agents=_TOKEN_LISTS)
def test_answers_are_deterministic_and_survive_pickling(
    body: bytes, url: str, agents: list[str]
) -> None:
    rules = RobotsRules.parse(body)
    answer = rules.is_allowed(url, agents)
    assert rules.is_allowed(url, agents) is answer
    assert RobotsRules.parse(body).is_allowed(url, agents) is answer
    assert pickle.loads(pickle.dumps(rules)).is_allowed(url, agents) is answer
    assert rules.is_allowed(url, tuple(agents)) is answer


@settings(max_examples=100, deadline=None)
@given(body=robots_files(), url=_URLS, agents=st.lists(_AGENTS, min_size=2, max_size=4))
def test_several_tokens_disallow_if_any_one_does(body: bytes, url: str, agents: list[str]) -> None:
    rules = RobotsRules.parse(body)
    each = [rules.is_allowed(url, agent) for agent in agents]
    assert rules.is_allowed(url, agents) is all(each)


@settings(max_examples=100, deadline=None)
@given(body=robots_files(), url=_URLS)
def test_a_file_without_rules_for_the_agent_allows_everything(body: bytes, url: str) -> None:
    # Drop every group that could apply to "zedbot": those naming it and the * groups.
    text = body.decode("utf-8", "replace").replace("*", "x").replace("ZedBot", "z")
    rules = RobotsRules.parse(text.encode())
    assert rules.is_allowed(url, "ZedBot")
    assert rules.crawl_delay("ZedBot") is None


@settings(max_examples=200, deadline=None)
@given(url=st.text(max_size=80))
def test_request_target_is_an_ascii_path(url: str) -> None:
    target = request_target(url)
    assert target.startswith("/")
    assert target.isascii()
    assert "#" not in target
    # Normal form is a fixed point. Checked through a URL: a bare target starting with
    # "//" reads as a network-path reference (RFC 3986 4.2), not as a path.
    assert request_target("http://h.example" + target) == target


_PATTERN_CHARS = st.sampled_from([*list("ab/*."), "$", "%24"])
_PATTERNS = st.lists(_PATTERN_CHARS, max_size=7).map(lambda parts: "/" + "".join(parts))
_RULES = st.lists(st.builds(RobotsRule, st.booleans(), _PATTERNS), min_size=1, max_size=40)
_TARGETS = st.lists(st.sampled_from([*list("ab/."), "%24"]), max_size=9).map(
    lambda parts: "/" + "".join(parts)
)


@settings(max_examples=150, deadline=None)
@given(rules=_RULES, targets=st.lists(_TARGETS, min_size=1, max_size=8))
def test_compiled_matcher_agrees_with_the_reference(
    rules: list[RobotsRule], targets: list[str]
) -> None:
    matcher = compile_group(rules)
    assert matcher is not None
    for target in targets:
        assert matcher.allows(target) is reference_verdict(rules, target)


# Found by Hypothesis: "/$a" (a literal "$", compared as "%24": 5 octets) is more specific
# than "/%24" (4 octets); ranked by the raw pattern length (3) it lost to it.
_LITERAL_DOLLAR = [
    RobotsRule(False, "/$b"),
    RobotsRule(False, "/%24"),
    RobotsRule(True, "/%24"),
    RobotsRule(False, "/$a"),
]


@settings(max_examples=100, deadline=None)
@given(rules=_RULES, targets=st.lists(_TARGETS, min_size=1, max_size=8))
@example(rules=_LITERAL_DOLLAR, targets=["/%24a"])
def test_small_chunks_and_exhausted_budget_agree_with_the_reference(
    rules: list[RobotsRule], targets: list[str]
) -> None:
    with (
        mock.patch.object(_robots_match, "CHUNK_RULES", 3),
        mock.patch.object(_robots_match, "COMPILE_BUDGET", 20),
    ):
        matcher = compile_group(rules)
        assert matcher is not None
        for target in targets:
            assert matcher.allows(target) is reference_verdict(rules, target)
