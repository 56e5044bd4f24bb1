"""Learning a host's URL equivalences, on fakes: the memory store, a fake clock, and the
real admission over the memory frontier.

What the parse stage would report is written by hand (``same``, ``differ``,
``canonical``): which URL a fetched page turned out to be.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from trawl import urls
from trawl.dedup.urlrules import RuleState, Thresholds
from trawl.frontier.admission import Admission, Candidate
from trawl.frontier.equivalences import Equivalences, Observation
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.models import Location, NewUrl, UrlStatus
from trawl.storage.base import FetchRecord
from trawl.storage.memory import MemoryCrawlStore
from trawl.testing import FakeClock

HOST = "h.example"
H = f"http://{HOST}"


@dataclass
class World:
    store: MemoryCrawlStore
    clock: FakeClock
    eq: Equivalences
    admission: Admission

    def observe(
        self,
        url: str,
        page: str | None,
        *,
        same_as: str | None = None,
        canonical: str | None = None,
        kept: bool = True,
    ) -> None:
        learned = self.eq.observe(Observation(HOST, url, page, same_as, canonical, kept))
        if learned.undo:
            self.admission.restore(learned.undo, now=self.clock.now())

    def same(self, url: str, kept: str) -> None:
        """``url`` turned out to be an exact duplicate of the kept page ``kept``."""
        self.observe(url, kept, same_as=kept)

    def new(self, url: str) -> None:
        """``url`` turned out to be a page of its own (stored)."""
        self.observe(url, url)

    def state(self, key: str) -> RuleState | None:
        rule = {r.key: r for r in self.eq.rules(HOST)}.get(key)
        return None if rule is None else rule.state

    def admit(self, *links: str) -> list[str]:
        result = self.admission.offer([Candidate(u, depth=1) for u in links], now=0.0)
        return [u.url for u in result.added]

    def known(self, url: str) -> UrlStatus | None:
        record = self.store.frontier.lookup(url, HOST, urls.fingerprint(url))
        return None if record is None else record.status


@pytest.fixture
def world() -> Iterator[World]:
    store = MemoryCrawlStore()
    clock = FakeClock()
    eq = Equivalences(
        store=store.url_rules,
        pages=store.pages,
        counters=store.counters,
        clock=clock,
        thresholds=Thresholds(pages=4, values=3),
    )
    admission = Admission(
        frontier=store.frontier,
        scope=ScopeFilter("host", hosts=[HOST]),
        limits=TrapLimits(),
        counters=store.counters,
        equivalences=eq,
    )
    yield World(store, clock, eq, admission)
    store.close(commit=False)


def learn_sid(w: World, pages: int = 4) -> None:
    for i in range(pages):
        w.same(f"{H}/p{i}?sid={i}", f"{H}/p{i}")


def test_enough_distinct_pages_and_values_make_a_rule(world: World) -> None:
    learn_sid(world, 3)
    assert world.state("param:sid") is RuleState.CANDIDATE
    assert world.admit(f"{H}/x?sid=9") == [f"{H}/x?sid=9"]  # not applied yet
    learn_sid(world, 4)
    assert world.state("param:sid") is RuleState.ACTIVE
    # Applied at admission, before the seen check: /p1 is the page /p1?sid=1 was.
    assert world.admit(f"{H}/y?sid=10&k=1", f"{H}/p1?sid=99") == [f"{H}/y?k=1"]
    assert world.admit(f"{H}/p1?sid=100", f"{H}/p1") == []
    [rule] = [r for r in world.eq.rules(HOST) if r.key == "param:sid"]
    assert (rule.rewrites, rule.reason) == (4, "4 pages, 4 values")
    assert world.store.counters.get("equivalence:rewritten") == 4
    assert world.store.counters.get("equivalence:learned") == 1
    logged = world.store.url_rules.logged(HOST, "param:sid")
    assert sorted((r.url, r.target) for r in logged) == [
        (f"{H}/p1", f"{H}/p1?sid=1"),
        (f"{H}/p1?sid=100", f"{H}/p1?sid=1"),
        (f"{H}/p1?sid=99", f"{H}/p1?sid=1"),
        (f"{H}/y?sid=10&k=1", f"{H}/y?k=1"),
    ]


def test_hosts_without_rules_share_one_empty_mapping(world: World) -> None:
    # Every host a link names is asked how to spell its URLs: one without rules holds
    # no dicts of its own, and the first rule it learns gets it its own.
    other = "o.example"
    for name in (HOST, other):
        assert world.eq.rewrite(f"http://{name}/a?sid=1", name) == (f"http://{name}/a?sid=1", ())
    empty = world.eq._host(other)
    assert empty.rules is empty.active is empty.learning is world.eq._host(HOST).rules
    learn_sid(world, 4)
    assert world.state("param:sid") is RuleState.ACTIVE
    assert isinstance(world.eq._host(HOST).active, dict)
    assert world.eq.rules(other) == [] and not empty.rules and not empty.active
    assert world.eq.rewrite(f"http://{other}/a?sid=1", other) == (f"http://{other}/a?sid=1", ())


def test_one_page_seen_many_times_is_one_page(world: World) -> None:
    """A soft 404: every URL of a host serves the same "not found" text, so every
    spelling of every URL is a pair. They all show one page: no rule."""
    soft_404 = f"{H}/error"
    for i in range(40):
        world.observe(f"{H}/gone/{i}", soft_404, same_as=soft_404)
        world.observe(f"{H}/gone/{i}?ref={i}", soft_404, same_as=soft_404)
        world.observe(f"{H}/gone/{i}?ref=x{i}", soft_404, same_as=soft_404)
    [ref] = [r for r in world.eq.rules(HOST) if r.key == "param:ref"]
    assert (ref.state, len(ref.pages), len(ref.values)) == (RuleState.CANDIDATE, 1, 16)


def test_a_counterexample_before_activation_refutes_for_good(world: World) -> None:
    learn_sid(world, 3)
    world.new(f"{H}/list")
    world.new(f"{H}/list?sid=2")  # another page under the same spelling: refuted
    assert world.state("param:sid") is RuleState.REFUTED
    learn_sid(world, 12)
    assert world.state("param:sid") is RuleState.REFUTED
    assert world.admit(f"{H}/z?sid=1") == [f"{H}/z?sid=1"]
    [rule] = [r for r in world.eq.rules(HOST) if r.key == "param:sid"]
    assert rule.reason == f"differ: {H}/list?sid=2 and {H}/list"


def test_the_variant_first_then_its_base(world: World) -> None:
    """``/list?page=2`` is parsed before ``/list``: the base, when it comes, differs."""
    world.new(f"{H}/list?page=2")
    assert world.state("param:page") is None
    world.new(f"{H}/list")
    assert world.state("param:page") is RuleState.REFUTED


def test_two_values_two_pages_refute_the_parameter(world: World) -> None:
    world.new(f"{H}/item?id=1")
    world.new(f"{H}/item?id=2")
    assert world.state("param:id") is RuleState.REFUTED


def test_a_content_parameter_is_never_learned_from_coincidences(world: World) -> None:
    """page=1 is the listing itself on many listings, and page=N beyond the end is one
    empty page: neither makes ``page`` droppable, and page=1 alone needs twice the
    pages."""
    for i in range(6):
        world.same(f"{H}/list{i}?page=1", f"{H}/list{i}")
        for n in (90, 91, 92):
            world.observe(f"{H}/more{i}?page={n}", f"{H}/no-results", same_as=f"{H}/no-results")
    [page] = [r for r in world.eq.rules(HOST) if r.key == "param:page"]
    assert (page.state, len(page.pages), len(page.values)) == (RuleState.CANDIDATE, 7, 4)
    assert world.state("param:page=1") is RuleState.CANDIDATE
    for i in range(6, 8):
        world.same(f"{H}/list{i}?page=1", f"{H}/list{i}")
    assert world.state("param:page=1") is RuleState.ACTIVE
    assert world.state("param:page") is RuleState.CANDIDATE
    # page=1 and page=90 of one listing are two pages: that refutes the parameter.
    world.observe(f"{H}/list0?page=90", f"{H}/no-results", same_as=f"{H}/no-results")
    assert world.state("param:page") is RuleState.REFUTED
    assert world.admit(f"{H}/other?page=1", f"{H}/other?page=2") == [
        f"{H}/other",
        f"{H}/other?page=2",
    ]


def test_retraction_gives_back_every_rewritten_url(world: World) -> None:
    learn_sid(world, 4)
    assert world.admit(f"{H}/a?sid=5", f"{H}/b?sid=6") == [f"{H}/a", f"{H}/b"]
    world.new(f"{H}/c")
    world.new(f"{H}/c?sid=7")  # a counterexample after the rule was applied
    assert world.state("param:sid") is RuleState.REFUTED
    for url in (f"{H}/a?sid=5", f"{H}/b?sid=6"):
        assert world.known(url) is UrlStatus.QUEUED
    assert world.store.url_rules.logged(HOST, "param:sid") == []
    assert world.store.counters.get("equivalence:restored") == 2


def test_a_canonical_that_keeps_a_parameter_refutes_it(world: World) -> None:
    learn_sid(world, 3)
    world.observe(f"{H}/q?sid=1", f"{H}/q?sid=1", canonical=f"{H}/q?sid=1")
    assert world.state("param:sid") is RuleState.REFUTED
    # A canonical that drops it is evidence instead.
    for i in range(4):
        world.observe(f"{H}/r{i}?ref={i}", f"{H}/r{i}", same_as=f"{H}/r{i}")
    assert world.state("param:ref") is RuleState.ACTIVE


def test_the_trailing_slash_goes_to_the_form_the_host_keeps(world: World) -> None:
    for i in range(4):
        world.same(f"{H}/post/{i}", f"{H}/post/{i}/")
    assert world.state("slash") is RuleState.ACTIVE
    assert world.admit(f"{H}/post/9", f"{H}/file.pdf") == [f"{H}/post/9/", f"{H}/file.pdf"]
    # A page whose canonical has no slash contradicts it: refuted, URLs given back.
    world.observe(f"{H}/post/3/", f"{H}/post/3/", canonical=f"{H}/post/3")
    assert world.state("slash") is RuleState.REFUTED
    assert world.known(f"{H}/post/9") is UrlStatus.QUEUED


def test_path_variants(world: World) -> None:
    for i in range(4):
        world.same(f"{H}/amp/story/{i}/", f"{H}/story/{i}/")
        world.same(f"{H}/story/{i}/index.html", f"{H}/story/{i}/")
        world.observe(f"{H}/story/{i}/print/", f"{H}/story/{i}/")  # a near copy, found
        world.observe(f"{H}/story/{i}/", f"{H}/story/{i}/")  # ... by its base
    for key in ("segment:amp", "index:index.html", "segment:print"):
        assert world.state(key) is RuleState.ACTIVE, key
    assert world.admit(f"{H}/amp/story/9/index.html", f"{H}/story/8/print/") == [
        f"{H}/story/9/",
        f"{H}/story/8/",
    ]


def test_a_page_fetched_under_another_spelling_is_not_fetched_again(world: World) -> None:
    """``/x/print/`` was fetched (and kept) before the rule was learned: the clean URL
    is its page, found by no link until now. A refuted rule gives it back."""
    world.new(f"{H}/x/print/")
    for i in range(4):
        world.same(f"{H}/s{i}/print/", f"{H}/s{i}/")
    assert world.state("segment:print") is RuleState.ACTIVE
    assert world.admit(f"{H}/x/", f"{H}/x/print/?k=1") == [f"{H}/x/?k=1"]
    world.new(f"{H}/y/")
    world.new(f"{H}/y/print/")  # another page: refuted, /x/ is given back
    assert world.state("segment:print") is RuleState.REFUTED
    assert world.known(f"{H}/x/") is UrlStatus.QUEUED


def test_a_spelling_whose_canonical_is_elsewhere_stands_for_nothing(world: World) -> None:
    """``/sport`` names ``/sport/`` its canonical: its text and links were not taken,
    so ``/sport/`` must still be fetched, whatever rule makes them one."""
    world.observe(f"{H}/sport", f"{H}/sport/", same_as=f"{H}/sport/", kept=False)
    for i in range(4):
        world.same(f"{H}/s{i}", f"{H}/s{i}/")
    assert world.state("slash") is RuleState.ACTIVE
    assert world.admit(f"{H}/sport/", f"{H}/s0") == [f"{H}/sport/"]  # /s0/ is kept


def test_a_queued_spelling_is_skipped_at_its_lease_and_given_back(world: World) -> None:
    queued = world.admit(f"{H}/d?sid=1", f"{H}/d")
    assert queued == [f"{H}/d?sid=1", f"{H}/d"]
    learn_sid(world, 4)
    leases = []
    while (lease := world.store.frontier.take(world.clock.now())) is not None:
        leases.append(lease)
        if world.admission.respelled(lease, now=world.clock.now()) is None:
            world.store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=0.0)
    assert world.known(f"{H}/d?sid=1") is UrlStatus.SKIPPED
    assert world.known(f"{H}/d") is UrlStatus.FETCHED
    world.new(f"{H}/e")
    world.new(f"{H}/e?sid=3")  # refuted: the skipped URL comes back
    assert world.known(f"{H}/d?sid=1") is UrlStatus.WAITING
    assert world.store.frontier.wake_due(world.clock.now()) == 1


def test_a_redirect_to_a_spelling_a_rule_drops_refutes_it(world: World) -> None:
    learn_sid(world, 4)
    world.admission.offer([Candidate(f"{H}/login?sid=abc", depth=1, named=True)], now=0.0)
    assert world.state("param:sid") is RuleState.REFUTED
    assert world.known(f"{H}/login?sid=abc") is UrlStatus.QUEUED


def test_a_url_that_works_where_its_respelling_failed_refutes_the_rule(world: World) -> None:
    for i in range(4):
        world.same(f"{H}/d{i}/index.html", f"{H}/d{i}/")
    assert world.admit(f"{H}/e/index.html", f"{H}/f/index.html") == [f"{H}/e/", f"{H}/f/"]
    # /e/ fails: /e/index.html is fetched as found, and fails too (a dead link).
    world.admission.failed(HOST, f"{H}/e/", "http 404", now=0.0)
    assert world.known(f"{H}/e/index.html") is UrlStatus.QUEUED
    world.admission.failed(HOST, f"{H}/e/index.html", "http 404", now=0.0)
    assert world.state("index:index.html") is RuleState.ACTIVE
    # /f/ fails, and /f/index.html serves a page: the rule is refuted.
    world.admission.failed(HOST, f"{H}/f/", "http 403", now=0.0)
    world.new(f"{H}/f/index.html")
    assert world.state("index:index.html") is RuleState.REFUTED
    [rule] = [r for r in world.eq.rules(HOST) if r.key == "index:index.html"]
    assert rule.reason == f"{H}/f/ failed: http 403; {H}/f/index.html serves a page"


def test_a_base_parsed_long_ago_is_read_from_the_store(world: World) -> None:
    """The pair's other URL was parsed before this process started (a resumed crawl):
    its stored outcome still tells, for a rule that exists."""
    eq = Equivalences(
        store=world.store.url_rules,
        pages=world.store.pages,
        counters=world.store.counters,
        clock=world.clock,
    )
    u = urls.normalize(f"{H}/old")
    world.store.frontier.add([NewUrl(u, urls.fingerprint(u), HOST, depth=1, priority=1)], now=0.0)
    where = Location("w.warc.gz", 0, 1)
    world.store.pages.record_fetch(FetchRecord(HOST, urls.fingerprint(u), u, u, 200, 0.0, where))
    world.store.pages.set_fetch_outcome(
        HOST, urls.fingerprint(u), content_hash="c", outcome="stored"
    )
    # The rule is halfway to being applied: two pages of four.
    eq.observe(Observation(HOST, f"{H}/x?sid=1", f"{H}/x", f"{H}/x"))
    eq.observe(Observation(HOST, f"{H}/z?sid=3", f"{H}/z", f"{H}/z"))
    eq.observe(Observation(HOST, f"{H}/other", f"{H}/other"))  # pushes memory out
    eq.observe(Observation(HOST, f"{H}/old?sid=2", f"{H}/old?sid=2"))
    assert {r.key: r.state for r in eq.rules(HOST)}["param:sid"] is RuleState.REFUTED


def test_a_fleet_worker_sees_rules_learned_by_another(world: World) -> None:
    other = Equivalences(
        store=world.store.url_rules,
        pages=world.store.pages,
        counters=world.store.counters,
        clock=world.clock,
        refresh=10.0,
    )
    assert other.rewrite(f"{H}/x?sid=1", HOST) == (f"{H}/x?sid=1", ())
    learn_sid(world, 4)
    assert other.rewrite(f"{H}/x?sid=1", HOST) == (f"{H}/x?sid=1", ())  # cached
    world.clock.advance(10.0)
    assert other.rewrite(f"{H}/x?sid=1", HOST) == (f"{H}/x", ("param:sid",))


def test_rules_are_per_host(world: World) -> None:
    learn_sid(world, 4)
    assert world.eq.rewrite("http://g.example/x?sid=1", "g.example") == (
        "http://g.example/x?sid=1",
        (),
    )


def test_a_spelling_of_a_page_seen_is_told_apart_from_a_duplicate(world: World) -> None:
    """The parse stage holds duplicates against a host (it may demote it); another
    spelling of a page, which the host's rules learn from, is not held against it."""
    first = world.eq.observe(Observation(HOST, f"{H}/a/", f"{H}/a/"))
    assert (first.undo, first.spelling) == ([], False)
    spelled = world.eq.observe(Observation(HOST, f"{H}/a/?ref=x", f"{H}/a/", f"{H}/a/"))
    assert spelled.spelling
    mirror = world.eq.observe(Observation(HOST, f"{H}/b/", f"{H}/a/", f"{H}/a/"))
    assert not mirror.spelling  # the same text under another path: a duplicate


def test_a_canonical_elsewhere_is_a_pair_not_a_page_to_compare(world: World) -> None:
    """``/x/`` is a copy of ``/other/`` (the kept one); ``/x/?sid=1`` names ``/x/`` its
    canonical. Their pages are not told apart by that: the canonical says one thing
    (the pair), the text another (unknown for the spelling). No counterexample."""
    learn_sid(world, 3)
    world.same(f"{H}/x/", f"{H}/other/")
    world.observe(f"{H}/x/?sid=1", f"{H}/x/", same_as=f"{H}/x/", kept=False)
    world.observe(f"{H}/y/?sid=2", f"{H}/y/", same_as=f"{H}/y/", kept=False)
    world.same(f"{H}/y/", f"{H}/other2/")
    assert world.state("param:sid") is RuleState.ACTIVE  # and the pair counted


def test_two_spellings_of_one_base_are_evidence_for_both(world: World) -> None:
    """``/p0/?ref=0`` and ``/amp/p0/`` are one page, and both are ``/p0/`` without their
    spelling: evidence for both rules before ``/p0/`` is fetched. Two pages there are
    no counterexample: either might differ from ``/p0/``."""
    for i in range(4):
        world.new(f"{H}/p{i}/?ref={i}")
        world.same(f"{H}/amp/p{i}/", f"{H}/p{i}/?ref={i}")
    assert world.state("segment:amp") is RuleState.ACTIVE
    [ref] = [r for r in world.eq.rules(HOST) if r.key == "param:ref"]
    assert (ref.state, len(ref.pages), len(ref.values)) == (RuleState.ACTIVE, 4, 4)
    world.new(f"{H}/q/?sid=1")
    world.new(f"{H}/amp/q/")
    assert world.state("param:sid") is None
