"""Hosts whose URLs wait for an unreachable robots.txt, and the crawl's patience with them.

RFC 9309 2.3.1.4: while a host's robots.txt cannot be read (5xx, 429, a network error)
nothing else of the host is fetched. The fetch stage gives such a URL back to its queue
as it was (not an attempt: it never fails for it) and the host sleeps until the next
robots.txt retry (``RobotsCache``: 5 min doubling to an hour; after 30 days of outage
the last good copy, or no rules). It notes the host here.

A crawl whose only work left is such URLs would otherwise wait for hours; ``patience``
seconds after that became true, ``RobotsWaits.over`` says to end it. The URLs stay
queued (a resumed crawl tries their robots.txt again) and ``left`` says how many, on
how many hosts. Pure state, time passed in.

In a fleet each worker knows only the hosts it saw waiting, so the worker whose
patience ran out says so in the crawl's meta store (``publish``); another worker with
nothing to do ends too when the mark is fresh and the store still holds just the URLs
it counted (``shared_stop``): the fleet ends together, and a resume minutes later is
not stopped by an old mark.
"""

from __future__ import annotations

from collections.abc import Collection

import orjson

from trawl.models import UrlStatus
from trawl.storage.base import Frontier, MetaStore, ParseQueue

__all__ = ["ROBOTS_STOP", "RobotsWaits"]

ROBOTS_STOP = "waiting for robots.txt"
"""How a crawl ends (``CrawlSummary.stopped``) when its patience with the waits ran out."""
SHARED_KEY = "robots.stop"
FRESH = 30.0  # seconds a worker's mark makes the others end too


class RobotsWaits:
    def __init__(self, *, patience: float) -> None:
        self.patience = patience
        self.hosts: dict[str, float] = {}  # host -> when its robots.txt is tried again
        self.left: tuple[int, int] = (0, 0)  # (URLs, hosts) waiting at the last check
        self._since: float | None = None

    def wait(self, host: str, retry_at: float) -> None:
        self.hosts[host] = retry_at

    def clear(self, host: str) -> None:
        """The host's robots.txt was read: its URLs go on."""
        self.hosts.pop(host, None)

    def stalled(self, frontier: Frontier, in_flight: Collection[str]) -> tuple[int, int] | None:
        """(URLs, hosts) when every URL still owed is of a waiting host, else None.

        ``in_flight`` are the hosts of the fetches under way (a waiting host's is a
        robots.txt retry). Retries and revisits waiting for their time are other work.
        """
        waits = self.hosts
        if not waits or any(host not in waits for host in in_flight):
            return None
        counts = frontier.counts()
        if counts[UrlStatus.WAITING]:
            return None
        urls = hosts = 0
        for host in list(waits):
            info = frontier.host_info(host)
            mine = (info.queued if info is not None else 0) + sum(1 for h in in_flight if h == host)
            if not mine:
                del waits[host]  # nothing of it is left to wait for
                continue
            urls += mine
            hosts += 1
        if not hosts or urls != counts[UrlStatus.QUEUED] + counts[UrlStatus.IN_FLIGHT]:
            return None
        return urls, hosts

    def over(self, stalled: tuple[int, int] | None, now: float) -> bool:
        """Whether only waits have been left for ``patience`` seconds (from ``stalled``)."""
        if stalled is None:
            self._since, self.left = None, (0, 0)
            return False
        if self._since is None:
            self._since = now
        self.left = stalled
        return now - self._since >= self.patience

    def publish(self, meta: MetaStore, now: float) -> None:
        """Tell a fleet's other workers that this one ended for the waits."""
        urls, hosts = self.left
        meta.set(SHARED_KEY, orjson.dumps({"at": now, "urls": urls, "hosts": hosts}).decode())

    def shared_stop(
        self, meta: MetaStore, frontier: Frontier, queue: ParseQueue, now: float
    ) -> bool:
        """Whether another worker ended for the waits just now and nothing changed since
        (asked by a worker with nothing in flight); ``left`` then says what it counted."""
        raw = meta.get(SHARED_KEY)
        if raw is None:
            return False
        mark = orjson.loads(raw)
        if not 0.0 <= now - float(mark["at"]) <= FRESH or len(queue):
            return False
        counts = frontier.counts()
        if counts[UrlStatus.WAITING] or counts[UrlStatus.QUEUED] + counts[
            UrlStatus.IN_FLIGHT
        ] != int(mark["urls"]):
            return False
        self.left = (int(mark["urls"]), int(mark["hosts"]))
        return True
