"""Learning and applying each host's URL equivalences ("different URLs, same page").

``Equivalences`` is told by the parse stage what every parsed page turned out to be
(``observe``: the URL of the kept page it is, the URL it was paired with, its
rel=canonical), finds the pairs of URLs that differ in one spelling only (a parameter,
a path segment, an index file, a trailing slash: ``dedup/urlrules.py``), and keeps the
evidence for and against each rule in the ``UrlRuleStore``. Admission asks it how to
spell a URL (``rewrite``) and tells it what it rewrote (``rewritten``); the rewritten
URLs are kept with the rule, so that a rule refuted later gives every one of them back
(``Admission.restore``).

Pairs come from three places: the URL the parse stage paired a page with (the kept page
it duplicates, its canonical); what recently parsed URLs turned out to be (an LRU of
``memory`` URLs), looked up under each spelling removed; and, for rules applied or
halfway there, the stored outcome of the URL's other spelling. Counterexamples come
from the same places (two spellings, two different pages), from a rel=canonical or a
redirect target that keeps what a rule drops (``named``), and from a URL that serves a
page where its respelling failed (``failed`` gives the URL back to find out).

Rules are cached per host (an LRU of ``max_hosts``); every change is written to the
store at once (provisional until the crawl's commit). A fleet's workers read a host's
rules again after ``refresh`` seconds, so what one learns the others apply.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from trawl import urls
from trawl.clock import Clock
from trawl.dedup import urlrules as ur
from trawl.dedup.urlrules import Feature, Rewrite, RuleState, Thresholds, UrlRule
from trawl.errors import UrlError
from trawl.jobs import OutcomeKind, ParseOutcome
from trawl.lru import Lru
from trawl.storage.base import Counters, PageStore, UrlRuleStore

MAX_RULES = 64  # rules kept per host (candidates included)
MAX_VALUE_RULES = 4  # rules of one parameter's single values per host
LOG_CAP = 10_000  # rewritten URLs kept per rule (past it they are only counted)
MAX_PROBES = 8  # failed respellings per rule whose URLs are fetched as found
GROUP = 8  # spellings remembered per base URL
HOST_MEMORY = 4096  # parsed URLs remembered per host

Spelling = tuple[str, str, str, tuple[str, ...]]  # rule key, page, URL, values


@dataclass(frozen=True, slots=True)
class Observation:
    """What the parse stage made of one page."""

    host: str
    url: str  # the URL that answered
    page: str | None  # what it is: the URL of the kept page it is (None: not compared)
    same_as: str | None = None  # the URL it was paired with (kept copy, canonical)
    canonical: str | None = None  # its rel=canonical, if any
    # Its text was compared with the kept ones (kept, or found a duplicate), so its page
    # is in the crawl as fetching it again would put it there. Not so for a page whose
    # rel=canonical is elsewhere: neither its text nor its links were taken.
    kept: bool = True


@dataclass(frozen=True, slots=True)
class Learned:
    """What ``observe`` made of a page."""

    undo: list[Rewrite]  # URLs to give back: the rules that rewrote them were refuted
    spelling: bool = False  # the page is another spelling of a page seen (a pair)


def page_of(outcome: ParseOutcome, url: str) -> str | None:
    """The page a parse outcome says a URL is: the URL of the kept copy, or None when
    its text was not compared with the kept ones."""
    kind = outcome.kind
    if kind in (OutcomeKind.STORED, OutcomeKind.UNCHANGED):
        return url
    if kind in (OutcomeKind.DUPLICATE, OutcomeKind.NEAR_DUPLICATE, OutcomeKind.CANONICAL):
        return outcome.detail
    return None


class _Recent:
    """What the recently parsed URLs of one host turned out to be."""

    __slots__ = ("forms", "groups", "pages")

    def __init__(self) -> None:
        # URL -> page (text compared), oldest first. Plain dicts and tuples, not an
        # OrderedDict and lists: some 90 bytes less a URL (``equivalence_urls`` of them).
        self.pages: dict[str, str] = {}
        self.groups: dict[str, tuple[Spelling, ...]] = {}  # base URL -> its spellings seen
        # A parsed URL as the host's active rules spell it -> (that URL, the rules).
        self.forms: dict[str, tuple[str, tuple[str, ...]]] = {}

    def spell(self, url: str, active: Mapping[str, UrlRule]) -> None:
        form, keys = ur.rewrite(url, active)
        if keys:
            self.forms[form] = (url, keys)


# What a host without rules holds (most hosts: every host a link names is asked how
# to spell its URLs): one empty mapping shared, not three dicts of 64 bytes each.
_NO_RULES: Mapping[str, UrlRule] = MappingProxyType({})


def _own(rules: Mapping[str, UrlRule]) -> dict[str, UrlRule]:
    """``rules`` to change in place: a dict of the host's own for the shared empty one."""
    return rules if isinstance(rules, dict) else {}


class _Host:
    __slots__ = ("active", "learning", "loaded_at", "rules")

    def __init__(self, rules: Iterable[UrlRule], now: float) -> None:
        self.rules: Mapping[str, UrlRule] = {r.key: r for r in rules} or _NO_RULES
        active = {k: r for k, r in self.rules.items() if r.state is RuleState.ACTIVE}
        self.active: Mapping[str, UrlRule] = active or _NO_RULES
        learning = {k: r for k, r in self.rules.items() if _learning(r)}  # deferral's
        self.learning: Mapping[str, UrlRule] = learning or _NO_RULES
        self.loaded_at = now

    def put(self, rule: UrlRule) -> None:
        key = rule.key
        rules = self.rules = _own(self.rules)
        rules[key] = rule
        active = self.active = _own(self.active)
        learning = self.learning = _own(self.learning)
        active.pop(key, None)
        learning.pop(key, None)
        if rule.state is RuleState.ACTIVE:
            active[key] = rule
        elif _learning(rule):
            learning[key] = rule


class Equivalences:
    def __init__(
        self,
        *,
        store: UrlRuleStore,
        pages: PageStore,
        counters: Counters,
        clock: Clock,
        thresholds: Thresholds | None = None,
        refresh: float | None = None,
        memory: int = 100_000,
        max_hosts: int = 100_000,
    ) -> None:
        self._store = store
        self._pages = pages
        self._count = counters
        self._clock = clock
        self.thresholds = thresholds or Thresholds()
        self._refresh = refresh
        self._memory = memory
        self._hosts: Lru[str, _Host] = Lru(max_hosts)
        # What recently parsed URLs are, per host (``memory`` URLs in all, at most
        # ``HOST_MEMORY`` a host; the least recently seen hosts are forgotten first).
        self._recent: OrderedDict[str, _Recent] = OrderedDict()
        self._remembered = 0
        self._pairs = 0  # pairs of spellings of one page found so far
        # Where rewritten URLs went (host, target) -> rule key, to notice a target failing;
        # the URLs given back to see whether they work where their spelling failed
        # (host, URL) -> (rule key, what failed), and how many a rule had.
        self._targets: Lru[tuple[str, str], str] = Lru(max(1, memory))
        self._probes: Lru[tuple[str, str], tuple[str, str]] = Lru(max(1, memory))
        self._probed: dict[tuple[str, str], int] = {}

    # -- applying ----------------------------------------------------------------------

    def _host(self, host: str) -> _Host:
        h = self._hosts.get(host)
        # Asked for every link admitted: the clock only when rules are read again (a
        # fleet's), and then a time of each host's own.
        now = 0.0 if self._refresh is None else self._clock.now()
        if h is not None and (self._refresh is None or now - h.loaded_at < self._refresh):
            return h
        h = _Host(self._store.rules(host), now)
        self._hosts.put(host, h)
        return h

    def rewrite(self, url: str, host: str) -> tuple[str, tuple[str, ...]]:
        """``url`` as the host's active rules spell it, and the keys of those that
        changed it."""
        h = self._host(host)
        if not h.active:
            return url, ()
        return ur.rewrite(url, h.active)

    def fetched_as(self, url: str, host: str) -> tuple[str, tuple[str, ...]] | None:
        """A recently parsed URL that the host's active rules spell as ``url`` (its
        page was fetched under another spelling, before the rules were learned), with
        the rules that make them one; None if there is none."""
        recent = self._recent.get(host)
        return None if recent is None else recent.forms.get(url)

    def learning(self, host: str) -> Mapping[str, UrlRule]:
        """The host's candidates with evidence of a page that may yet be applied."""
        return self._host(host).learning

    def parsed(self, host: str, url: str) -> bool:
        """Whether ``url`` of ``host`` was parsed recently (its page is known)."""
        recent = self._recent.get(host)
        return recent is not None and url in recent.pages

    def rewritten(self, rewrites: list[Rewrite]) -> None:
        """Count and keep what admission rewrote (one entry per rule and URL)."""
        counts: dict[tuple[str, str], int] = {}
        kept: list[Rewrite] = []
        for r in rewrites:
            name = (r.host, r.key)
            counts[name] = counts.get(name, 0) + 1
            rule = self._host(r.host).rules.get(r.key)
            if rule is not None and rule.rewrites + counts[name] <= LOG_CAP:
                kept.append(r)
            self._targets.put((r.host, r.target), r.key)
        for (host, key), n in counts.items():
            self._store.count(host, key, n)
            h = self._host(host)
            rule = h.rules.get(key)
            if rule is not None:
                h.put(replace(rule, rewrites=rule.rewrites + n))
        if kept:
            self._store.log(kept)

    def spellings_of(self, host: str, url: str) -> list[str]:
        """The rule keys of ``url``'s recently parsed spellings (``/a/?ref=x``: ref)."""
        recent = self._recent.get(host)
        return [] if recent is None else [g[0] for g in recent.groups.get(url, ())]

    def rule(self, host: str, key: str) -> UrlRule | None:
        return self._host(host).rules.get(key)

    def rules(self, host: str) -> list[UrlRule]:
        return [self._host(host).rules[k] for k in sorted(self._host(host).rules)]

    # -- learning ----------------------------------------------------------------------

    def observe(self, obs: Observation) -> Learned:
        """Learn from one parsed page: what to give back (rules refuted), and whether
        the page was a spelling of another (so its being a duplicate says nothing
        about the host: see ``dedup/hostdups.py``)."""
        undo: list[Rewrite] = []
        host = obs.host
        if obs.canonical is not None and _on(obs.canonical, host):
            undo += self.named(obs.canonical, host, "rel=canonical")
        page = obs.page
        probe = self._probes.pop((host, obs.url), None)
        if page is None:
            return Learned(undo)
        pairs = self._pairs
        h = self._host(host)
        if probe is not None:  # it serves a page where its respelling failed
            key, what = probe
            undo += self._refute(h, host, key, f"{what}; {obs.url} serves a page")
        if obs.same_as is not None and obs.same_as != obs.url and _on(obs.same_as, host):
            for f in ur.pair_features(obs.url, obs.same_as):
                self._evidence(h, host, f, page)
        if not obs.kept:
            # Its canonical is elsewhere: one pair, but no text to compare with others
            # (the canonical's page may itself be the duplicate of a third URL).
            return Learned(undo, spelling=self._pairs > pairs)
        recent = self._recall(host)
        for f in ur.features(obs.url):
            other = recent.pages.get(f.base)
            if other is None and self._worth_a_look(h.rules.get(f.key)):
                other = self._stored_page(host, f.base)
            if other == page:
                self._evidence(h, host, f, page)
            elif other is not None:
                undo += self._refute(h, host, f.key, f"differ: {obs.url} and {f.base}")
            undo += self._against_group(h, host, recent, f, obs.url, page)
        for key, page2, url2, values in recent.groups.get(obs.url, ()):
            if page2 == page:
                self._evidence(h, host, Feature(key, obs.url, values), page)
            else:
                undo += self._refute(h, host, key, f"differ: {url2} and {obs.url}")
        self._remember_page(host, recent, obs.url, page)
        return Learned(undo, spelling=self._pairs > pairs)

    def _recall(self, host: str) -> _Recent:
        recent = self._recent.get(host)
        if recent is None:
            recent = self._recent[host] = _Recent()
        self._recent.move_to_end(host)
        return recent

    def _remember_page(self, host: str, recent: _Recent, url: str, page: str) -> None:
        if url not in recent.pages:
            self._remembered += 1
        recent.pages[url] = page
        recent.spell(url, self._host(host).active)
        if len(recent.pages) > HOST_MEMORY:
            del recent.pages[next(iter(recent.pages))]
            self._remembered -= 1
        if len(recent.forms) > HOST_MEMORY:
            del recent.forms[next(iter(recent.forms))]
        while self._remembered > self._memory and len(self._recent) > 1:
            _, gone = self._recent.popitem(last=False)
            self._remembered -= len(gone.pages)

    def _against_group(
        self, h: _Host, host: str, recent: _Recent, f: Feature, url: str, page: str
    ) -> list[Rewrite]:
        """Compare ``url`` with the other spellings of its base: under the same rule
        (``/a?sid=1`` with ``/a?sid=2``) the same page is evidence and another page a
        counterexample; under another rule (``/a?sid=1`` with ``/amp/a``, both ``/a``
        without their spelling) the same page is evidence for both, before ``/a``
        itself is fetched (another page proves nothing: either may differ from ``/a``).
        Then it is added."""
        undo: list[Rewrite] = []
        group = recent.groups.get(f.base)
        if group is None:
            group = recent.groups[f.base] = ()
            if len(recent.groups) > HOST_MEMORY:
                del recent.groups[next(iter(recent.groups))]
        same_rule = f.key.startswith("param:") and "=" not in f.key
        name = _rule_name(f.key)
        for key, page2, url2, values in group:
            if url2 == url:
                continue
            if key == f.key and same_rule:
                if page2 == page:
                    self._evidence(h, host, replace(f, values=f.values + values), page)
                else:
                    undo += self._refute(h, host, f.key, f"differ: {url} and {url2}")
            elif page2 == page and _rule_name(key) != name:
                self._evidence(h, host, f, page)
                self._evidence(h, host, Feature(key, f.base, values), page)
        entry = (f.key, page, url, f.values)
        others = [e for e in group if (e[0], e[2]) != (f.key, url)]
        recent.groups[f.base] = (*others[-(GROUP - 1) :], entry)
        return undo

    def _worth_a_look(self, rule: UrlRule | None) -> bool:
        """Whether a rule is applied or close enough to it that a counterexample kept
        only in the store (parsed before this process, or by another worker) matters."""
        if rule is None or rule.state is RuleState.REFUTED:
            return False
        return rule.state is RuleState.ACTIVE or 2 * len(rule.pages) >= self.thresholds.pages

    def _stored_page(self, host: str, url: str) -> str | None:
        """The page the crawl found at ``url`` (its stored fetch), if it was parsed."""
        found = self._pages.fetch_of(host, urls.fingerprint(url))
        if found is None or found.final_url != url or found.outcome is None:
            return None
        outcome = ParseOutcome.parse(found.outcome)
        if outcome is None or outcome.kind is OutcomeKind.CANONICAL:
            return None  # no text compared: nothing to compare with
        return page_of(outcome, found.url)

    def _evidence(self, h: _Host, host: str, f: Feature, page: str) -> None:
        self._pairs += 1
        rule = h.rules.get(f.key)
        if rule is None:
            if not self._room_for(h, f.key):
                return
            rule = UrlRule(host, f.key, changed_at=self._clock.now())
        if rule.state is not RuleState.CANDIDATE:
            return
        pages, values, votes = rule.pages, rule.values, rule.votes
        mark = ur.digest(page)
        if mark not in pages and len(pages) < ur.EVIDENCE_CAP:
            pages = (*pages, mark)
        if rule.param is not None and "=" not in rule.key:
            for value in f.values:
                v = ur.digest(value)
                if v not in values and len(values) < ur.EVIDENCE_CAP:
                    values = (*values, v)
        if f.vote is not None:
            votes = (votes[0] + 1, votes[1]) if f.vote == "/" else (votes[0], votes[1] + 1)
        if (pages, values, votes) == (rule.pages, rule.values, rule.votes) and f.key in h.rules:
            return
        rule = replace(rule, pages=pages, values=values, votes=votes)
        if ur.ready(rule, self.thresholds):
            rule = replace(
                rule,
                state=RuleState.ACTIVE,
                prefer="/" if votes[0] >= votes[1] else "",
                reason=_why(rule),
                changed_at=self._clock.now(),
            )
            self._count.add("equivalence:learned")
        h.put(rule)
        self._store.save(rule)
        if rule.state is RuleState.ACTIVE and (recent := self._recent.get(host)) is not None:
            for url in recent.pages:  # what was fetched under a spelling it now removes
                recent.spell(url, h.active)

    def _room_for(self, h: _Host, key: str) -> bool:
        if len(h.rules) >= MAX_RULES:
            return False
        if "=" in key:
            name = key.partition("=")[0]
            same = sum(1 for k in h.rules if k.startswith(name + "="))
            return same < MAX_VALUE_RULES
        return True

    # -- counterexamples ---------------------------------------------------------------

    def named(self, url: str, host: str, why: str) -> list[Rewrite]:
        """The site names ``url`` itself (a rel=canonical, a redirect target): every
        spelling it has is one the host means, so no rule may remove it. A trailing
        slash is a vote for the host's form instead (refuting an active rule that
        prefers the other)."""
        h = self._host(host)
        undo: list[Rewrite] = []
        for f in ur.features(url):
            rule = h.rules.get(f.key)
            if f.key == "slash":
                if rule is not None and rule.state is RuleState.ACTIVE:
                    if ur.applies(rule, url) != url:
                        undo += self._refute(h, host, f.key, f"{why} {url}")
                else:
                    vote = "/" if url.partition("?")[0].endswith("/") else ""
                    self._vote(h, host, vote)
                continue
            undo += self._refute(h, host, f.key, f"{why} keeps it: {url}")
        return undo

    def _vote(self, h: _Host, host: str, vote: str) -> None:
        rule = h.rules.get("slash")
        if rule is None:
            if not self._room_for(h, "slash"):
                return
            rule = UrlRule(host, "slash", changed_at=self._clock.now())
        if rule.state is not RuleState.CANDIDATE:
            return
        a, b = rule.votes
        rule = replace(rule, votes=(a + 1, b) if vote == "/" else (a, b + 1))
        h.put(rule)
        self._store.save(rule)

    def failed(self, host: str, url: str, reason: str) -> list[Rewrite]:
        """A URL failed. If a rule rewrote URLs to it, those URLs are given back to be
        fetched as they were found (the first ``MAX_PROBES`` times per rule): if one
        of them serves a page, the rule is refuted (``observe``); if it fails too (a
        dead link in either spelling), the rule is not to blame."""
        if self._probes.pop((host, url), None) is not None:
            return []  # the URL as found failed too
        key = self._targets.peek((host, url))
        h = self._host(host)
        rule = h.rules.get(key or "")
        if key is None or rule is None or rule.state is not RuleState.ACTIVE:
            return []
        tried = self._probed.get((host, key), 0)
        if tried >= MAX_PROBES:
            return []
        self._probed[(host, key)] = tried + 1
        found = [r for r in self._store.logged(host, key) if r.target == url]
        for r in found:
            self._probes.put((host, r.url), (key, f"{url} failed: {reason}"))
        self._count.add("equivalence:probed", len(found))
        return found

    def refute(self, host: str, key: str, reason: str) -> list[Rewrite]:
        return self._refute(self._host(host), host, key, reason)

    def _refute(self, h: _Host, host: str, key: str, reason: str) -> list[Rewrite]:
        rule = h.rules.get(key)
        if rule is not None and rule.state is RuleState.REFUTED:
            return []
        if rule is None:
            # Recorded, so that later evidence cannot bring it in; not for one value
            # of a parameter (``param:id=7``: one record per value would crowd the host).
            if len(h.rules) >= MAX_RULES or "=" in key:
                return []
            rule = UrlRule(host, key)
        was_active = rule.state is RuleState.ACTIVE
        rule = replace(
            rule, state=RuleState.REFUTED, reason=reason[:300], changed_at=self._clock.now()
        )
        h.put(rule)
        self._store.save(rule)
        self._count.add("equivalence:refuted")
        if not was_active:
            return []
        recent = self._recent.get(host)
        if recent is not None:
            recent.forms = {f: v for f, v in recent.forms.items() if key not in v[1]}
        undo = self._store.logged(host, key)
        self._store.forget(host, key)
        return undo


def _learning(rule: UrlRule) -> bool:
    return rule.state is RuleState.CANDIDATE and bool(rule.pages) and ur.can_apply(rule.key)


def _rule_name(key: str) -> str:
    """What a rule is about: a parameter (whatever value), a segment, an index file."""
    return key.partition("=")[0]


def _on(url: str, host: str) -> bool:
    try:
        return urls.host_key(url) == host
    except UrlError:
        return False


def _why(rule: UrlRule) -> str:
    values = f", {len(rule.values)} values" if rule.values else ""
    return f"{len(rule.pages)} pages{values}"
