"""Deferral of probable spellings: fetch a host's other URLs before a likely copy.

A learned equivalence (``frontier/equivalences.py``) is applied only after enough
pages showed it; until then every spelling its host links is a URL like any other,
and each one fetched before the rule is learned is a request for a page the crawl
has (or will have). The parse stage runs behind the fetch stage, so without deferral
a host's session-id links could all be fetched before their first pair was parsed.
Deferral spends those requests last, when the rule has usually been learned.

A URL is a *probable spelling* when it pairs with a URL its host has by one spelling
(``dedup/urlrules.features``): it is that URL with one spelling more (the URL without
it parsed recently, in the same batch of links, or, at its lease, in the frontier),
or with one spelling less (a spelling of it was parsed: its page was fetched under
that spelling first); and the rule of that spelling may still be learned: a candidate
with evidence of a page at least and no counterexample (one that may be applied:
never ``param:NAME`` of a name that chooses pages), or, with no record yet, a
parameter whose name does not usually choose the page (``ref``, ``sessionid``). The
trailing slash counts only away from the form the host's kept pages use more (the
form fetched first is the one kept, and voted for).

A rule learns from pairs, so a few probable spellings go as usual, *teachers*: ones
whose other URL was parsed already (their own parse makes a pair), while the rule has
fewer teachers on their way (admitted, not parsed yet, at most ``patience`` ago) than
the pairs it lacks and one spare, one a rule per batch of links (a page's links share
its session id); one value of a parameter that may be dropped whatever its value
teaches nothing of its own. Every other probable spelling is deferred:

- at admission (``Admission.offer``), it is *admitted as usual*, its key in the
  deferred band (``ranking.deferred_key``): it goes after every other URL of its host,
  and its host after hosts with other work;
- at its lease (``Admission.respelled``), a URL admitted before it looked like one is
  given back with its key moved into the band (``Frontier.requeue(defer=True)``, one
  step of the store), nothing sent, the host's turn not used.

When its turn comes the rule has usually been applied, and the fetch stage finishes
it as skipped at its lease (nothing sent either). If the rule still learns and has
teachers on their way, it waits ``Admission``'s ``DEFER_WAIT`` more (given back with
its host's next time: only deferred URLs are left in that host's queue); otherwise it
is fetched like any URL (it teaches in turn): no page is missed, only fetched later.

Crash-safe by construction: the decision is the key the frontier stores with the URL,
nothing else. Nothing is held back in memory that the store does not have, so a kill
-9, a full disk or a resume loses nothing; what is only in memory (the recently parsed
URLs, the teachers on their way) decides whether to defer or wait, never whether a
URL is kept.

Never deferred: seeds and redirect targets (admitted with ``Candidate.rewrite`` false,
or ``named``, and never looked at at their lease: depth 0, or ``via``), revisits (they
do not pass admission, are never looked at at their lease, and ``Frontier.revisit``
takes a key out of the band), and the URLs a refuted rule gives back (admitted with
``rewrite`` false, or queued again as a revisit; the refuted rule defers nothing).
Counted under ``equivalence:deferred`` (at admission and at lease) and
``equivalence:waited``.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from trawl import urls
from trawl.dedup import urlrules as ur
from trawl.frontier.equivalences import Equivalences
from trawl.lru import Lru
from trawl.models import UrlStatus
from trawl.ranking import is_deferred
from trawl.storage.base import Frontier

__all__ = ["Deferral", "Verdict"]

SPARE = 1  # teachers on their way beyond what a rule lacks (one may teach nothing)
PATIENCE = 60.0  # seconds a teacher not parsed yet counts as on its way
MAX_HOSTS = 10_000  # hosts whose teachers are remembered (the least recent forgotten)
# A teacher still on its way: to be fetched, or fetched and waiting for the parse stage.
_OWED = frozenset({UrlStatus.QUEUED, UrlStatus.IN_FLIGHT, UrlStatus.WAITING, UrlStatus.FETCHED})
MAX_KEYS = 64  # rules a host's teachers are remembered for (the oldest forgotten)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a URL: defer it (for the rule ``defer``), or let it teach the
    rules ``teach``; neither: it is no probable spelling."""

    defer: str | None = None
    teach: Sequence[str] = ()


_NEITHER = Verdict()  # most links' verdict, made once (nothing in it can change)


class Deferral:
    """Which links to admit deferred (``decide``)."""

    def __init__(
        self,
        equivalences: Equivalences,
        frontier: Frontier,
        *,
        spare: int = SPARE,
        patience: float = PATIENCE,
        max_hosts: int = MAX_HOSTS,
    ) -> None:
        self._eq = equivalences
        self._frontier = frontier
        self._spare = spare
        self._patience = patience
        # host -> rule key -> the teachers admitted for it: (URL, when).
        self._teachers: Lru[str, dict[str, list[tuple[str, float]]]] = Lru(max_hosts)

    def decide(
        self,
        url: str,
        host: str,
        batch: Container[str],
        *,
        now: float,
        taught: set[str],
        look: bool = False,
    ) -> Verdict:
        """Whether ``url`` (of ``host``, as admission spells it) is deferred, or a
        teacher (to be recorded with ``teach`` once admitted or leased). ``batch``:
        the URLs offered with it; ``taught``: the ``host key`` of the rules that had a
        teacher in this batch already (updated); ``look``: ask the frontier too (at a
        lease; see ``_pairs``)."""
        keys, teach = self._pairs(url, host, batch, look=look)
        if not keys:
            return _NEITHER
        wanted = self._teaches(url, host, teach, now=now, taught=taught)
        return Verdict(teach=wanted) if wanted else Verdict(defer=keys[0])

    def waits(self, url: str, host: str, *, now: float) -> bool:
        """Whether a deferred URL whose turn came waits a little more: while its rule
        still learns and has teachers on their way (their parse may apply it); not
        when it may teach itself (then it is a teacher), nor when no teacher is on its
        way (a teacher's parse lost, or late past ``patience``: it is fetched)."""
        keys, teach = self._pairs(url, host, ())
        if not keys:
            return False
        wanted = self._teaches(url, host, teach, now=now, taught=None)
        if wanted:
            self.teach(host, wanted, url, now=now)
            return False
        return any(self._going(host, key, now, ask=True) for key in keys)

    def _pairs(
        self, url: str, host: str, batch: Container[str], *, look: bool = True
    ) -> tuple[list[str], list[str]]:
        """The rules that may be learned by which ``url`` is a URL the host has with
        one spelling more, or with one spelling less (a spelling of it was parsed), and
        those of them by which that other URL was parsed already.
        ``look``: ask the frontier whether it has the URL without the spelling (not
        for every link a page has: most are known already, their keys stay as they
        are; at a lease, once a URL)."""
        eq = self._eq
        learning = eq.learning(host)
        keys: list[str] = []
        teach: list[str] = []
        # A spelling of it was parsed (fetched before it was known).
        for key in eq.spellings_of(host, url):
            rule = learning.get(key)
            if rule is None and not self._unheard(host, key):
                continue
            if rule is not None and key == "slash" and not _away(rule, url):
                continue
            teach.append(key)
            keys.append(key)
        if "?" not in url and not any(not k.startswith("param:") for k in learning):
            return keys, teach  # the usual case: nothing more to look at
        for f in ur.features(url):
            rule = learning.get(f.key)
            if rule is None and not self._unheard(host, f.key):
                continue
            if rule is not None and f.key == "slash" and not _away(rule, url):
                continue
            if eq.parsed(host, f.base):
                teach.append(f.key)
            elif f.base not in batch and not (look and self._known(f.base, host)):
                continue
            keys.append(f.key)
        return keys, teach

    def _teaches(
        self, url: str, host: str, teach: list[str], *, now: float, taught: set[str] | None
    ) -> list[str]:
        """The rules ``url`` is to teach (all of ``teach``, or none): it was admitted
        as their teacher, or one of them wants one more (once a rule a batch)."""
        for key in teach:
            if any(u == url for u, _at in self._going(host, key, now)):
                return teach  # a teacher admitted as such, now leased
        for key in teach:
            name = f"{host} {key}"
            if taught is not None and name in taught:
                continue
            if self._wants_teacher(host, key, now):
                if taught is not None:
                    taught.add(name)
                return teach
        return []

    def _unheard(self, host: str, key: str) -> bool:
        """A rule with no record yet, of a parameter whatever its value, whose name
        does not usually choose the page (``ref``, ``sessionid``): a parameter a link
        adds to a URL the host has is, until a pair says otherwise, likely a copy. (A
        path spelling, an /amp/ or a trailing slash, waits for evidence: the order in
        which a host's rules are learned decides the form each one keeps.)"""
        if not key.startswith("param:") or "=" in key or ur.chooses(key):
            return False
        return self._eq.rule(host, key) is None

    def _known(self, url: str, host: str) -> bool:
        return self._frontier.lookup(url, host, urls.fingerprint(url)) is not None

    def _going(
        self, host: str, key: str, now: float, *, ask: bool = False
    ) -> list[tuple[str, float]]:
        """The rule's teachers on their way: admitted, not parsed yet, not older than
        ``patience`` (the others are forgotten). ``ask``: the frontier too, whether
        each is still owed a fetch or its parse (a page whose rel=canonical is
        elsewhere is parsed, but not remembered as a page by the equivalences)."""
        rules = self._teachers.peek(host)
        going = None if rules is None else rules.get(key)
        if not going:
            return []
        parsed = self._eq.parsed
        going[:] = [
            (u, at)
            for u, at in going
            if now - at < self._patience
            and not parsed(host, u)
            and (not ask or self._owed(u, host))
        ]
        return going

    def _owed(self, url: str, host: str) -> bool:
        record = self._frontier.lookup(url, host, urls.fingerprint(url))
        if record is None or record.status not in _OWED:
            return False
        # Queued deferred, it comes after the URL that would wait for it: not owed.
        return record.status is not UrlStatus.QUEUED or not is_deferred(record.priority)

    def _wants_teacher(self, host: str, key: str, now: float) -> bool:
        """Whether the rule has fewer teachers on their way than it lacks pairs, and
        the spare. Not one value of a parameter whose every value may be dropped: its
        teachers teach the parameter (``param:sid``, not ``param:sid=7``)."""
        if "=" in key and not ur.chooses(key):
            return False
        rule = self._eq.learning(host).get(key)
        if rule is None:  # unheard of yet
            rule = ur.UrlRule(host, key)
        need = ur.wanted(rule, self._eq.thresholds)
        return len(self._going(host, key, now)) < need + self._spare

    def teach(self, host: str, keys: Sequence[str], url: str, *, now: float) -> None:
        """Record ``url`` as a teacher of the rules ``keys`` (admitted, or leased)."""
        rules = self._teachers.get_or_add(host, dict)
        for key in dict.fromkeys(keys):
            going = rules.setdefault(key, [])
            if all(u != url for u, _at in going):  # once (admitted, then leased)
                going.append((url, now))
            if len(rules) > MAX_KEYS:
                del rules[next(iter(rules))]


def _away(rule: ur.UrlRule, url: str) -> bool:
    """Whether ``url`` has the trailing-slash form the host's kept pages use less (the
    form the rule, once applied, will rewrite): only that one is deferred, so that
    the first of two forms fetched, the one kept, is the host's usual one. No form
    while the votes are even."""
    with_slash, without = rule.votes
    if with_slash == without:
        return False
    return url.partition("?")[0].endswith("/") == (without > with_slash)
