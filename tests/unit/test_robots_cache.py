"""robots.txt caching per origin, expiry, outages, and survival across restarts."""

from __future__ import annotations

from pathlib import Path

from trawl.fetch.robots import FetchOutcome
from trawl.fetch.robots_cache import RobotsCache, origin_of
from trawl.storage.open import open_store

T0 = 1_000_000.0
DAY = 86_400.0


def test_origin_of() -> None:
    assert origin_of("https://a.test/x?y") == "https://a.test"
    assert origin_of("http://a.test:8080/") == "http://a.test:8080"
    assert origin_of("http://a.test?q") == "http://a.test"


def test_rules_cached_for_a_day_and_survive_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    cache = RobotsCache(store.robots)
    assert cache.get("http://a.test", T0) is None
    cache.record("http://a.test", status=200, body=b"User-agent: *\nDisallow: /p/\n", now=T0)
    rules = cache.get("http://a.test", T0 + 10)
    assert rules is not None
    assert not rules.is_allowed("http://a.test/p/1", "trawl")
    store.close()
    store = open_store(tmp_path)
    again = RobotsCache(store.robots)
    rules = again.get("http://a.test", T0 + DAY - 1)
    assert rules is not None
    assert not rules.is_allowed("/p/1", "trawl")
    assert again.get("http://a.test", T0 + DAY) is None  # expired: fetch again
    store.close()


def test_too_many_redirects_means_no_rules_after_a_restart_too(tmp_path: Path) -> None:
    # The row keeps the final 3xx; read back in another process (a resume, another
    # worker of a fleet) it must give the same answer, not "unreachable" for a day.
    store = open_store(tmp_path)
    cache = RobotsCache(store.robots)
    rules = cache.record("http://a.test", status=302, body=b"Moved", now=T0, redirects=5)
    assert rules.outcome is FetchOutcome.NO_RULES and rules.is_allowed("/p/1", "trawl")
    store.commit()
    store.close()
    store = open_store(tmp_path)
    again = RobotsCache(store.robots).get("http://a.test", T0 + 10)
    assert again is not None
    assert again.outcome is FetchOutcome.NO_RULES and again.is_allowed("/p/1", "trawl")
    store.close()


def test_outage_disallows_and_backs_off_then_recovers(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    cache = RobotsCache(store.robots, retry_base=10.0, retry_cap=40.0)
    first = cache.record("http://a.test", status=503, body=b"", now=T0)
    assert first.outcome is FetchOutcome.UNREACHABLE
    assert first.expires_at == T0 + 10
    assert not first.is_allowed("/anything", "trawl")
    second = cache.record("http://a.test", status=None, body=None, now=T0 + 10)
    assert second.expires_at == T0 + 10 + 20
    third = cache.record("http://a.test", status=500, body=b"", now=T0 + 30)
    assert third.expires_at == T0 + 30 + 40
    ok = cache.record("http://a.test", status=404, body=b"", now=T0 + 70)
    assert ok.outcome is FetchOutcome.NO_RULES
    assert ok.is_allowed("/anything", "trawl")
    store.close()


def test_long_outage_falls_back_to_last_good_copy(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    cache = RobotsCache(store.robots, retry_base=60.0, retry_cap=3600.0)
    cache.record("http://a.test", status=200, body=b"User-agent: *\nDisallow: /x\n", now=T0)
    cache.record("http://a.test", status=503, body=b"", now=T0 + DAY)
    later = cache.record("http://a.test", status=503, body=b"", now=T0 + DAY + 31 * DAY)
    assert later.outcome is FetchOutcome.PARSED
    assert later.is_allowed("/y", "trawl")
    assert not later.is_allowed("/x", "trawl")
    store.close()
