"""How a lease ends when the fetch does not give a page: a redirect (its target offered
through admission, its chain's loops and length checked), a failure for good, a
network error, a retry with back-off. The fetch stage (``fetch/stage.py``) calls them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from trawl import urls
from trawl.clock import Clock
from trawl.errors import UrlError
from trawl.fetch.http import FetchError, FetchResponse
from trawl.fetch.politeness import Politeness
from trawl.frontier.admission import Admission, Candidate, CounterSink
from trawl.models import Lease, UrlStatus
from trawl.storage.base import Frontier


def failure_kind(reason: str) -> str:
    """The class of a failure reason: ``http 404``, ``timeout`` (of ``timeout: ...``)."""
    return reason.partition(":")[0].strip()[:60]


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    agents: tuple[str, ...]
    max_attempts: int = 3
    retry_base: float = 30.0
    retry_max: float = 3600.0
    max_redirects: int = 5
    tdmrep: bool = False  # fetch /.well-known/tdmrep.json per origin (training crawls)


class LeaseEnds:
    """The ends of a lease other than a stored page, under the crawl's ``policy``."""

    def __init__(
        self,
        *,
        frontier: Frontier,
        admission: Admission,
        counters: CounterSink,
        clock: Clock,
        policy: FetchPolicy,
        politeness: Politeness,
        rng: random.Random,
    ) -> None:
        self._frontier = frontier
        self._admission = admission
        self._count = counters
        self._clock = clock
        self._policy = policy
        self._pace = politeness
        self._rng = rng
        self._quality = admission.ranker.quality  # failures count against a host

    def redirect(self, lease: Lease, resp: FetchResponse, ready: float) -> None:
        raw = resp.header("location")
        try:
            target = urls.join(lease.url, raw or "")
        except UrlError as exc:
            self._count.add("redirect:bad")
            self.fail(lease, f"bad redirect: {exc.reason}", ready)
            return
        hops = lease.hops + 1
        origin = lease.via or lease.url
        if hops > self._policy.max_redirects:
            self._count.add("redirect:too many")
            self.fail(lease, "too many redirects", ready)
            self._fail_origin(origin, "too many redirects")
            return
        if self._loops(target, lease.url, origin):
            # The seen set would end the loop quietly, with every hop "redirected" and
            # the chain's start, the URL that was wanted, never marked as failed.
            self._count.add("redirect:loop")
            self.fail(lease, "redirect loop", ready)
            self._fail_origin(origin, "redirect loop")
            return
        if lease.depth == 0:
            # Where a seed redirects to is a seed too (http -> https, www., new domain).
            self._admission.scope.add_host(urls.host_key(target))
        # A redirect that only adds tracking parameters is followed with them: admitted
        # without, its target would be the URL that redirected, and the page lost.
        bare = self._admission.without_tracking(target)
        as_is = bare != target and bare in (lease.url, origin)
        candidate = Candidate(
            target,
            depth=lease.depth,
            via=origin,
            hops=hops,
            named=True,
            as_is=as_is,
            cash=lease.cash,  # the target takes the redirect's cash, as its page's one link
        )
        result = self._admission.offer([candidate], now=self._clock.now())
        why = next(iter(result.dropped), None)
        self._count.add("redirect:followed" if result.added else "redirect:not queued")
        self._frontier.finish(
            lease,
            UrlStatus.REDIRECTED,
            reason=f"-> {target}" + (f" ({why})" if why else ""),
            host_ready_at=ready,
        )

    def _loops(self, target: str, url: str, origin: str) -> bool:
        """``target`` is a URL this redirect chain has already been through."""
        if target in (url, origin):
            return True
        host = urls.host_key(target)
        record = self._frontier.lookup(target, host, urls.fingerprint(target))
        return record is not None and record.via == origin

    def _fail_origin(self, origin: str, reason: str) -> None:
        host = urls.host_key(origin)
        record = self._frontier.lookup(origin, host, urls.fingerprint(origin))
        if record is not None and record.status is UrlStatus.REDIRECTED:
            self._count.add(f"failed:{failure_kind(reason)}")
            self._frontier.set_status(host, record.fp, UrlStatus.FAILED, reason=reason)

    def fail(self, lease: Lease, reason: str, ready: float, *, kind: str | None = None) -> None:
        """The URL is failed for good: counted under ``failed:<kind>`` for the summary."""
        self._count.add(f"failed:{kind or failure_kind(reason)}")
        if self._quality is not None:  # a mark against its host's quality too
            self._quality.record(lease.host, good=False)
        self._frontier.finish(lease, UrlStatus.FAILED, reason=reason, host_ready_at=ready)

    def network_error(self, lease: Lease, exc: FetchError) -> None:
        now = self._clock.now()
        self._count.add(f"error:{exc.kind}")
        if exc.kind == "blocked":
            self._frontier.finish(
                lease, UrlStatus.SKIPPED, reason=f"blocked address: {exc}", host_ready_at=now
            )
            return
        ready = self._pace.after_trouble(lease.host, now)
        if exc.retryable:
            self.retry(lease, reason=f"{exc.kind}: {exc.message}", host_ready_at=ready)
        else:
            self.fail(lease, f"{exc.kind}: {exc.message}", ready)

    def retry(self, lease: Lease, *, reason: str, host_ready_at: float) -> None:
        """Back off and try again later, or give up after the last attempt."""
        attempts = lease.attempts + 1
        if attempts >= self._policy.max_attempts:
            self._count.add("fetch:failed")
            self.fail(lease, reason, host_ready_at)
            return
        p = self._policy
        backoff = min(p.retry_max, p.retry_base * 2 ** (attempts - 1))
        backoff *= 0.5 + self._rng.random()  # jitter: retries of many URLs do not align
        due = max(self._clock.now() + backoff, host_ready_at)
        self._count.add("fetch:retried")
        self._frontier.retry(lease, due=due, host_ready_at=host_ready_at, reason=reason)
