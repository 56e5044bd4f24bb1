"""Admission: scope, traps and the seen set, with every drop counted by reason."""

from __future__ import annotations

from pathlib import Path

from trawl.frontier.admission import Admission, Candidate
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.storage.sqlite.counters import SqliteCounters
from trawl.storage.sqlite.db import Database
from trawl.storage.sqlite.frontier import SqliteFrontier


def test_offer_counts_every_drop(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    counters = SqliteCounters(db)
    admission = Admission(
        frontier=SqliteFrontier(db, max_per_host=3),
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
    db.commit()
    assert counters.get("dropped:out of scope") == 1
    assert counters.with_prefix("dropped:")["host budget"] == 1
    db.close()
    reopened = Database(tmp_path / "state.db")
    assert SqliteCounters(reopened).get("dropped:too deep") == 1
    reopened.close()
