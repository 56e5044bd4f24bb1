"""The Counters contract: named totals, committed with the rest of the crawl."""

from __future__ import annotations

from tests.contract.conftest import Backend


def test_add_and_get(backend: Backend) -> None:
    c = backend.store().counters
    assert c.get("status:200") == 0
    c.add("status:200")
    c.add("status:200", 4)
    c.add("error:timeout", 2)
    c.add("error:timeout", -1)
    assert c.get("status:200") == 5
    assert c.get("error:timeout") == 1
    assert c.all() == {"status:200": 5, "error:timeout": 1}


def test_adding_zero_creates_nothing(backend: Backend) -> None:
    c = backend.store().counters
    c.add("dropped:scope", 0)
    assert c.all() == {}
    assert c.get("dropped:scope") == 0


def test_with_prefix_strips_it_and_sorts(backend: Backend) -> None:
    c = backend.store().counters
    for name in ("dropped:scope", "status:200", "dropped:budget", "dropped:scope", "dropped"):
        c.add(name)
    assert c.with_prefix("dropped:") == {"budget": 1, "scope": 2}
    assert list(c.with_prefix("dropped:")) == ["budget", "scope"]
    assert c.with_prefix("nothing:") == {}


def test_counters_survive_commit_and_restart(backend: Backend) -> None:
    c = backend.store().counters
    c.add("status:200", 3)
    backend.commit()
    c.add("status:200", 2)  # lost in the crash below
    c.add("status:404")
    c = backend.restart(crash=True).counters
    assert c.all() == {"status:200": 3}
    c.add("status:200")
    c = backend.restart(crash=False).counters
    assert c.all() == {"status:200": 4}


def test_counters_without_commit_are_lost(backend: Backend) -> None:
    c = backend.store().counters
    c.add("status:200", 3)
    c = backend.restart(crash=True).counters
    assert c.all() == {}
    assert c.get("status:200") == 0
