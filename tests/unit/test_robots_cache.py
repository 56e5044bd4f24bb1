"""robots.txt caching per origin, expiry, outages, and survival across restarts."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from trawl.fetch.robots import FetchOutcome, rules_for_fetch
from trawl.fetch.robots_cache import _ORIGIN_BYTES, RobotsCache, origin_of, rules_bytes
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


def _big_robots(rules: int, tag: str) -> bytes:
    lines = [b"User-agent: *"] + [f"Disallow: /{tag}/path{i}/*.php$".encode() for i in range(rules)]
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("rules", [1, 1_000])
def test_the_estimate_of_what_rules_hold_is_near_what_they_hold(rules: int) -> None:
    body = _big_robots(rules, "x")
    tracemalloc.start()
    try:
        held = [rules_for_fetch(200, body, now=T0) for _ in range(4)]
        for r in held:  # the matchers compiled, as the fetch stage's first check does
            assert not r.is_allowed("/x/path0/a.php", "trawl")
        size = tracemalloc.get_traced_memory()[0] / len(held)
    finally:
        tracemalloc.stop()
    estimate = rules_bytes(held[0])
    assert size / 2 < estimate < size * 2, (size, estimate)


def test_hosts_with_huge_robots_files_are_held_within_the_budget(tmp_path: Path) -> None:
    # An attacker's subdomains each serving a 500 KB robots.txt (some 3 MB of rules in
    # memory each) must not grow the crawl process without bound: past its budget the
    # cache forgets the least recently used, and reads them again from the store.
    store = open_store(tmp_path)
    budget = 512 * 1024
    cache = RobotsCache(store.robots, max_bytes=budget)
    origins = [f"http://h{i}.test" for i in range(20)]
    tracemalloc.start()
    try:
        for i, origin in enumerate(origins):
            rules = cache.record(origin, status=200, body=_big_robots(300, f"h{i}"), now=T0)
            assert not rules.is_allowed(f"/h{i}/path7/a.php", "trawl")
            assert cache.held_bytes <= budget
            store.commit()  # the store's rows are written out, as the crawl's commits do
        del rules
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 1 < len(cache) < 20
    assert held < 2 * budget, held
    # Forgotten rules still hold: read again from the store.
    first = cache.get(origins[0], T0 + 10)
    assert first is not None and not first.is_allowed("/h0/path7/a.php", "trawl")
    assert first.is_allowed("/h1/path7/a.php", "trawl")
    store.close()


def test_the_least_recently_used_rules_go_first(tmp_path: Path) -> None:
    store = open_store(tmp_path)

    def body(name: str) -> bytes:  # rules of their own: none shared
        return f"User-agent: *\nDisallow: /{name}/\n".encode()

    cost = rules_bytes(rules_for_fetch(200, body("a"), now=T0)) + _ORIGIN_BYTES
    cache = RobotsCache(store.robots, max_bytes=3 * cost)
    for name in "abc":
        cache.record(f"http://{name}.test", status=200, body=body(name), now=T0)
    assert cache.get("http://a.test", T0 + 1) is not None  # a: used again, so b is oldest
    cache.record("http://d.test", status=200, body=body("d"), now=T0)
    assert list(cache._mem) == ["http://c.test", "http://a.test", "http://d.test"]
    store.close()


def test_origins_serving_the_same_rules_share_one_parse(tmp_path: Path) -> None:
    # A platform's subdomains, the bare "Disallow:", every 404: one parse and one set of
    # compiled matchers for all of them, each origin keeping its own times.
    store = open_store(tmp_path)
    cache = RobotsCache(store.robots)
    body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"
    origins = [f"http://s{i}.platform.test" for i in range(2_000)]
    tracemalloc.start()
    try:
        for i, origin in enumerate(origins):
            rules = cache.record(origin, status=200, body=body, now=T0 + i)
            assert not rules.is_allowed("/private/x", "trawl")
            assert rules.crawl_delay("trawl") == 2.0
        del rules
        size = tracemalloc.get_traced_memory()[0] / len(origins)
    finally:
        tracemalloc.stop()
    assert size < 700, size  # was some 1.3 KB an origin, each its own parse
    assert cache.distinct == 1 and len(cache) == len(origins)
    one = rules_bytes(rules_for_fetch(200, body, now=T0))
    assert cache.held_bytes == one + len(origins) * _ORIGIN_BYTES
    # Each origin's rules expire on their own times.
    last = cache.get(origins[-1], T0 + 86_400.5)
    assert cache.get(origins[0], T0 + 86_400.5) is None and last is not None
    assert last.fetched_at == T0 + len(origins) - 1
    # 404s share too, and the shared content goes when its last origin does.
    cache.record("http://gone.test", status=404, body=b"", now=T0)
    assert cache.distinct == 2
    small = RobotsCache(store.robots, capacity=2)
    small.record("http://a.test", status=200, body=body, now=T0)
    small.record("http://b.test", status=200, body=body, now=T0)
    assert small.distinct == 1
    small.record("http://c.test", status=404, body=b"", now=T0)
    small.record("http://d.test", status=404, body=b"", now=T0)
    assert small.distinct == 1 and list(small._mem) == ["http://c.test", "http://d.test"]
    assert small.held_bytes == rules_bytes(rules_for_fetch(404, b"", now=T0)) + 2 * _ORIGIN_BYTES
    store.close()
