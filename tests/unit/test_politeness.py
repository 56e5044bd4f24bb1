"""Host pacing on virtual time: delays, Crawl-delay bounds, back-off and Retry-After."""

from __future__ import annotations

from trawl.fetch.politeness import Politeness, parse_retry_after

T0 = 1_000.0


def pace() -> Politeness:
    return Politeness(delay=1.0, max_crawl_delay=30.0, max_backoff=600.0)


def test_default_delay_and_crawl_delay_bounds() -> None:
    p = pace()
    assert p.after_success("a", T0) == T0 + 1.0
    p.set_crawl_delay("a", 2.5)
    assert p.after_success("a", T0) == T0 + 2.5
    p.set_crawl_delay("a", 0.1)  # never faster than the crawl's own delay
    assert p.after_success("a", T0) == T0 + 1.0
    p.set_crawl_delay("a", 3600)  # bounded by the maximum
    assert p.after_success("a", T0) == T0 + 30.0
    p.set_crawl_delay("a", float("nan"))
    assert p.delay("a") == 1.0


def test_backoff_doubles_then_recovers() -> None:
    p = pace()
    assert p.after_trouble("a", T0) == T0 + 2.0  # delay + backoff 1
    assert p.after_trouble("a", T0) == T0 + 3.0  # backoff 2
    assert p.after_trouble("a", T0) == T0 + 5.0  # backoff 4
    assert p.after_success("a", T0) == T0 + 3.0  # halved to 2
    assert p.after_success("a", T0) == T0 + 2.0
    assert p.after_success("a", T0) == T0 + 1.0
    assert p.backoff("a") == 0.0


def test_backoff_is_capped() -> None:
    p = Politeness(delay=1.0, max_crawl_delay=30.0, max_backoff=10.0)
    for _ in range(20):
        at = p.after_trouble("a", T0)
    assert at == T0 + 11.0


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    p = pace()
    assert p.after_trouble("a", T0, retry_after=120.0) == T0 + 120.0
    assert p.after_trouble("b", T0, retry_after=10**9) == T0 + 600.0


def test_parse_retry_after() -> None:
    assert parse_retry_after("120", T0) == 120.0
    assert parse_retry_after(None, T0) is None
    assert parse_retry_after("soon", T0) is None
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    now = 1445412470.0  # 10 s before that date
    assert parse_retry_after(date, now) == 10.0
    assert parse_retry_after(date, now + 100) == 0.0


def test_the_least_recently_fetched_hosts_are_forgotten_past_the_cap() -> None:
    p = Politeness(delay=1.0, max_crawl_delay=30.0, max_backoff=600.0, max_hosts=10)
    for i in range(10):
        p.set_crawl_delay(f"h{i}.example", 5.0)
    p.after_trouble("h0.example", 0.0)
    p.set_crawl_delay("h0.example", 5.0)  # fetched again: now the most recent
    p.set_crawl_delay("new.example", 2.0)  # the 11th: one host forgotten (a tenth)
    assert p.delay("h0.example") == 5.0 and p.backoff("h0.example") > 0
    assert p.delay("h1.example") == 1.0  # the least recently fetched: forgotten
    assert all(p.delay(f"h{i}.example") == 5.0 for i in range(2, 10))
    assert len(p._hosts) == 10


def test_a_host_with_neither_crawl_delay_nor_back_off_is_not_held() -> None:
    p = Politeness(delay=1.0, max_crawl_delay=30.0, max_backoff=600.0)
    for i in range(100):
        p.set_crawl_delay(f"h{i}.example", None)
        assert p.after_success(f"h{i}.example", 10.0) == 11.0
    assert len(p._hosts) == 0
    p.set_crawl_delay("slow.example", 3.0)
    p.after_trouble("busy.example", 0.0)  # a back-off: held
    assert len(p._hosts) == 2 and p.backoff("busy.example") == 1.0
    p.set_crawl_delay("slow.example", None)  # its robots.txt dropped the Crawl-delay
    assert p.delay("slow.example") == 1.0 and len(p._hosts) == 1
    assert p.after_success("busy.example", 10.0) == 11.0  # the back-off shrank to 0
    assert p.backoff("busy.example") == 0.0 and len(p._hosts) == 0
    assert p.after_trouble("busy.example", 20.0) == 22.0  # starts again from the delay
