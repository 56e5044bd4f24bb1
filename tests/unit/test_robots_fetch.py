"""What a robots.txt fetch outcome means, how long it is cached, and what survives a pickle.

Times are plain floats passed in: no clock, no sleeps.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle

import pytest

from trawl.fetch.robots import (
    CACHE_TTL,
    MAX_BYTES,
    MAX_REDIRECTS,
    OUTAGE_GRACE,
    RETRY_BASE,
    RETRY_CAP,
    FetchOutcome,
    RobotsRules,
    retry_delay,
    rules_for_fetch,
    rules_for_outage,
)

BODY = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: https://e.com/s.xml\n"
DAY = 86_400.0


def test_constants() -> None:
    assert MAX_REDIRECTS == 5
    assert CACHE_TTL == DAY
    assert MAX_BYTES == 512_000
    assert RETRY_BASE == 300.0
    assert RETRY_CAP == 3_600.0
    assert OUTAGE_GRACE == 30 * DAY


# --- Status codes ---------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 203, 206, 299])
def test_2xx_parses_the_body(status: int) -> None:
    rules = rules_for_fetch(status, BODY, now=1000.0)
    assert rules.outcome is FetchOutcome.PARSED
    assert not rules.is_allowed("/private/x", "trawl")
    assert rules.is_allowed("/public", "trawl")
    assert rules.sitemaps == ("https://e.com/s.xml",)
    assert rules.fetched_at == 1000.0
    assert rules.expires_at == 1000.0 + CACHE_TTL


def test_2xx_without_a_body_means_no_rules() -> None:
    rules = rules_for_fetch(204, None)
    assert rules.outcome is FetchOutcome.PARSED
    assert rules.groups == ()
    assert rules.is_allowed("/anything", "trawl")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 499])
def test_4xx_means_no_rules(status: int) -> None:
    rules = rules_for_fetch(status, BODY, now=50.0)  # the body of an error page is ignored
    assert rules.outcome is FetchOutcome.NO_RULES
    assert rules.is_allowed("/private/x", ["trawl", "GPTBot"])
    assert rules.crawl_delay("trawl") is None
    assert rules.sitemaps == ()
    assert rules.expires_at == 50.0 + CACHE_TTL


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 599, None])
def test_429_5xx_and_network_errors_disallow_everything(status: int | None) -> None:
    rules = rules_for_fetch(status, BODY, now=50.0)
    assert rules.outcome is FetchOutcome.UNREACHABLE
    assert not rules.is_allowed("/", "trawl")
    assert not rules.is_allowed("https://e.com/public?x", ["a", "b"])
    assert rules.is_allowed("/robots.txt", "trawl")  # refetching it stays possible
    assert rules.expires_at == 50.0 + RETRY_BASE


@pytest.mark.parametrize("status", [100, 101, 199, 300, 301, 302, 304, 307, 308, 399])
def test_1xx_and_unfollowed_3xx_are_treated_as_unreachable(status: int) -> None:
    rules = rules_for_fetch(status, BODY, redirects=MAX_REDIRECTS - 1)
    assert rules.outcome is FetchOutcome.UNREACHABLE
    assert not rules.is_allowed("/public", "trawl")


@pytest.mark.parametrize("status", [0, 99, 600, 999, -1])
def test_codes_outside_http_are_treated_as_unreachable(status: int) -> None:
    assert rules_for_fetch(status, BODY).outcome is FetchOutcome.UNREACHABLE


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_more_than_five_redirects_means_no_rules(status: int) -> None:
    # Five hops followed and the sixth response still redirects: RFC 9309 2.3.1.2 lets
    # the crawler assume "unavailable", the 4xx case.
    rules = rules_for_fetch(status, None, redirects=MAX_REDIRECTS, now=7.0)
    assert rules.outcome is FetchOutcome.NO_RULES
    assert rules.is_allowed("/anything", "trawl")
    assert rules.expires_at == 7.0 + CACHE_TTL
    assert rules_for_fetch(status, None, redirects=9).outcome is FetchOutcome.NO_RULES


def test_a_file_reached_within_five_redirects_is_parsed() -> None:
    rules = rules_for_fetch(200, BODY, redirects=MAX_REDIRECTS)
    assert rules.outcome is FetchOutcome.PARSED
    assert not rules.is_allowed("/private/", "trawl")


# --- Cache lifetime and retries -----------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "lifetime"),
    [(60.0, 60.0), (CACHE_TTL, CACHE_TTL), (10 * DAY, CACHE_TTL), (math.inf, CACHE_TTL),
     (0.0, 0.0), (-5.0, 0.0), (math.nan, 0.0)],
)  # fmt: skip
def test_lifetime_is_capped_at_24_hours(ttl: float, lifetime: float) -> None:
    assert rules_for_fetch(200, BODY, now=100.0, ttl=ttl).expires_at == 100.0 + lifetime
    assert rules_for_fetch(404, None, now=100.0, ttl=ttl).expires_at == 100.0 + lifetime
    assert RobotsRules.parse(BODY, now=100.0, ttl=ttl).expires_at == 100.0 + lifetime


def test_is_expired() -> None:
    rules = RobotsRules.parse(BODY, now=1000.0, ttl=60.0)
    assert not rules.is_expired(1000.0)
    assert not rules.is_expired(1059.999)
    assert rules.is_expired(1060.0)
    assert rules.is_expired(10**9)


@pytest.mark.parametrize(
    ("failures", "delay"),
    [(1, 300.0), (2, 600.0), (3, 1200.0), (4, 2400.0), (5, 3600.0), (6, 3600.0),
     (100, 3600.0), (10**9, 3600.0), (0, 300.0), (-3, 300.0)],
)  # fmt: skip
def test_retry_delay_doubles_from_5_minutes_up_to_an_hour(failures: int, delay: float) -> None:
    assert retry_delay(failures) == delay


def test_retry_delay_is_parameterised() -> None:
    assert retry_delay(1, base=10.0, cap=100.0) == 10.0
    assert retry_delay(3, base=10.0, cap=100.0) == 40.0
    assert retry_delay(5, base=10.0, cap=100.0) == 100.0


def test_unreachable_rules_expire_at_the_next_retry() -> None:
    for failures in (1, 2, 3, 9):
        for status in (None, 503, 429):
            rules = rules_for_fetch(status, None, now=500.0, failures=failures)
            assert rules.expires_at == 500.0 + retry_delay(failures)
            assert rules.fetched_at == 500.0


# --- Long outages (RFC 9309 2.3.1.4) ------------------------------------------------------


def test_outage_within_30_days_disallows_everything() -> None:
    good = rules_for_fetch(200, BODY, now=0.0)
    for unreachable_for in (0.0, 3600.0, 29 * DAY, OUTAGE_GRACE, math.nan):
        rules = rules_for_outage(good, unreachable_for=unreachable_for, now=40 * DAY)
        assert rules.outcome is FetchOutcome.UNREACHABLE
        assert not rules.is_allowed("/public", "trawl")
        assert rules.expires_at == 40 * DAY + RETRY_BASE


def test_outage_beyond_30_days_uses_the_last_good_copy() -> None:
    good = rules_for_fetch(200, BODY, now=5.0)
    now = 45 * DAY
    rules = rules_for_outage(good, unreachable_for=31 * DAY, now=now, failures=20)
    assert rules.outcome is FetchOutcome.PARSED
    assert rules.groups == good.groups
    assert rules.sitemaps == good.sitemaps
    assert rules.fetched_at == 5.0  # still says how old the copy is
    assert rules.expires_at == now + RETRY_CAP  # keep retrying the fetch
    assert not rules.is_allowed("/private/x", "trawl")
    assert rules.is_allowed("/public", "trawl")
    assert rules.crawl_delay("trawl") == 2.0


def test_outage_beyond_30_days_keeps_a_last_4xx_as_no_rules() -> None:
    good = rules_for_fetch(404, None, now=5.0)
    rules = rules_for_outage(good, unreachable_for=OUTAGE_GRACE + 1, now=40 * DAY)
    assert rules.outcome is FetchOutcome.NO_RULES
    assert rules.is_allowed("/anything", "trawl")


@pytest.mark.parametrize("last", [None, RobotsRules.disallow_all()])
def test_outage_beyond_30_days_without_a_good_copy_means_no_rules(
    last: RobotsRules | None,
) -> None:
    rules = rules_for_outage(last, unreachable_for=60 * DAY, now=61 * DAY, failures=2)
    assert rules.outcome is FetchOutcome.NO_RULES
    assert rules.is_allowed("/anything", ["trawl", "GPTBot"])
    assert rules.expires_at == 61 * DAY + 600.0


def test_outage_grace_is_parameterised() -> None:
    good = rules_for_fetch(200, BODY)
    assert rules_for_outage(good, unreachable_for=11.0, now=20.0, grace=10.0).groups == good.groups
    assert rules_for_outage(good, unreachable_for=9.0, now=20.0, grace=10.0).outcome is (
        FetchOutcome.UNREACHABLE
    )


# --- Constructors, immutability, pickling -------------------------------------------------


def test_allow_all_and_disallow_all() -> None:
    assert RobotsRules.allow_all().is_allowed("/x", "a")
    assert RobotsRules.allow_all().outcome is FetchOutcome.NO_RULES
    assert not RobotsRules.disallow_all().is_allowed("/x", ["a", "b"])
    assert RobotsRules.disallow_all().is_allowed("/robots.txt", "a")
    assert RobotsRules.disallow_all(now=3.0, ttl=7.0).expires_at == 10.0
    assert RobotsRules().is_allowed("/x", "a")


def test_rules_are_immutable() -> None:
    rules = RobotsRules.parse(BODY)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.expires_at = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.groups[0].rules[0].allow = True  # type: ignore[misc]


def test_parse_is_deterministic_and_rules_are_hashable() -> None:
    first, second = RobotsRules.parse(BODY), RobotsRules.parse(BODY)
    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second, RobotsRules.allow_all()}) == 2


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip_before_and_after_use(protocol: int) -> None:
    rules = rules_for_fetch(200, BODY, now=12.5)
    fresh = pickle.loads(pickle.dumps(rules, protocol))
    assert fresh == rules
    assert rules.is_allowed("/public", ["trawl", "GPTBot"])  # fills the internal memo
    used = pickle.loads(pickle.dumps(rules, protocol))
    assert used == rules
    assert (used.fetched_at, used.expires_at, used.outcome) == (12.5, 12.5 + DAY, rules.outcome)
    for copy_ in (fresh, used):
        assert not copy_.is_allowed("/private/x", "trawl")
        assert copy_.is_allowed("/public", ["trawl", "GPTBot"])
        assert copy_.crawl_delay("trawl") == 2.0


def test_pickle_holds_the_parsed_content_only() -> None:
    rules = RobotsRules.parse(BODY)
    before = len(pickle.dumps(rules))
    for number in range(50):
        rules.is_allowed(f"/p/{number}", (f"agent{number}", "trawl"))
    assert len(pickle.dumps(rules)) == before


def test_copies_behave_like_the_original() -> None:
    rules = RobotsRules.parse(BODY)
    rules.is_allowed("/x", "trawl")
    for other in (copy.copy(rules), copy.deepcopy(rules)):
        assert other == rules
        assert not other.is_allowed("/private/", "trawl")


def test_replace_keeps_behaviour() -> None:
    rules = RobotsRules.parse(BODY)
    later = dataclasses.replace(rules, expires_at=5.0)
    assert later.expires_at == 5.0
    assert not later.is_allowed("/private/", "trawl")


def test_many_agent_tuples_do_not_grow_memory_without_bound() -> None:
    rules = RobotsRules.parse(BODY)
    for number in range(2_000):
        assert not rules.is_allowed("/private/x", f"bot{number}")
    assert len(rules._by_agents) <= 256
