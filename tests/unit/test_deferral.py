"""Deferral of probable spellings (``frontier/deferral.py``), on fakes: the memory store,
a fake clock, the real admission and equivalences over the memory frontier.

What the parse stage would report is written by hand (``new``, ``same``), and the
fetch stage is the loop of ``World.crawl``: take a lease, ask ``Admission.respelled``,
fetch (finish as fetched) unless it said no.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from trawl import urls
from trawl.dedup.urlrules import RuleState, Thresholds
from trawl.frontier.admission import DEFER_WAIT, Admission, Candidate
from trawl.frontier.deferral import PATIENCE
from trawl.frontier.equivalences import Equivalences, Observation
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.models import UrlStatus
from trawl.ranking import is_deferred
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

    def new(self, url: str) -> None:
        """``url`` was parsed: a page of its own."""
        self.eq.observe(Observation(HOST, url, url))

    def same(self, url: str, kept: str) -> None:
        """``url`` was parsed: an exact duplicate of the kept page ``kept``."""
        self.eq.observe(Observation(HOST, url, kept, kept))

    def admit(self, *links: str, rewrite: bool = True, named: bool = False) -> list[str]:
        result = self.admission.offer(
            [Candidate(u, depth=1, rewrite=rewrite, named=named) for u in links],
            now=self.clock.now(),
        )
        return [u.url for u in result.added]

    def deferred(self, url: str) -> bool:
        record = self.store.frontier.lookup(url, HOST, urls.fingerprint(url))
        assert record is not None, url
        return is_deferred(record.priority)

    def status(self, url: str) -> UrlStatus | None:
        record = self.store.frontier.lookup(url, HOST, urls.fingerprint(url))
        return None if record is None else record.status

    def crawl(self, *, steps: int = 100) -> list[str]:
        """Fetch what the frontier hands out (as the fetch stage would), in order; a
        fetched URL is parsed as ``parse`` says (not at all by default)."""
        fetched = []
        for _ in range(steps):
            now = self.clock.now()
            lease = self.store.frontier.take(now)
            if lease is None:
                break
            if self.admission.respelled(lease, now=now) is None:
                fetched.append(lease.url)
                self.store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=now)
        return fetched

    def count(self, name: str) -> int:
        return self.store.counters.get(name)


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


def test_a_parameter_added_to_a_known_url_is_admitted_last_in_its_hosts_queue(
    world: World,
) -> None:
    """``ref`` has no record yet: a link that adds it to a URL of the batch is admitted
    (nothing held back), its key in the deferred band; a URL found later goes first."""
    assert world.admit(f"{H}/a", f"{H}/a?ref=nav") == [f"{H}/a", f"{H}/a?ref=nav"]
    assert world.deferred(f"{H}/a?ref=nav") and not world.deferred(f"{H}/a")
    assert world.admit(f"{H}/b") == [f"{H}/b"]
    assert world.count("equivalence:deferred") == 1
    assert world.crawl() == [f"{H}/a", f"{H}/b", f"{H}/a?ref=nav"]  # never learned: fetched


def test_nothing_is_deferred_on_a_host_without_spellings(world: World) -> None:
    links = [f"{H}/", f"{H}/a/", f"{H}/a/b/", f"{H}/c.html", f"{H}/list?page=2", f"{H}/list"]
    assert world.admit(*links) == links
    for url in links:
        world.new(url)
    more = [f"{H}/s?q=river", f"{H}/s", f"{H}/item?id=7", f"{H}/item", f"{H}/d/"]
    assert world.admit(*more) == more
    assert world.count("equivalence:deferred") == 0
    assert not any(world.deferred(u) for u in links + more)


def test_seeds_redirect_targets_and_given_back_urls_are_never_deferred(world: World) -> None:
    world.admit(f"{H}/a", f"{H}/b")
    result, errors = world.admission.seed([f"{H}/a?ref=seed"], now=0.0)
    assert not errors and [u.url for u in result.added] == [f"{H}/a?ref=seed"]
    assert world.admit(f"{H}/a?ref=redirect", named=True) == [f"{H}/a?ref=redirect"]
    assert world.admit(f"{H}/b?ref=back", rewrite=False) == [f"{H}/b?ref=back"]
    for url in (f"{H}/a?ref=seed", f"{H}/a?ref=redirect", f"{H}/b?ref=back"):
        assert not world.deferred(url)


def test_a_parameter_that_chooses_pages_is_never_deferred(world: World) -> None:
    world.admit(f"{H}/list", f"{H}/item", f"{H}/s")
    for url in (f"{H}/list", f"{H}/item", f"{H}/s"):
        world.new(url)
    assert world.admit(f"{H}/list?page=2", f"{H}/item?id=3", f"{H}/s?q=x")
    assert world.count("equivalence:deferred") == 0


def _fetched_and_parsed(world: World, n: int) -> list[str]:
    """``n`` base pages, admitted, fetched and parsed."""
    bases = [f"{H}/p{i}" for i in range(n)]
    world.admit(*bases)
    assert sorted(world.crawl()) == sorted(bases)
    for url in bases:
        world.new(url)
    return bases


def _linked_with_refs(world: World, bases: list[str], pages: int) -> list[str]:
    """``pages`` pages, each linking every base with a ``ref`` of its own; the
    teachers (admitted as usual), in order."""
    teachers = []
    for page in range(pages):
        links = [f"{base}?ref={page}" for base in bases]
        assert world.admit(*links) == links  # all admitted: nothing is held back
        teachers += [u for u in links if not world.deferred(u)]
    return teachers


def test_a_few_teachers_go_as_usual_then_the_rest_waits_for_the_rule(world: World) -> None:
    """``param:ref`` lacks four pages (and three values): five teachers on their way at
    most, one a batch (a page's links share its parameter); the others are deferred,
    wait while teachers are on their way, and are skipped at their lease once the
    teachers' parse has taught the rule. Nothing is sent for them."""
    bases = _fetched_and_parsed(world, 8)
    teachers = _linked_with_refs(world, bases, 8)
    assert teachers == [f"{H}/p0?ref={page}" for page in range(5)]
    assert world.count("equivalence:deferred") == 8 * 8 - 5
    # The teachers are fetched; then it is a deferred URL's turn, with five teachers
    # on their way (fetched, not parsed): it waits, and its host with it.
    assert sorted(world.crawl()) == sorted(teachers)
    assert world.count("equivalence:waited") == 1
    assert world.store.frontier.take(world.clock.now()) is None
    # Two teachers parsed: one page (/p0), two values; the rule lacks three pages, with
    # three teachers on their way: one deferred URL more may teach.
    world.same(teachers[0], f"{H}/p0")
    world.same(teachers[1], f"{H}/p0")
    world.clock.advance(DEFER_WAIT)
    assert len(world.crawl()) == 1
    assert world.count("equivalence:waited") == 2
    for i in (1, 2, 3):  # three pages more: the rule is learned
        world.same(f"{H}/p{i}?ref={i}", f"{H}/p{i}")
    rule = world.eq.rule(HOST, "param:ref")
    assert rule is not None and rule.state is RuleState.ACTIVE
    world.clock.advance(DEFER_WAIT)
    assert world.crawl() == []  # every deferred URL left is skipped: nothing sent
    assert world.count("equivalence:skipped") == 8 * 8 - 5 - 1
    assert world.status(f"{H}/p7?ref=7") is UrlStatus.SKIPPED


def test_a_deferred_url_is_fetched_when_no_teacher_comes_back(world: World) -> None:
    """Teachers whose parse never tells anything (lost, or late past ``PATIENCE``) hold
    the deferred URLs no longer: they teach in turn, and all are fetched in the end."""
    bases = _fetched_and_parsed(world, 3)
    teachers = _linked_with_refs(world, bases, 5)
    assert len(teachers) == 5
    assert sorted(world.crawl()) == sorted(teachers)
    fetched = []
    for _ in range(4):
        world.clock.advance(PATIENCE)
        fetched += world.crawl()
    assert len(fetched) == 3 * 5 - 5
    assert all(world.status(u) is UrlStatus.FETCHED for u in fetched)
    assert world.store.frontier.counts()[UrlStatus.QUEUED] == 0


def test_a_url_queued_before_its_rule_existed_is_deferred_at_its_lease(world: World) -> None:
    """Admitted when nothing told it apart, given back deferred at its lease (one step
    of the frontier, nothing sent), fetched after the host's other URLs."""
    assert world.admit(f"{H}/a?ref=x") == [f"{H}/a?ref=x"]
    assert world.admit(f"{H}/z", f"{H}/a") == [f"{H}/z", f"{H}/a"]
    assert not world.deferred(f"{H}/a?ref=x")
    assert world.crawl() == [f"{H}/z", f"{H}/a", f"{H}/a?ref=x"]
    assert world.deferred(f"{H}/a?ref=x")
    assert world.count("equivalence:deferred") == 1


def test_the_trailing_slash_is_deferred_away_from_the_form_the_host_keeps(
    world: World,
) -> None:
    world.admit(f"{H}/s/", f"{H}/s")
    world.new(f"{H}/s/")
    world.same(f"{H}/s", f"{H}/s/")  # a pair: a page, a vote for the slash
    rule = world.eq.rule(HOST, "slash")
    assert rule is not None and rule.state is RuleState.CANDIDATE and rule.votes == (1, 0)
    assert world.admit(f"{H}/x/", f"{H}/x", f"{H}/y", f"{H}/y/") == [
        f"{H}/x/",
        f"{H}/x",
        f"{H}/y",
        f"{H}/y/",
    ]
    assert [world.deferred(u) for u in (f"{H}/x/", f"{H}/x", f"{H}/y", f"{H}/y/")] == [
        False,
        True,
        True,
        False,
    ]


def test_a_url_whose_spelling_was_fetched_first_pairs_with_it(world: World) -> None:
    """``/pN?ref=x`` was fetched and parsed before ``/pN`` was known: ``/pN`` pairs with
    it the other way round (a teacher while the rule wants one, else deferred; the
    page was fetched already, under its spelling)."""
    for i in range(8):
        world.new(f"{H}/p{i}?ref=x")
    for i in range(8):
        assert world.admit(f"{H}/p{i}") == [f"{H}/p{i}"]
    assert [world.deferred(f"{H}/p{i}") for i in range(8)] == [False] * 5 + [True] * 3
