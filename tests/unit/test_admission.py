"""Admission: scope, traps and the seen set, with every drop counted by reason."""

from __future__ import annotations

from pathlib import Path

from trawl.frontier.admission import Admission, Candidate
from trawl.frontier.priority import Ranker
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.storage.memory import MemoryCrawlStore
from trawl.storage.open import open_store


def test_offer_counts_every_drop(tmp_path: Path) -> None:
    store = open_store(tmp_path, max_per_host=3)
    counters = store.counters
    admission = Admission(
        frontier=store.frontier,
        scope=ScopeFilter("host", hosts=["a.test"]),
        limits=TrapLimits(max_depth=2),
        counters=counters,
        ranker=Ranker("depth"),
    )
    result = admission.offer(
        [
            Candidate("http://a.test/1", depth=1),
            Candidate("http://a.test/1", depth=1),
            Candidate("http://b.test/1", depth=1),
            Candidate("http://a.test/deep", depth=3),
            Candidate("http://a.test/r/a/r/a/r/a", depth=1),
            Candidate("http://a.test/2", depth=1),
            Candidate("http://a.test/3", depth=1),
            Candidate("http://a.test/4", depth=1),
        ],
        now=0.0,
    )
    assert [u.url for u in result.added] == [
        "http://a.test/1",
        "http://a.test/2",
        "http://a.test/3",
    ]
    assert result.dropped == {
        "out of scope": 1,
        "too deep": 1,
        "repeated path segments": 1,
        "host budget": 1,
    }
    again = admission.offer([Candidate("HTTP://A.test:80/1#x", depth=1)], now=0.0, normalised=False)
    assert again.seen == 1
    bad = admission.offer([Candidate("mailto:x@a.test", depth=1)], now=0.0, normalised=False)
    assert bad.dropped == {"unsupported scheme": 1}
    store.commit()
    assert counters.get("dropped:out of scope") == 1
    assert counters.with_prefix("dropped:")["host budget"] == 1
    store.close()
    reopened = open_store(tmp_path)
    assert reopened.counters.get("dropped:too deep") == 1
    reopened.close()


def _admission(store: MemoryCrawlStore, ranker: Ranker) -> Admission:
    return Admission(
        frontier=store.frontier,
        scope=ScopeFilter("any"),
        limits=TrapLimits(max_depth=5),
        counters=store.counters,
        ranker=ranker,
    )


def test_seeds_carry_their_priority() -> None:
    store = MemoryCrawlStore()
    admission = _admission(store, Ranker("opic"))
    result, errors = admission.seed(
        ["http://a.test/ 5", "http://b.test/", "http://c.test/ 0.5", "http://d.test/ -1"], now=0.0
    )
    assert errors == [
        "http://d.test/ -1: priority must be a number above 0 and up to 1e6, got '-1'"
    ]
    by_url = {u.url: u for u in result.added}
    assert [by_url[f"http://{h}.test/"].cash for h in "abc"] == [5.0, 1.0, 0.5]
    assert all(u.gain == 0 for u in result.added)  # offered again, a seed raises nothing
    order = []
    while (lease := store.frontier.take(0.0)) is not None:
        order.append(lease.host)
    assert order == ["a.test", "b.test", "c.test"]


def test_links_share_cash_and_raise_what_waits_in_opic_order_only() -> None:
    for mode in ("opic", "depth"):
        store = MemoryCrawlStore()
        admission = _admission(store, Ranker(mode))
        admission.offer([Candidate("http://a.test/x", depth=2, cash=0.1)], now=0.0)
        admission.offer([Candidate("http://a.test/y", depth=1, cash=0.2)], now=0.0)
        again = admission.offer([Candidate("http://a.test/x", depth=3, cash=0.3)], now=0.0)
        assert again.seen == 1
        first = store.frontier.take(0.0)
        assert first is not None
        # OPIC: /x holds 0.4 against /y's 0.2; depth order: /y is shallower.
        assert first.url == ("http://a.test/x" if mode == "opic" else "http://a.test/y")
        assert first.cash == (0.4 if mode == "opic" else 1.0)
