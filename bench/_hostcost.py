"""What the crawl process holds for the hosts it meets, bounded: through its own
admission (``host_bytes``), and every per-host holder filled to its cap (``host_caps``),
from tracemalloc. Printed by ``bench_memory.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def host_bytes(work: Path, hosts: int = 200_000, first: int = 20_000) -> str:
    """The Python heap a host named by links costs the crawl process, through its own
    admission (scope ``any``: the frontier's host record and schedule entry, the host's
    URL equivalences, its ranking; one URL each), from tracemalloc: over the ``first``
    hosts, by file, and over the second half of ``hosts`` (past the frontier's
    ``memory.frontier_hosts``, 50,000, and the other per-host caps: what is not bounded
    still costs there)."""
    import tracemalloc

    from trawl import wire
    from trawl.clock import SystemClock
    from trawl.config import CrawlConfig
    from trawl.frontier.admission import Candidate
    from trawl.frontier.traps import ScopeFilter
    from trawl.storage.open import open_store

    data = work / "hosts"
    store = open_store(data)
    config = CrawlConfig(data_dir=data, scope="any")
    admission = wire.admission(config, store, ScopeFilter("any"), clock=SystemClock(), shared=False)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    via = "https://seed.example/"
    grown: dict[int, int] = {}
    parts = ""
    for i in range(0, hosts, 50):
        named = range(i, min(i + 50, hosts))
        admission.offer([Candidate(f"https://h{j:06d}.example/", 1, via=via) for j in named], now=0)
        done = named.stop
        if done % 1000 == 0 or done == hosts:
            store.commit({})
            grown[done] = tracemalloc.get_traced_memory()[0] - before
        if done == first:
            parts = ", ".join(
                f"{s.traceback[0].filename.rpartition('trawl/')[2]} {s.size / first:.0f}"
                for s in tracemalloc.take_snapshot().statistics("filename")[:6]
                if s.size >= first
            )
    tracemalloc.stop()
    store.close()
    half = max(k for k in grown if k <= hosts // 2)
    late = (grown[hosts] - grown[half]) / (hosts - half)
    return (
        f"hosts named by links (one URL each, through admission; SQLite's pages not "
        f"included): {grown[first] / first:.0f} bytes of Python heap a host over the first "
        f"{first:,} ({parts}); {late:.0f} a host from {half:,} to {hosts:,} hosts; "
        f"{grown[hosts] / 2**20:.1f} MiB in all"
    )


def host_caps() -> list[str]:
    """Each per-host holder of the fetch and parse roles filled to its cap (one entry a
    host, names not counted): the most they hold however many hosts a crawl meets."""
    import asyncio
    import tracemalloc

    from trawl.clock import SystemClock
    from trawl.dedup.hostdups import HostDupTracker, Outcome
    from trawl.fetch import dns
    from trawl.fetch.address import AddressGuard
    from trawl.fetch.politeness import MAX_HOSTS, Politeness
    from trawl.fetch.tdm_cache import TdmCache

    def pace(names: list[str]) -> object:
        # Each with a Crawl-delay: a host with neither it nor a back-off is not held.
        p = Politeness(delay=1, max_crawl_delay=30, max_backoff=600)
        for n in names:
            p.set_crawl_delay(n, 5.0)
        return p

    def dups(names: list[str]) -> object:
        # Each window full (its 50 outcomes, half of them duplicates: no demotion).
        t = HostDupTracker()
        for n in names:
            for i in range(t.window):
                t.record(n, Outcome.DUPLICATE if i % 2 else Outcome.NEW, admitted=1)
        return t

    class _OneAddress:
        """A DNS backend answering one public IPv4 address a name, as most hosts have."""

        def __init__(self) -> None:
            self.n = 0

        async def lookup(self, host: str) -> dns.DnsAnswer:
            self.n += 1
            return dns.DnsAnswer((f"93.184.{self.n % 256}.{self.n // 256 % 256}",), 3600.0)

        async def close(self) -> None:
            pass

    def answers(names: list[str]) -> object:
        d = dns.DnsCache(guard=AddressGuard(), clock=SystemClock(), backend=_OneAddress())

        async def resolve_all() -> None:
            for n in names:
                await d.resolve(n, 443)

        asyncio.run(resolve_all())
        return d

    class _NoStore:
        def load(self, *_a: object) -> None:
            return None

        def save(self, *_a: object, **_k: object) -> None:
            pass

    def tdm(names: list[str]) -> object:
        t = TdmCache(_NoStore())
        for n in names:
            t.record("https://" + n, status=404, body=None, now=0)
        return t

    holders: list[tuple[str, int, Callable[[list[str]], object]]] = [
        ("politeness (delays)", MAX_HOSTS, pace),
        ("duplicate windows", 100_000, dups),
        ("DNS answers", 100_000, answers),
        ("TDMRep rules", 50_000, tdm),
    ]
    lines = ["per-host holders filled to their caps (tracemalloc, host names not counted):"]
    for label, n, fill in holders:
        names = [f"h{i:07d}.example" for i in range(n)]
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = fill(names)
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        del kept
        lines.append(
            f"  {label:<20} {n:>9,} hosts {grown / 2**20:6.1f} MiB  {grown / n:4.0f} bytes a host"
        )
    return lines
