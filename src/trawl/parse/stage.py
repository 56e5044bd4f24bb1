"""The parse stage's second half, in the crawler process: what a parsed page leads to.

Workers return a ``ParsedPage``; here it meets the durable state, in this order:
a body that is not text (``binary content``, ``undecodable text``: recorded as the
outcome, nothing else done), canonical (a page that names another URL as canonical
is not kept; that URL is offered instead), exact duplicate (a text already kept is
recorded as a duplicate of its first URL and its links are not followed), near
duplicate (the same, against the near-duplicate index), links (unless nofollow),
noindex, opt-outs (a training crawl keeps no text whose owner reserved it: ``noai``,
TDMRep), quality thresholds (off by default), then the text record with its
provenance. Links are offered each with its share of the page's OPIC cash, and go
to the link graph too (``archive/links.py``). The page leaves the parse queue in the
same commit, so a crash before it simply parses the page again. Each outcome also
feeds the host duplicate tracker, which may demote the host in the frontier, and the
host quality of the crawl's ranker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from trawl.archive.events import EventLog
from trawl.archive.links import LinkLog
from trawl.archive.textstore import TextStore
from trawl.clock import Clock
from trawl.config import QualityThresholds
from trawl.dedup.hostdups import HostDupTracker, Outcome
from trawl.dedup.near import NearDupIndex, assign
from trawl.frontier.admission import Admission, Candidate, CounterSink
from trawl.frontier.equivalences import Observation, page_of
from trawl.frontier.priority import Ranker
from trawl.frontier.revisit import Revisits
from trawl.jobs import OutcomeKind as K
from trawl.jobs import ParseJob, ParseOutcome
from trawl.models import UrlStatus
from trawl.parse.page import ParsedPage
from trawl.parse.tdm import TdmDecision, decide
from trawl.storage.base import Frontier, PageRecord, PageStore, ParseQueue
from trawl.storage.gate import CommitGate

# Links admitted between two turns of the event loop (a few milliseconds of work).
ADMIT_CHUNK = 500
# Directives that reserve a page's text from model training.
AI_DIRECTIVES = ("noai", "noimageai")
# What a page's outcome says of its host's quality (others say nothing).
_GOOD = frozenset({K.STORED, K.UNCHANGED})
_BAD = frozenset({K.DUPLICATE, K.NEAR_DUPLICATE, K.ERROR, K.BINARY, K.UNDECODABLE, K.LOW_QUALITY})


def iso_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class NearVerdict:
    """A near-duplicate check: the page's cluster, and the kept page it repeats if any."""

    cluster: str
    duplicate_of: str | None = None  # doc key (content hash) of the earlier page


class NearDupCheck(Protocol):
    def __call__(self, page: ParsedPage) -> NearVerdict: ...

    def keep(self, page: ParsedPage, cluster: str) -> str | None:
        """The page's text is about to be stored: later pages may repeat it. Returns
        the doc key of a near copy kept meanwhile (by another worker of a fleet), whose
        duplicate the page then is."""
        ...


class IndexNearCheck:
    """``NearDupCheck`` over a ``NearDupIndex``, with the cluster policy of ``assign``."""

    def __init__(self, index: NearDupIndex) -> None:
        self._index = index

    def __call__(self, page: ParsedPage) -> NearVerdict:
        key = page.content_hash
        if page.near_signature is None or key is None:
            return NearVerdict(cluster=key or "")
        a = assign(self._index, page.near_signature, key)
        return NearVerdict(cluster=a.cluster_id, duplicate_of=a.near_duplicate_of)

    def keep(self, page: ParsedPage, cluster: str) -> str | None:
        # Founders only: members are not added, so a cluster cannot chain away.
        if page.near_signature is None or page.content_hash != cluster:
            return None
        late = self._index.claim(page.near_signature, cluster, cluster)
        return None if late is None else late.doc_key


@dataclass(frozen=True, slots=True)
class KeepPolicy:
    """Which texts a crawl keeps, and what it records about why."""

    training: bool = False  # honour AI / TDM opt-outs for the text
    agents: tuple[str, ...] = ("trawl",)  # robots.txt tokens that allowed the fetch
    quality: QualityThresholds = field(default_factory=QualityThresholds)


class ParseStage:
    def __init__(
        self,
        *,
        frontier: Frontier,
        admission: Admission,
        pages: PageStore,
        parse_queue: ParseQueue,
        texts: TextStore,
        counters: CounterSink,
        clock: Clock,
        events: EventLog | None = None,
        policy: KeepPolicy | None = None,
        near: NearDupCheck | None = None,
        host_dups: HostDupTracker | None = None,
        revisits: Revisits | None = None,
        links: LinkLog | None = None,
        chunk: int = ADMIT_CHUNK,
        gate: CommitGate | None = None,
    ) -> None:
        self._frontier = frontier
        self._admission = admission
        self._pages = pages
        self._queue = parse_queue
        self._texts = texts
        self._count = counters
        self._clock = clock
        self._events = events
        self._policy = policy or KeepPolicy()
        self._near = near
        self._host_dups = host_dups or HostDupTracker()
        self._revisits = revisits
        self._links = links
        self._ranker: Ranker = admission.ranker
        self._quality = admission.ranker.quality
        self._chunk = max(1, chunk)
        self._lock = asyncio.Lock()
        self._gate = gate  # the group commit's: see storage/gate.py
        self.documents = 0

    def apply(self, seq: int, job: ParseJob, page: ParsedPage) -> ParseOutcome:
        """Record everything ``page`` leads to; returns the outcome."""
        steps = self._steps(seq, job, page)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                outcome: ParseOutcome = done.value
                return outcome

    async def apply_async(self, seq: int, job: ParseJob, page: ParsedPage) -> ParseOutcome:
        """``apply``, giving the event loop a turn between chunks of the page's links.

        Admitting thousands of links takes tens to hundreds of milliseconds: in one go
        it would hold up every fetch. A group commit between chunks makes some links
        durable before the page is acknowledged, which is safe (a page parsed again
        after a crash offers them again and finds them seen); the acknowledgement
        comes in a commit that holds every link. Pages are applied one at a time, so
        no other page's checks (is this text stored already?) run in between.
        """
        async with self._lock:
            steps = self._steps(seq, job, page)
            gate = self._gate
            while True:
                if gate is not None:
                    await gate.passage()  # a step may append a text or event record
                try:
                    next(steps)
                except StopIteration as done:
                    outcome: ParseOutcome = done.value
                    return outcome
                await asyncio.sleep(0)

    def _steps(
        self, seq: int, job: ParseJob, page: ParsedPage
    ) -> Generator[None, None, ParseOutcome]:
        """The work of ``apply``; yields between chunks of links (see ``apply_async``)."""
        outcome, kind, cluster = yield from self._apply(job, page)
        if self._learn(job, page, outcome):
            # Another spelling of a page seen: what it says about the host is taught
            # to its URL rules, not held against it as a duplicate.
            kind = None
        host, fp, reason = job.host, job.fp, str(outcome)
        self._pages.set_fetch_outcome(host, fp, content_hash=page.content_hash, outcome=reason)
        self._frontier.set_status(host, fp, UrlStatus.PARSED, reason=reason)
        if self._revisits is not None:
            changed = None if job.revisit is None else job.previous_hash != page.content_hash
            self._revisits.schedule(host, fp, job.revisit, changed=changed)
        self._queue.ack(seq)
        self._count.add(outcome.kind.counter)
        if self._quality is not None and (outcome.kind in _GOOD or outcome.kind in _BAD):
            self._quality.record(host, good=outcome.kind in _GOOD)
        if kind is not None:
            self._feedback(host, kind)
        self._publish(job, page, outcome, cluster)
        return outcome

    # -- the decisions -----------------------------------------------------------------

    def _apply(
        self, job: ParseJob, page: ParsedPage
    ) -> Generator[None, None, tuple[ParseOutcome, Outcome | None, str | None]]:
        now = self._clock.now()
        depth = job.depth
        if page.error:
            return ParseOutcome(K.ERROR, page.error), None, None
        if page.not_text:  # binary or undecodable: no text, no links, nothing indexed
            kind = K.UNDECODABLE if page.not_text == K.UNDECODABLE.value else K.BINARY
            return ParseOutcome(kind), None, None
        if page.tags_over_cap:  # whatever becomes of the page (a duplicate, nofollow...)
            self._count.add("parse:tags over cap", 1)
        if page.canonical and page.canonical != job.final_url:
            # The site names it: never respelled (a rule that would is refuted, _learn);
            # the page gives way to it, and its cash with it.
            named = Candidate(page.canonical, depth=depth, rewrite=False, cash=job.cash)
            result = self._admission.offer([named], now=now)
            if result.added or result.seen:
                canonical = ParseOutcome(K.CANONICAL, page.canonical)
                return canonical, Outcome.CANONICAL_ELSEWHERE, None
            # A canonical we may not crawl (out of scope, a trap) is ignored.
        cluster = page.content_hash
        if page.content_hash is not None:
            first = self._pages.find(page.content_hash)
            if first is not None and first.url == job.url:
                return ParseOutcome(K.UNCHANGED), None, page.content_hash
            if first is not None:
                self._pages.count_duplicate(page.content_hash)
                dup = ParseOutcome(K.DUPLICATE, first.url)
                return dup, Outcome.DUPLICATE, page.content_hash
            if self._near is not None and not page.noindex:
                verdict = self._near(page)
                cluster = verdict.cluster
                if verdict.duplicate_of is not None:
                    near_dup = self._near_duplicate(job, verdict.duplicate_of, cluster)
                    if near_dup is not None:
                        return near_dup
        if not page.nofollow:
            yield from self._offer_links(page, depth + 1, now, job.cash)
        if self._links is not None:
            # No turn of the event loop from here to the page's ack: the links are in
            # the commit that acknowledges the page (archive/links.py).
            self._links.add(
                job.final_url, job.fetched_at, page.links, page.anchors, page.unfollowed
            )
        if page.noindex:
            return ParseOutcome(K.NOINDEX), None, None
        if page.content_hash is None or cluster is None:
            return ParseOutcome(K.NO_TEXT), None, None
        tdm = self._tdm(job, page)
        opt_outs = self._opt_outs(page, tdm)
        if self._policy.training and opt_outs:
            return ParseOutcome(K.OPTED_OUT, ", ".join(opt_outs)), Outcome.NEW, None
        failures: tuple[str, ...] = ()
        if page.quality is not None and self._policy.quality.active:
            failures = self._policy.quality.failures(page.quality)
            if failures:
                return ParseOutcome(K.LOW_QUALITY, ", ".join(failures)), Outcome.NEW, None
        other = self._pages.claim(page.content_hash, job.url)
        if other is not None:  # the same text kept meanwhile (another worker of a fleet)
            self._pages.count_duplicate(page.content_hash)
            return ParseOutcome(K.DUPLICATE, other), Outcome.DUPLICATE, page.content_hash
        if self._near is not None:
            # The founder claim is one step with the look for a near copy (fleet-wide
            # over Redis), so of two near copies kept at once only one founds.
            late = self._near.keep(page, cluster)
            if late is not None:
                near_dup = self._near_duplicate(job, late, late)
                if near_dup is not None:
                    return near_dup
        self._store(job, page, cluster, tdm, opt_outs)
        return ParseOutcome(K.STORED), Outcome.NEW, cluster

    def _learn(self, job: ParseJob, page: ParsedPage, outcome: ParseOutcome) -> bool:
        """Tell the host's learned equivalences what this URL turned out to be;
        whether it was another spelling of a page seen."""
        eq = self._admission.equivalences
        if eq is None:
            return False
        paired = outcome.kind in (K.DUPLICATE, K.NEAR_DUPLICATE, K.CANONICAL)
        learned = eq.observe(
            Observation(
                host=job.host,
                url=job.final_url,
                page=page_of(outcome, job.url),
                same_as=outcome.detail if paired else None,
                canonical=page.canonical,
                kept=outcome.kind is not K.CANONICAL,
            )
        )
        if learned.undo:
            self._admission.restore(learned.undo, now=self._clock.now())
        return learned.spelling

    def _near_duplicate(
        self, job: ParseJob, doc: str, cluster: str
    ) -> tuple[ParseOutcome, Outcome, str] | None:
        """The outcome of a near duplicate of ``doc``, unless it is this page's own
        earlier version."""
        near = self._pages.find(doc)
        # A revisit whose text moved a little is a new version of the same page
        # (stored, same cluster), not a near duplicate of itself.
        if near is not None and near.url == job.url:
            return None
        self._pages.count_duplicate(doc)
        # Its founder may be another worker's page, claimed and not committed yet.
        where = near.url if near is not None else self._pages.claimant(doc) or doc
        return ParseOutcome(K.NEAR_DUPLICATE, where), Outcome.NEAR_DUPLICATE, cluster

    def _offer_links(self, page: ParsedPage, depth: int, now: float, cash: float) -> Iterator[None]:
        """Offer the page's links, each with an equal share of the page's cash."""
        if page.links_over_cap:
            self._count.add("dropped:over per-page cap", page.links_over_cap)
        links, step = page.links, self._chunk
        share = self._ranker.share(cash, len(links))
        for start in range(0, len(links), step):
            if start:
                yield
            chunk = links[start : start + step]
            offers = [Candidate(link, depth=depth, cash=share) for link in chunk]
            self._admission.offer(offers, now=now)

    def _tdm(self, job: ParseJob, page: ParsedPage) -> TdmDecision:
        well_known = job.tdm_well_known
        file_decision = (
            None
            if well_known is None
            else TdmDecision(well_known.reserved, well_known.policy, "tdmrep.json")
        )
        # The page's own statements (meta, then header) over the origin's file.
        return decide(None, page.tdm, file_decision)

    def _opt_outs(self, page: ParsedPage, tdm: TdmDecision) -> list[str]:
        out = [d for d in AI_DIRECTIVES if d in page.directives]
        if tdm.reserved:
            out.append(f"tdm-reservation ({tdm.source})")
        return out

    # -- the text record ---------------------------------------------------------------

    def _store(
        self,
        job: ParseJob,
        page: ParsedPage,
        cluster: str,
        tdm: TdmDecision,
        opt_outs: list[str],
    ) -> None:
        assert page.content_hash is not None
        warc = job.warc
        record: dict[str, Any] = {
            "id": page.content_hash[:32],
            "url": job.url,
            "final_url": job.final_url,
            "fetch_time": iso_time(job.fetched_at),
            "status": job.status,
            "title": page.title,
            "text": page.text,
            "language": page.language,
            "language_confidence": page.language_confidence,
            "content_hash": page.content_hash,
            "depth": job.depth,
            "warc": {"file": warc.file, "offset": warc.offset, "length": warc.length},
            "cluster": cluster,
            "near_duplicate_of": None,
            "truncated": job.truncated,  # "length": cut at the body cap; "decode"
            "provenance": {
                "robots": "allowed",
                "robots_agents": list(self._policy.agents),
                "directives": sorted(page.directives),
                "opt_out": opt_outs,
                "tdm_reserved": tdm.reserved,
                "tdm_policy": tdm.policy,
                "tdm_source": tdm.source,
                "license": page.license,
                "near_cluster": cluster,
                # Rendered in a browser or not, and why (None: the crawl never renders).
                "render": job.render,
            },
        }
        if page.quality is not None:
            record["quality"] = page.quality.as_dict()
            record["quality_failures"] = []
        text_at = self._texts.append(record)
        self._pages.add(
            PageRecord(
                content_hash=page.content_hash,
                url=job.url,
                host=job.host,
                fp=job.fp,
                fetched_at=job.fetched_at,
                title=page.title,
                language=page.language,
                warc=warc,
                text=text_at,
            )
        )
        self.documents += 1

    # -- feedback and events -------------------------------------------------------------

    def _feedback(self, host: str, kind: Outcome) -> None:
        info = self._frontier.host_info(host)
        admitted = info.admitted if info is not None else 0
        demotion = self._host_dups.record(host, kind, admitted=admitted)
        if demotion is not None:
            self._count.add("hosts:demoted")
            self._frontier.demote_host(
                host, priority=demotion.priority, budget=demotion.budget, reason=demotion.reason
            )

    def _publish(
        self, job: ParseJob, page: ParsedPage, outcome: ParseOutcome, cluster: str | None
    ) -> None:
        """A new page, or a known one whose text changed, becomes an event."""
        if self._events is None:
            return
        if job.previous_hash is None:
            kind = "page.new"
        elif job.previous_hash != page.content_hash:
            kind = "page.changed"
        else:
            return
        w, r = job.warc, job.rendered
        self._events.publish(
            kind,
            {
                "time": iso_time(self._clock.now()),
                "url": job.url,
                "final_url": job.final_url,
                "status": job.status,
                "outcome": str(outcome),
                "content_hash": page.content_hash,
                "cluster": cluster,
                "warc": {"file": w.file, "offset": w.offset, "length": w.length},
                "fetched_at": iso_time(job.fetched_at),
                "render": job.render,
                "rendered": None
                if r is None
                else {"file": r.file, "offset": r.offset, "length": r.length},
            },
        )
