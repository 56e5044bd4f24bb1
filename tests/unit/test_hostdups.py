from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.dedup.hostdups import Demotion, HostDupTracker, Outcome

D, N, NEW, C = Outcome.DUPLICATE, Outcome.NEAR_DUPLICATE, Outcome.NEW, Outcome.CANONICAL_ELSEWHERE


def _feed(
    t: HostDupTracker, host: str, outcomes: list[Outcome], admitted: int = 100
) -> list[Demotion]:
    return [d for o in outcomes if (d := t.record(host, o, admitted=admitted)) is not None]


def test_no_demotion_before_min_pages() -> None:
    t = HostDupTracker(window=50, min_pages=20, threshold=0.6)
    assert _feed(t, "h", [D] * 19) == []
    demotions = _feed(t, "h", [D])
    assert len(demotions) == 1


def test_demotion_reason_budget_and_priority() -> None:
    t = HostDupTracker(window=50, min_pages=20, threshold=0.6, budget_floor=10)
    outcomes = [NEW] * 14 + [D] * 20 + [N] * 16
    demotions = _feed(t, "h", outcomes, admitted=400)
    d = demotions[0]
    assert d.host == "h" and d.priority == 10 and d.budget == 440
    last = t.record("h", D, admitted=400)
    assert last is None  # demoted once; not much worse
    assert t.share("h") == pytest.approx(37 / 50)
    assert "of the last" in d.reason and "duplicates or near-duplicates" in d.reason


def test_exact_reason_text() -> None:
    t = HostDupTracker(window=50, min_pages=50, threshold=0.6)
    d = _feed(t, "h", [NEW] * 14 + [D] * 30 + [N] * 6, admitted=5)
    assert d and d[0].reason == (
        "72% of the last 50 pages were duplicates or near-duplicates "
        "(30 duplicates, 6 near-duplicates)"
    )
    assert d[0].budget == 15


def test_demoted_again_only_when_worse() -> None:
    t = HostDupTracker(window=10, min_pages=10, threshold=0.6, worse_by=0.2)
    first = _feed(t, "h", [NEW] * 3 + [D] * 7)
    assert len(first) == 1
    again = _feed(t, "h", [D] * 3)  # share climbs to 1.0
    assert len(again) == 1 and again[0].priority == 20


def test_canonical_counts_only_when_asked() -> None:
    assert _feed(HostDupTracker(min_pages=20), "h", [C] * 30) == []
    assert _feed(HostDupTracker(min_pages=20, count_canonical=True), "h", [C] * 30)


def test_window_slides() -> None:
    t = HostDupTracker(window=20, min_pages=20, threshold=0.6)
    _feed(t, "h", [D] * 20 + [NEW] * 20)
    assert t.share("h") == 0.0


def test_lru_bounds_memory() -> None:
    t = HostDupTracker(max_hosts=3)
    for host in "abcd":
        t.record(host, D, admitted=1)
    t.record("b", D, admitted=1)
    t.record("e", D, admitted=1)
    assert len(t) == 3
    assert t.share("a") is None and t.share("c") is None and t.share("b") == 1.0


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="min_pages"):
        HostDupTracker(window=5, min_pages=6)


@settings(max_examples=300, deadline=None)
@given(
    window=st.integers(1, 70),
    canonical=st.booleans(),
    outcomes=st.lists(st.sampled_from(list(Outcome)), max_size=200),
)
def test_the_window_counts_as_a_list_of_its_last_outcomes_would(
    window: int, canonical: bool, outcomes: list[Outcome]
) -> None:
    t = HostDupTracker(window=window, min_pages=1, threshold=1.0, count_canonical=canonical)
    kept: deque[Outcome] = deque(maxlen=window)
    for o in outcomes:
        t.record("h", o, admitted=1)
        kept.append(o)
        dups = kept.count(D) + kept.count(N) + (kept.count(C) if canonical else 0)
        assert t.share("h") == dups / len(kept)
        w = t._hosts.peek("h")
        assert w is not None
        assert list(w.counts(t._lows)) == [kept.count(k) for k in (D, N, C)]
