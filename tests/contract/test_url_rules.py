"""The UrlRuleStore contract: learned URL equivalences, their counts and rewritten URLs.

A rule's state only moves up (candidate, active, refuted), whatever a worker with an
older copy saves over it; counts add up across workers; everything is provisional
until the commit, like every other store of the crawl.
"""

from __future__ import annotations

from dataclasses import replace

from tests.contract.conftest import Backend
from trawl.dedup.urlrules import Rewrite, RuleState, UrlRule

SID = UrlRule("a.example", "param:sid", pages=("p1", "p2"), values=("v1",), changed_at=5.0)
SLASH = UrlRule("a.example", "slash", RuleState.ACTIVE, pages=("p1",), votes=(3, 1), prefer="/")
OTHER = UrlRule("b.example", "segment:amp", RuleState.REFUTED, reason="differ: /amp/x and /x")


def rewrite(url: str, key: str = "param:sid", host: str = "a.example") -> Rewrite:
    return Rewrite(host, key, url, url.partition("?")[0], depth=2)


def test_rules_round_trip_by_host(backend: Backend) -> None:
    rules = backend.store().url_rules
    assert rules.rules("a.example") == []
    for rule in (SID, SLASH, OTHER):
        rules.save(rule)
    assert rules.rules("a.example") == [SID, SLASH]  # by key
    assert rules.rules("b.example") == [OTHER]
    grown = replace(SID, pages=("p1", "p2", "p3"), values=("v1", "v2"), changed_at=6.0)
    rules.save(grown)
    assert rules.rules("a.example")[0] == grown


def test_a_state_never_goes_back(backend: Backend) -> None:
    rules = backend.store().url_rules
    active = replace(SID, state=RuleState.ACTIVE, reason="4 pages, 3 values")
    rules.save(active)
    rules.save(replace(SID, pages=("p9",)))  # an older candidate copy: ignored
    assert rules.rules("a.example") == [active]
    refuted = replace(SID, state=RuleState.REFUTED, reason="differ")
    rules.save(refuted)
    rules.save(active)
    assert rules.rules("a.example") == [refuted]
    backend.commit()
    rules = backend.restart(crash=False).url_rules
    rules.save(SID)
    backend.commit()
    assert rules.rules("a.example") == [refuted]


def test_counts_add_up_and_are_kept_across_saves(backend: Backend) -> None:
    rules = backend.store().url_rules
    rules.save(SLASH)
    rules.count("a.example", "slash", 3)
    rules.count("a.example", "slash", 2)
    assert rules.rules("a.example")[0].rewrites == 5
    backend.commit()
    rules.count("a.example", "slash", 1)
    rules.save(replace(SLASH, pages=("p1", "p2")))  # a save keeps the count
    assert rules.rules("a.example")[0].rewrites == 6
    backend.commit()
    rules = backend.restart(crash=True).url_rules
    assert rules.rules("a.example")[0].rewrites == 6


def test_rewrites_are_logged_by_rule_and_forgotten(backend: Backend) -> None:
    rules = backend.store().url_rules
    kept = [rewrite("http://a.example/x?sid=1"), rewrite("http://a.example/y?sid=2")]
    skipped = replace(rewrite("http://a.example/z?sid=3"), skipped=True)
    rules.log([*kept, skipped, rewrite("http://a.example/x/", "slash")])
    rules.log([rewrite("http://b.example/x?sid=1", host="b.example")])
    assert sorted(rules.logged("a.example", "param:sid"), key=lambda r: r.url) == [
        *kept,
        skipped,
    ]
    backend.commit()
    rules.log([rewrite("http://a.example/w?sid=4")])
    assert len(rules.logged("a.example", "param:sid")) == 4
    rules.forget("a.example", "param:sid")
    assert rules.logged("a.example", "param:sid") == []
    assert [r.url for r in rules.logged("a.example", "slash")] == ["http://a.example/x/"]
    assert len(rules.logged("b.example", "param:sid")) == 1
    backend.commit()
    rules = backend.restart(crash=True).url_rules
    assert rules.logged("a.example", "param:sid") == []


def test_everything_waits_for_the_commit(backend: Backend) -> None:
    rules = backend.store().url_rules
    rules.save(SID)
    rules.log([rewrite("http://a.example/x?sid=1")])
    backend.commit()
    rules.save(replace(SID, state=RuleState.ACTIVE))
    rules.count("a.example", "param:sid", 7)
    rules.log([rewrite("http://a.example/y?sid=2")])
    rules.forget("a.example", "param:sid")
    rules.save(OTHER)
    rules = backend.restart(crash=True).url_rules
    assert rules.rules("a.example") == [SID]
    assert rules.rules("b.example") == []
    assert [r.url for r in rules.logged("a.example", "param:sid")] == ["http://a.example/x?sid=1"]


def test_the_reader_lists_committed_rules(backend: Backend) -> None:
    store = backend.store()
    reader = store.reader()
    try:
        for rule in (OTHER, SLASH, SID):
            store.url_rules.save(rule)
        store.url_rules.count("a.example", "slash", 4)
        assert reader.url_rules() == []
        backend.commit()
        counted = replace(SLASH, rewrites=4)
        assert reader.url_rules() == [SID, counted, OTHER]  # by host, then key
        assert reader.url_rules("a.example") == [SID, counted]
        assert reader.url_rules("c.example") == []
    finally:
        reader.close()


def test_workers_of_a_fleet_share_rules(backend: Backend) -> None:
    peer = backend.open_peer()
    if peer is None:
        return  # one writer at a time: nothing to share
    try:
        mine = backend.store().url_rules
        mine.save(replace(SID, state=RuleState.ACTIVE))
        mine.count("a.example", "param:sid", 2)
        backend.commit()
        # The peer refutes the rule and counts; then this worker saves its older copy.
        peer.url_rules.save(replace(SID, state=RuleState.REFUTED, reason="differ"))
        peer.url_rules.count("a.example", "param:sid", 3)
        peer.commit()
        mine.save(replace(SID, state=RuleState.ACTIVE, pages=("p1", "p2", "p3")))
        backend.commit()
        [rule] = mine.rules("a.example")
        assert (rule.state, rule.reason, rule.rewrites) == (RuleState.REFUTED, "differ", 5)
    finally:
        peer.close(commit=False)
