"""Admission: scope, traps and the seen set, with every drop counted by reason."""

from __future__ import annotations

from pathlib import Path

from trawl.frontier.admission import Admission, Candidate
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.storage.open import open_store


def test_offer_counts_every_drop(tmp_path: Path) -> None:
    store = open_store(tmp_path, max_per_host=3)
    counters = store.counters
    admission = Admission(
        frontier=store.frontier,
        scope=ScopeFilter("host", hosts=["a.test"]),
        limits=TrapLimits(max_depth=2),
        counters=counters,
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
