"""Admission: the one gate every discovered URL passes before the frontier.

Seeds, links from pages, redirect targets, canonical links and the URLs sitemaps list
all come through here: normal form (known tracking parameters dropped unless the crawl
keeps them), scope, the host's learned equivalences (``frontier/equivalences.py``: a
URL is respelled as the host's active rules say, before the seen check), trap limits,
a blocked host (``hosts`` overrides), the include / exclude patterns, then the
frontier's exact seen check and host budgets (a host with an override gets its budget
and priority from the frontier the first time this process admits for it). Every URL
turned away is counted under ``dropped:<reason>``. Seeds, canonical links and redirect
targets are never respelled: the user or the site named them. A link that is
probably another spelling of a URL its host has, by a rule still learning, is admitted
deferred (``frontier/deferral.py``: last in its host's queue, where the rule, learned
meanwhile, usually has it skipped at its lease). Sitemap files
themselves (``offer_sitemaps``) pass the scope, the block and the trap limits, and
their own bounds (``frontier/sitemaps.py``).
Each URL gets its key from the crawl's ``Ranker`` (``frontier/priority.py``); a
candidate's cash (its share of the linking page's) is what a new URL starts with and
what a known URL still to be fetched gains. A seed line may end with a priority:
``URL PRIORITY``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from trawl import urls
from trawl.config import HostOverride
from trawl.dedup.urlrules import Rewrite
from trawl.errors import UrlError
from trawl.frontier.deferral import Deferral
from trawl.frontier.equivalences import Equivalences
from trawl.frontier.priority import Ranker
from trawl.frontier.shape import HostRules, UrlPatterns
from trawl.frontier.sitemaps import MAX_NESTING, SITEMAP_PRIORITY, SitemapLedger, SitemapRef
from trawl.frontier.traps import ScopeFilter, TrapLimits, trap_reason
from trawl.models import AddResult, Lease, NewUrl, UrlStatus
from trawl.ranking import deferred_key, is_deferred
from trawl.storage.base import Frontier

BLOCKED = "host blocked"
UNLIMITED = 1 << 53  # a host override's budget 0: no limit
MAX_SEED_PRIORITY = 1e6
DEFER_WAIT = 1.0  # seconds a deferred URL whose rule is about to be learned waits again


class CounterSink(Protocol):
    def add(self, name: str, n: int = 1) -> None: ...


# Not frozen: one is made per link a page offers, and a frozen dataclass's __init__
# (object.__setattr__ a field) took 1.27 us against 0.34. Nothing changes one.
@dataclass(slots=True)
class Candidate:
    """A URL found somewhere, already in normal form (or to be normalised)."""

    url: str
    depth: int
    via: str | None = None
    hops: int = 0
    rewrite: bool = True  # the host's learned equivalences may respell it
    named: bool = False  # the site named this very URL (a redirect target): kept as it is
    # Tracking parameters kept too: a redirect that adds nothing else (the server will
    # not answer without them).
    as_is: bool = False
    priority: int | None = None  # None: its depth (a sitemap entry's comes from lastmod)
    cash: float = 0.0  # its share of the cash of what led to it (OPIC)
    raises: bool = True  # a known URL still to be fetched gains ``cash`` (seeds do not)


def parse_seed(line: str) -> tuple[str, float | None]:
    """``URL`` or ``URL PRIORITY`` (a positive number, higher first) -> (URL, priority).

    Raises ``ValueError`` for a priority that is not a positive number up to 1e6.
    """
    text = line.strip()
    head, sep, last = text.rpartition(" ")
    if not sep or not head.strip():
        return text, None
    try:
        priority = float(last)
    except ValueError:
        return text, None  # a URL with a space in it: normalize decides
    if not 0 < priority <= MAX_SEED_PRIORITY:
        raise ValueError(f"priority must be a number above 0 and up to 1e6, got {last!r}")
    return head.strip(), priority


class Admission:
    def __init__(
        self,
        *,
        frontier: Frontier,
        scope: ScopeFilter,
        limits: TrapLimits,
        counters: CounterSink,
        strip_tracking: bool = True,
        equivalences: Equivalences | None = None,
        patterns: UrlPatterns | None = None,
        hosts: HostRules | None = None,
        sitemaps: SitemapLedger | None = None,
        ranker: Ranker | None = None,
        defer: bool = True,
    ) -> None:
        self._frontier = frontier
        self._scope = scope
        self._limits = limits
        self._counters = counters
        self._ranker = ranker or Ranker("depth")  # depth: a URL's key is its depth
        self._strip = strip_tracking
        self.equivalences = equivalences
        # Probable spellings admitted last in their host's queue (with equivalences only).
        self._deferral = (
            Deferral(equivalences, frontier) if equivalences is not None and defer else None
        )
        self._patterns = patterns or UrlPatterns()
        self._hosts = hosts or HostRules()
        self._ledger = sitemaps
        self._configured: set[str] = set()  # hosts whose overrides the frontier has

    @property
    def scope(self) -> ScopeFilter:
        return self._scope

    @property
    def hosts(self) -> HostRules:
        """The operator's per-host overrides (shared with the fetch stage's politeness)."""
        return self._hosts

    def set_hosts(self, overrides: Mapping[str, HostOverride], *, max_per_host: int | None) -> None:
        """New per-host overrides (a steered crawl's), from now on: a blocked host's URLs
        are refused and skipped; a known host named exactly gets its new budget and
        priority at once (one without an override any more: ``max_per_host`` and 0),
        others at the next URL admitted for them."""
        changed = self._hosts.update(overrides)
        self._configured.clear()
        for key in changed:
            if self._frontier.host_info(key) is None:
                continue  # a domain, or a host not seen yet: at its next admission
            rule = self._hosts.get(key)
            budget = None if rule is None else rule.budget
            priority = None if rule is None else rule.priority
            self._configured.add(key)
            self._frontier.configure_host(
                key,
                budget=(max_per_host or UNLIMITED) if budget is None else budget or UNLIMITED,
                priority=(priority or 0) * self._ranker.demotion_step,
            )

    def set_limits(self, limits: TrapLimits) -> None:
        """New trap limits (a steered crawl's max_depth) for URLs offered from now on."""
        self._limits = limits

    def without_tracking(self, url: str) -> str:
        """A normal-form ``url`` as this crawl admits it: without tracking parameters,
        unless the crawl keeps them."""
        return urls.without_tracking(url) if self._strip else url

    @property
    def ranker(self) -> Ranker:
        return self._ranker

    def seed(self, raw: Iterable[str], *, now: float) -> tuple[AddResult, list[str]]:
        """Admit seed URLs (``URL`` or ``URL PRIORITY`` lines), their hosts into the
        scope; also ``URL: reason`` per bad seed."""
        candidates, errors = [], []
        for line in raw:
            try:
                text, priority = parse_seed(line)
                url = urls.normalize(text, strip_tracking=self._strip)
            except UrlError as exc:
                errors.append(f"{line}: {exc.reason}")
                continue
            except ValueError as exc:
                errors.append(f"{line}: {exc}")
                continue
            host = urls.host_key(url)
            refused = BLOCKED if self._hosts.blocked(host) else self._patterns.refusal(url)
            if refused is not None:
                errors.append(f"{line}: {refused}")
                continue
            self._scope.add_host(host)
            candidates.append(
                Candidate(
                    url, depth=0, rewrite=False, cash=self._ranker.seed_cash(priority), raises=False
                )
            )
        return self.offer(candidates, now=now), errors

    def offer(
        self, candidates: Iterable[Candidate], *, now: float, normalised: bool = True
    ) -> AddResult:
        """Admit what may be crawled; count the rest by reason."""
        offers = candidates if isinstance(candidates, (list, tuple)) else list(candidates)
        batch: list[NewUrl] = []
        dropped: dict[str, int] = {}
        limits, scope, eq = self._limits, self._scope, self.equivalences
        patterns, rules = self._patterns, self._hosts
        rewrites: list[Rewrite] = []
        undo: list[Rewrite] = []
        seen = 0  # spellings of pages fetched under another one
        ranker = self._ranker
        opic = ranker.opic
        deferral = self._deferral
        offered = _Batch(offers)  # the batch's URLs, for deferral (made if asked)
        taught: set[str] = set()  # rules that had a teacher in this batch
        teachers: dict[int, tuple[str, Sequence[str]]] = {}  # fp -> its host, the rules it teaches
        for c in offers:
            url = c.url
            if not normalised:
                try:
                    url = urls.normalize(url, strip_tracking=self._strip)
                except UrlError as exc:
                    dropped[exc.reason] = dropped.get(exc.reason, 0) + 1
                    continue
            elif self._strip and "?" in url and not c.as_is:
                url = urls.without_tracking(url)  # a redirect target, say
            host = urls.host_key(url)
            if not scope.allows(host):
                dropped["out of scope"] = dropped.get("out of scope", 0) + 1
                continue
            if eq is not None:
                if c.named:
                    undo += eq.named(url, host, "a redirect to")
                elif c.rewrite:
                    new, keys = eq.rewrite(url, host)
                    fetched = eq.fetched_as(new, host)
                    if fetched is not None:  # its page was fetched under another spelling
                        new, keys = fetched[0], tuple(dict.fromkeys(keys + fetched[1]))
                    if keys:
                        rewrites += [Rewrite(host, k, url, new, c.depth) for k in keys]
                        self._counters.add("equivalence:rewritten")
                        url = new
                    if fetched is not None:
                        seen += 1
                        continue
            reason = trap_reason(url, c.depth, limits)
            if rules and reason is None:
                reason = BLOCKED if rules.blocked(host) else None
                self._configure(host)
            if patterns and reason is None:
                reason = patterns.refusal(url)
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            cash = ranker.stored_cash(c.cash)
            fp = urls.fingerprint(url)
            key = ranker.key(host, c.depth if c.priority is None else c.priority, cash)
            if deferral is not None and c.rewrite and not c.named and c.depth > 0:
                verdict = deferral.decide(url, host, offered, now=now, taught=taught)
                if verdict.defer is not None:
                    key = deferred_key(key)
                elif verdict.teach:
                    teachers[fp] = (host, verdict.teach)
            batch.append(
                NewUrl(
                    url=url,
                    fp=fp,
                    host=host,
                    depth=c.depth,
                    priority=key,
                    via=c.via,
                    hops=c.hops,
                    cash=cash,
                    gain=c.cash if opic and c.raises else 0.0,
                )
            )
        result = self._frontier.add(batch, now=now) if batch else AddResult(())
        for reason, n in result.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
        for reason, n in dropped.items():
            self._counters.add(f"dropped:{reason}", n)
        seen += result.seen
        self._counters.add("links:seen", seen)
        self._counters.add("links:new", len(result.added))
        if deferral is not None and result.added:
            n = 0
            for u in result.added:
                n += is_deferred(u.priority)
                if (taught_by := teachers.get(u.fp)) is not None:
                    deferral.teach(taught_by[0], taught_by[1], u.url, now=now)
            if n:
                self._counters.add("equivalence:deferred", n)
        if eq is not None and rewrites:
            eq.rewritten(rewrites)
        if undo:
            self.restore(undo, now=now)
        return AddResult(result.added, seen=seen, dropped=dropped)

    # -- learned equivalences ----------------------------------------------------------

    def respelled(self, lease: Lease, *, now: float) -> str | None:
        """A URL admitted before a rule was learned, which the rule respells: its
        spelling is admitted (if new) and it is finished as skipped, nothing sent (the
        host's turn is not used). Returns the URL it stands for, None to fetch it.
        Redirect targets, seeds and URLs given back by a refuted rule are always
        fetched, and so is a URL whose spelling failed or may not be crawled.
        A URL admitted before a rule started learning, which is now a probable spelling
        (``frontier/deferral.py``), is given back deferred, nothing sent (the host's turn
        not used either): returns the URL itself."""
        eq = self.equivalences
        if eq is None or lease.via is not None or lease.depth == 0 or lease.revisit is not None:
            return None
        target, keys = eq.rewrite(lease.url, lease.host)
        fetched = eq.fetched_as(target, lease.host)
        if fetched is not None:  # its page was fetched under another spelling
            target, keys = fetched[0], keys + fetched[1]
        elif not keys:
            return self._defer(lease, now=now)
        else:
            known = self._frontier.lookup(target, lease.host, urls.fingerprint(target))
            if known is None:
                added = self.offer([Candidate(target, depth=lease.depth, rewrite=False)], now=now)
                if not added.added:
                    return None
            elif known.status in (UrlStatus.FAILED, UrlStatus.SKIPPED):
                return None
        reason = f"same as {target} ({', '.join(dict.fromkeys(keys))})"
        self._frontier.finish(lease, UrlStatus.SKIPPED, reason=reason, host_ready_at=now)
        skipped = [
            Rewrite(lease.host, k, lease.url, target, lease.depth, skipped=True)
            for k in dict.fromkeys(keys)
        ]
        eq.rewritten(skipped)
        self._counters.add("equivalence:skipped")
        return target

    def _defer(self, lease: Lease, *, now: float) -> str | None:
        """Give a probable spelling back deferred (in the frontier's one step), unless
        it is a teacher. A deferred URL whose turn came is fetched, unless its rule
        has teachers on their way: then it waits ``DEFER_WAIT`` more (the host with
        it: only deferred URLs are left in its queue), nothing sent either."""
        deferral = self._deferral
        if deferral is None:
            return None
        if is_deferred(lease.priority):
            if not deferral.waits(lease.url, lease.host, now=now):
                return None
            self._frontier.requeue(lease, host_ready_at=now + DEFER_WAIT)
            self._counters.add("equivalence:waited")
            return lease.url
        verdict = deferral.decide(lease.url, lease.host, (), now=now, taught=set(), look=True)
        if verdict.defer is None:
            if verdict.teach:
                deferral.teach(lease.host, verdict.teach, lease.url, now=now)
            return None
        self._frontier.requeue(lease, host_ready_at=now, defer=True)
        self._counters.add("equivalence:deferred")
        return lease.url

    def failed(self, host: str, url: str, reason: str, *, now: float) -> None:
        """``url`` failed: a rule that rewrote URLs to it is refuted, its URLs given back."""
        if self.equivalences is not None:
            self.restore(self.equivalences.failed(host, url, reason), now=now)

    def restore(self, rewrites: Iterable[Rewrite], *, now: float) -> None:
        """Give back the URLs of refuted rules: those respelled at admission are offered
        as they were found; those skipped at their lease are queued again (as a revisit
        due now: the frontier's way back for a finished URL)."""
        offers: dict[str, Candidate] = {}
        n = 0
        for r in rewrites:
            n += 1
            if not r.skipped:
                offers[r.url] = Candidate(r.url, depth=r.depth, rewrite=False)
                continue
            record = self._frontier.lookup(r.url, r.host, urls.fingerprint(r.url))
            if record is not None and record.status is UrlStatus.SKIPPED:
                self._frontier.revisit(r.host, record.fp, due=now, interval=0.0)
        self._counters.add("equivalence:restored", n)
        if offers:
            self.offer(list(offers.values()), now=now)

    def _configure(self, host: str) -> None:
        """Give the frontier a host's budget and priority overrides, once per process."""
        if host in self._configured:
            return
        self._configured.add(host)
        rule = self._hosts.get(host)
        if rule is not None and (rule.budget is not None or rule.priority is not None):
            budget = None if rule.budget is None else rule.budget or UNLIMITED
            # A level of the override is a demotion's step: 10 depths, or a score / 4.
            step = self._ranker.demotion_step
            priority = None if rule.priority is None else rule.priority * step
            self._frontier.configure_host(host, budget=budget, priority=priority)

    def offer_sitemaps(
        self,
        refs: Iterable[tuple[SitemapRef, int]],
        *,
        now: float,
        via: str | None = None,
        hops: int = 0,
    ) -> AddResult:
        """Admit sitemap files to read, each ``(ref, nesting)``: scope, blocked hosts,
        trap limits (of the file's URL), nesting and each host's sitemap cap. ``via``
        and ``hops`` are a redirect's, as for pages. Counted under ``sitemap:files
        queued`` and ``sitemap:files refused:<reason>``."""
        if self._ledger is None:
            return AddResult(())
        batch: list[NewUrl] = []
        dropped: dict[str, int] = {}
        room: dict[str, int] = {}
        # A sitemap file holds a seed's cash, which it shares among the URLs it lists.
        cash = self._ranker.stored_cash(self._ranker.seed_cash(None))
        for ref, nesting in refs:
            host = urls.host_key(ref.url)
            reason = None
            if nesting > MAX_NESTING:
                reason = "sitemap index too deep"
            elif not self._scope.allows(host):
                reason = "out of scope"
            elif self._hosts.blocked(host):
                reason = BLOCKED
            else:
                reason = trap_reason(ref.url, 0, self._limits)
            if reason is None:
                left = room.get(host)
                if left is None:
                    left = room[host] = self._ledger.room(host)
                if left <= 0:
                    reason = "over the host's sitemap cap"
                else:
                    room[host] = left - 1
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            self._configure(host)
            item = ref.item
            batch.append(
                NewUrl(
                    url=item,
                    fp=urls.fingerprint(item),
                    host=host,
                    depth=nesting,
                    priority=self._ranker.key(host, SITEMAP_PRIORITY, cash),
                    cash=cash,
                    via=via,
                    hops=hops,
                )
            )
        result = self._frontier.add(batch, now=now) if batch else AddResult(())
        spent: dict[str, int] = {}
        for u in result.added:
            spent[u.host] = spent.get(u.host, 0) + 1
        for host, n in spent.items():
            self._ledger.spend(host, n)
        for reason, n in result.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
        for reason, n in dropped.items():
            self._counters.add(f"sitemap:files refused:{reason}", n)
        self._counters.add("sitemap:files queued", len(result.added))
        return AddResult(result.added, seen=result.seen, dropped=dropped)


class _Batch:
    """The URLs of a batch of candidates, as a set made the first time it is asked
    (deferral asks only about URLs with a spelling learning, often never)."""

    __slots__ = ("_offers", "_urls")

    def __init__(self, offers: Sequence[Candidate]) -> None:
        self._offers = offers
        self._urls: set[str] | None = None

    def __contains__(self, url: object) -> bool:
        if self._urls is None:
            self._urls = {c.url for c in self._offers}
        return url in self._urls
