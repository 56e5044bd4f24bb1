"""Scores as keys (trawl.ranking) and the ranker's policy (frontier/priority.py)."""

from __future__ import annotations

import math

import pytest

from trawl.frontier.admission import parse_seed
from trawl.frontier.priority import HostQuality, Ranker
from trawl.ranking import SCALE, importance_key, raised_key, score_of


def test_keys_order_scores_higher_first_over_many_magnitudes() -> None:
    scores = [1e-25, 3e-9, 1e-6, 0.5, 1.0, 1.000001, 2.0, 1e5]
    keys = [importance_key(s) for s in scores]
    assert keys == sorted(keys, reverse=True)
    assert len(set(keys)) == len(keys)  # a millionth apart still orders
    assert importance_key(1.0) == 0
    assert score_of(importance_key(0.25)) == pytest.approx(0.25, rel=1e-6)
    assert importance_key(0.0) == importance_key(-1.0)  # nothing received: the floor


def test_a_raise_is_the_key_of_the_larger_importance() -> None:
    for importance, gain in [(0.01, 0.5), (1.0, 1e-9), (0.0, 0.2), (3.0, 0.0)]:
        other = 1_234  # the key's other factors (depth, host quality) stay as they were
        key = importance_key(importance) + other
        assert (
            abs(raised_key(key, importance, gain) - (importance_key(importance + gain) + other))
            <= 1
        )
    assert raised_key(77, 1.0, -5.0) == 77


def test_depth_order_keys_are_depths_and_nothing_is_shared() -> None:
    r = Ranker("depth")
    assert [r.key("a.test", d, 0.3) for d in (0, 1, 7)] == [0, 1, 7]
    assert r.share(1.0, 10) == 0.0
    assert r.stored_cash(0.3) == 1.0
    assert r.demotion_step == 10
    assert r.revisit_shift(3600.0, 1800.0, 3600.0) == 0


def test_opic_keys_weigh_cash_depth_and_host_quality() -> None:
    quality = HostQuality(prior=2.0)
    r = Ranker("opic", quality=quality, depth_decay=0.5)
    assert r.share(1.0, 4) == 0.25
    assert r.share(1.0, 0) == 0.0
    assert r.key("a.test", 0, 1.0) == 0
    # One level deeper is worth half the cash.
    assert r.key("a.test", 1, 1.0) == r.key("a.test", 0, 0.5)
    for _ in range(6):
        quality.record("dups.test", good=False)
    quality.record("dups.test", good=True)
    assert quality.factor("dups.test") == pytest.approx(3 / 9)
    assert r.key("dups.test", 0, 1.0) == r.key("a.test", 0, 1 / 3)
    assert r.demotion_step == round(math.log(4) * SCALE)


def test_a_revisit_of_a_page_that_changes_comes_sooner() -> None:
    r = Ranker("opic", change_weight=0.5)
    assert r.revisit_shift(None, 3600.0, 3600.0) == 0  # first visit: the initial interval
    halved = r.revisit_shift(3600.0, 1800.0, 3600.0)
    assert halved < 0  # a better key
    assert halved == -round(0.5 * math.log(2) * SCALE)
    assert r.revisit_shift(3600.0, 7200.0, 3600.0) == -halved


def test_host_quality_forgets_the_oldest_host_past_its_bound() -> None:
    q = HostQuality(max_hosts=2)
    q.record("a", good=False)
    q.record("b", good=False)
    q.record("a", good=True)  # a is now the most recent
    q.record("c", good=False)
    assert len(q) == 2
    assert q.factor("b") == 1.0  # forgotten
    assert q.factor("a") < 1.0 and q.factor("c") < 1.0


def test_seed_lines() -> None:
    assert parse_seed("https://a.test/") == ("https://a.test/", None)
    assert parse_seed("  https://a.test/ 2.5 ") == ("https://a.test/", 2.5)
    assert parse_seed("https://a.test/a b") == ("https://a.test/a b", None)
    for bad in ("https://a.test/ 0", "https://a.test/ -3", "https://a.test/ 1e7", "x nan"):
        with pytest.raises(ValueError, match="priority must be a number"):
            parse_seed(bad)
