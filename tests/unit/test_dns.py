"""DnsCache: order of sources, TTLs, negative caching, the guard, sharing, LRU.

Virtual time (FakeClock) and a fake backend: no sleeps, no network. The two real
backends are only asked for ``localhost``, which both answer from /etc/hosts.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from ipaddress import ip_network

import pytest

from trawl.errors import BlockedAddressError, ConfigError
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import (
    AresBackend,
    DnsAnswer,
    DnsCache,
    DnsError,
    GuardedResolver,
    ResolvedAddress,
    ResolveRefusedError,
    SystemBackend,
    default_backend,
)
from trawl.testing.clock import FakeClock

PUBLIC = "93.184.216.34"
PUBLIC6 = "2606:2800:220:1:248:1893:25c8:1946"
LOOPBACK_OK = AddressGuard([ip_network("127.0.0.0/8")])


class FakeBackend:
    """Answers from a table; counts lookups; can hold lookups until released."""

    def __init__(self, answers: dict[str, DnsAnswer | DnsError | Exception]) -> None:
        self.answers = answers
        self.calls: list[str] = []
        self.gate: asyncio.Event | None = None
        self.closed = False

    async def lookup(self, host: str) -> DnsAnswer:
        self.calls.append(host)
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers.get(host)
        if answer is None:
            raise DnsError("nxdomain", host, "no such name")
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def close(self) -> None:
        self.closed = True


def answer(*ips: str, ttl: float | None = 120.0) -> DnsAnswer:
    return DnsAnswer(tuple(ips), ttl)


def make(
    answers: dict[str, DnsAnswer | DnsError | Exception] | None = None,
    *,
    guard: AddressGuard | None = None,
    overrides: dict[str, str] | None = None,
    **kwargs: float,
) -> tuple[DnsCache, FakeBackend, FakeClock]:
    clock = FakeClock()
    backend = FakeBackend(answers or {})
    cache = DnsCache(
        guard=guard or AddressGuard(),
        clock=clock,
        overrides=overrides or {},
        backend=backend,
        **kwargs,  # type: ignore[arg-type]
    )
    return cache, backend, clock


def ips(addresses: Sequence[ResolvedAddress]) -> list[str]:
    return [a.ip for a in addresses]


# -- the cache and TTLs -------------------------------------------------------------------


async def test_a_cached_name_is_the_callers_string_not_a_copy() -> None:
    # A parser's copy of each name would cost some 60 bytes a cached name.
    cache, _backend, _clock = make({"books.example": answer(PUBLIC)})
    host = "".join(["books", ".example"])  # a string object of its own
    await cache.resolve(host, 80)
    assert [name is host for name in cache._entries] == [True]


async def test_answer_is_cached_for_its_ttl() -> None:
    cache, backend, clock = make({"books.example": answer(PUBLIC, ttl=120)})
    assert await cache.resolve("books.example", 80) == [ResolvedAddress(PUBLIC, socket.AF_INET, 80)]
    clock.advance(119.9)
    assert ips(await cache.resolve("Books.Example.", 443)) == [PUBLIC]
    assert backend.calls == ["books.example"]
    clock.advance(0.1)  # exactly at expiry: asked again
    await cache.resolve("books.example", 80)
    assert backend.calls == ["books.example", "books.example"]
    assert cache.hits == 1
    assert cache.lookups == 2


@pytest.mark.parametrize(
    ("ttl", "lifetime"),
    [(0.0, 30.0), (5.0, 30.0), (600.0, 600.0), (86_400.0, 3600.0), (None, 300.0)],
)
async def test_ttl_is_clamped(ttl: float | None, lifetime: float) -> None:
    cache, backend, clock = make({"a.example": answer(PUBLIC, ttl=ttl)})
    await cache.resolve("a.example", 80)
    clock.advance(lifetime - 0.001)
    await cache.resolve("a.example", 80)
    assert len(backend.calls) == 1
    clock.advance(0.001)
    await cache.resolve("a.example", 80)
    assert len(backend.calls) == 2


async def test_custom_clamps() -> None:
    cache, backend, clock = make({"a.example": answer(PUBLIC, ttl=1)}, min_ttl=5.0, max_ttl=10.0)
    await cache.resolve("a.example", 80)
    clock.advance(4.999)
    await cache.resolve("a.example", 80)
    assert len(backend.calls) == 1
    clock.advance(0.001)
    await cache.resolve("a.example", 80)
    assert len(backend.calls) == 2


async def test_negative_answers_are_cached_for_negative_ttl() -> None:
    cache, backend, clock = make({}, negative_ttl=60.0)
    for _ in range(3):
        with pytest.raises(DnsError) as info:
            await cache.resolve("gone.example", 80)
        assert info.value.kind == "nxdomain"
        assert info.value.host == "gone.example"
        assert not info.value.retryable
    assert backend.calls == ["gone.example"]
    clock.advance(59.999)
    with pytest.raises(DnsError):
        await cache.resolve("gone.example", 80)
    assert len(backend.calls) == 1
    clock.advance(0.001)
    backend.answers["gone.example"] = answer(PUBLIC)
    assert ips(await cache.resolve("gone.example", 80)) == [PUBLIC]
    assert len(backend.calls) == 2


async def test_each_raise_is_a_fresh_exception() -> None:
    cache, _, _ = make({})
    errors = []
    for _ in range(2):
        with pytest.raises(DnsError) as info:
            await cache.resolve("gone.example", 80)
        errors.append(info.value)
    assert errors[0] is not errors[1]  # no traceback piling up on a cached instance


@pytest.mark.parametrize(
    ("failure", "kind", "retryable"),
    [
        (DnsError("timeout", "x", "slow"), "timeout", True),
        (DnsError("servfail", "x", "broken"), "servfail", True),
        (DnsError("no-address", "x", "empty"), "no-address", False),
        (RuntimeError("backend bug"), "error", True),
    ],
)
async def test_failures_become_dns_errors_and_are_cached(
    failure: Exception, kind: str, retryable: bool
) -> None:
    cache, backend, _ = make({"x.example": failure})
    for _ in range(2):
        with pytest.raises(DnsError) as info:
            await cache.resolve("x.example", 80)
        assert info.value.kind == kind
        assert info.value.retryable is retryable
    assert len(backend.calls) == 1


async def test_empty_answer_is_a_lookup_failure() -> None:
    cache, _, _ = make({"empty.example": answer()})
    with pytest.raises(DnsError) as info:
        await cache.resolve("empty.example", 80)
    assert info.value.kind == "no-address"


async def test_ipv4_first_and_duplicates_dropped() -> None:
    cache, _, _ = make({"dual.example": answer(PUBLIC6, PUBLIC, PUBLIC, "1.1.1.1")})
    result = await cache.resolve("dual.example", 8080)
    assert result == [
        ResolvedAddress(PUBLIC, socket.AF_INET, 8080),
        ResolvedAddress("1.1.1.1", socket.AF_INET, 8080),
        ResolvedAddress(PUBLIC6, socket.AF_INET6, 8080),
    ]


# -- the guard ------------------------------------------------------------------------------


async def test_resolved_private_address_is_refused() -> None:
    cache, _, _ = make({"intranet.example": answer("10.1.2.3")})
    with pytest.raises(BlockedAddressError) as info:
        await cache.resolve("intranet.example", 80)
    assert info.value.address == "10.1.2.3"
    assert info.value.reason == "private"


async def test_mixed_public_and_private_answer_is_refused_and_cached() -> None:
    cache, backend, clock = make({"rebind.example": answer(PUBLIC, "169.254.169.254", ttl=90)})
    for _ in range(2):
        with pytest.raises(BlockedAddressError) as info:
            await cache.resolve("rebind.example", 80)
        assert info.value.address == "169.254.169.254"
        assert info.value.reason == "link-local"
    assert len(backend.calls) == 1  # the refusal lives as long as the answer
    clock.advance(90)
    backend.answers["rebind.example"] = answer(PUBLIC)
    assert ips(await cache.resolve("rebind.example", 80)) == [PUBLIC]


async def test_garbage_address_from_backend_is_refused() -> None:
    cache, _, _ = make({"odd.example": answer(PUBLIC, "not-an-ip")})
    with pytest.raises(BlockedAddressError) as info:
        await cache.resolve("odd.example", 80)
    assert info.value.reason == "invalid-address"


async def test_opted_in_network_is_allowed() -> None:
    cache, _, _ = make({"dev.example": answer("127.0.0.5")}, guard=LOOPBACK_OK)
    assert ips(await cache.resolve("dev.example", 80)) == ["127.0.0.5"]


# -- overrides, literals, localhost -----------------------------------------------------------


async def test_override_needs_no_lookup_and_matches_case_insensitively() -> None:
    cache, backend, _ = make(
        {"books.test": answer(PUBLIC)},
        overrides={"Books.Test": "127.0.0.1", "v6.test": "[::1]"},
        guard=AddressGuard([ip_network("127.0.0.0/8"), ip_network("::1/128")]),
    )
    assert await cache.resolve("BOOKS.test.", 8080) == [
        ResolvedAddress("127.0.0.1", socket.AF_INET, 8080)
    ]
    assert await cache.resolve("v6.test", 80) == [ResolvedAddress("::1", socket.AF_INET6, 80)]
    assert backend.calls == []
    # An exact host match: a subdomain is not overridden.
    with pytest.raises(DnsError):
        await cache.resolve("www.books.test", 80)


@pytest.mark.parametrize(
    ("ip", "allow", "reason"),
    [
        ("10.0.0.1", (), "private"),
        ("127.0.0.1", (), "loopback"),
        ("10.0.0.1", ("127.0.0.0/8",), "private"),
    ],
)
async def test_override_is_still_checked_by_the_guard(
    ip: str, allow: tuple[str, ...], reason: str
) -> None:
    guard = AddressGuard([ip_network(n) for n in allow])
    cache, backend, _ = make(overrides={"evil.test": ip}, guard=guard)
    with pytest.raises(BlockedAddressError) as info:
        await cache.resolve("evil.test", 80)
    assert (info.value.address, info.value.reason) == (ip, reason)
    assert backend.calls == []


def test_override_must_be_an_ip() -> None:
    with pytest.raises(ConfigError):
        make(overrides={"a.test": "example.com"})


@pytest.mark.parametrize(
    ("host", "ip", "family"),
    [
        (PUBLIC, PUBLIC, socket.AF_INET),
        ("[2606:4700::1111]", "2606:4700::1111", socket.AF_INET6),
        ("2606:4700::1111", "2606:4700::1111", socket.AF_INET6),  # as aiohttp passes it
    ],
)
async def test_public_ip_literal_needs_no_lookup(host: str, ip: str, family: int) -> None:
    cache, backend, _ = make()
    assert await cache.resolve(host, 80) == [ResolvedAddress(ip, family, 80)]
    assert backend.calls == []


@pytest.mark.parametrize(
    ("host", "address", "reason"),
    [
        ("127.0.0.1", "127.0.0.1", "loopback"),
        ("2130706433", "127.0.0.1", "loopback"),
        ("0x7f.1", "127.0.0.1", "loopback"),
        ("[::ffff:10.0.0.1]", "::ffff:a00:1", "private"),
        ("::1", "::1", "loopback"),
        ("169.254.169.254", "169.254.169.254", "link-local"),
        ("localhost", "127.0.0.1", "loopback"),
        ("api.localhost", "127.0.0.1", "loopback"),
        ("bad host", "bad host", "invalid-host"),
    ],
)
async def test_blocked_literals_and_localhost(host: str, address: str, reason: str) -> None:
    cache, backend, _ = make()
    with pytest.raises(BlockedAddressError) as info:
        await cache.resolve(host, 80)
    assert (info.value.address, info.value.reason) == (address, reason)
    assert backend.calls == []


async def test_localhost_allowed_when_loopback_opted_in() -> None:
    cache, backend, _ = make(guard=LOOPBACK_OK)
    assert ips(await cache.resolve("localhost", 80)) == ["127.0.0.1"]
    assert ips(await cache.resolve("Shop.Localhost.", 80)) == ["127.0.0.1"]
    assert ips(await cache.resolve("127.0.0.9", 80)) == ["127.0.0.9"]
    assert backend.calls == []


async def test_idn_is_looked_up_as_a_label() -> None:
    cache, backend, _ = make({"xn--bcher-kva.example": answer(PUBLIC)})
    assert ips(await cache.resolve("bücher.example", 80)) == [PUBLIC]
    assert ips(await cache.resolve("xn--bcher-kva.example", 80)) == [PUBLIC]
    assert backend.calls == ["xn--bcher-kva.example"]


# -- sharing, bounds, closing -------------------------------------------------------------------


async def test_concurrent_lookups_of_a_name_share_one_query() -> None:
    cache, backend, _ = make({"busy.example": answer(PUBLIC)})
    backend.gate = asyncio.Event()
    tasks = [asyncio.create_task(cache.resolve("busy.example", 80)) for _ in range(20)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    # One waiter giving up must not cancel the query the others wait for.
    tasks[0].cancel()
    backend.gate.set()
    results = await asyncio.gather(*tasks[1:])
    assert all(ips(r) == [PUBLIC] for r in results)
    assert backend.calls == ["busy.example"]
    assert tasks[0].cancelled()


async def test_concurrent_failures_are_shared_too() -> None:
    cache, backend, _ = make({})
    backend.gate = asyncio.Event()
    tasks = [asyncio.create_task(cache.resolve("gone.example", 80)) for _ in range(5)]
    await asyncio.sleep(0)
    backend.gate.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, DnsError) and r.kind == "nxdomain" for r in results)
    assert backend.calls == ["gone.example"]


async def test_size_is_bounded_least_recently_used_first() -> None:
    names = ["a.example", "b.example", "c.example", "d.example"]
    cache, backend, _ = make({n: answer(PUBLIC) for n in names}, max_names=3)
    for name in names[:3]:
        await cache.resolve(name, 80)
    await cache.resolve("a.example", 80)  # a is now the most recently used
    await cache.resolve("d.example", 80)  # evicts b
    assert len(cache) == 3
    backend.calls.clear()
    await cache.resolve("a.example", 80)
    await cache.resolve("c.example", 80)
    assert backend.calls == []
    await cache.resolve("b.example", 80)
    assert backend.calls == ["b.example"]


async def test_forget_drops_an_answer() -> None:
    cache, backend, _ = make({"a.example": answer(PUBLIC)})
    await cache.resolve("a.example", 80)
    cache.forget("A.example")
    await cache.resolve("a.example", 80)
    assert len(backend.calls) == 2


async def test_close_cancels_lookups_and_closes_the_backend() -> None:
    cache, backend, _ = make({"slow.example": answer(PUBLIC)})
    backend.gate = asyncio.Event()
    task = asyncio.create_task(cache.resolve("slow.example", 80))
    await asyncio.sleep(0)
    await cache.close()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert backend.closed


def test_bad_settings() -> None:
    with pytest.raises(ConfigError):
        make(min_ttl=10.0, max_ttl=5.0)


# -- the aiohttp adapter --------------------------------------------------------------------------


async def test_guarded_resolver_returns_checked_addresses_under_the_original_name() -> None:
    cache, _, _ = make({"dual.example": answer(PUBLIC6, PUBLIC)})
    resolver = GuardedResolver(cache)
    results = await resolver.resolve("dual.example", 443, family=socket.AF_UNSPEC)
    numeric = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
    assert results == [
        {
            "hostname": "dual.example",
            "host": PUBLIC,
            "port": 443,
            "family": socket.AF_INET,
            "proto": 0,
            "flags": numeric,
        },
        {
            "hostname": "dual.example",
            "host": PUBLIC6,
            "port": 443,
            "family": socket.AF_INET6,
            "proto": 0,
            "flags": numeric,
        },
    ]
    v6 = await resolver.resolve("dual.example", 443, family=socket.AF_INET6)
    assert [r["host"] for r in v6] == [PUBLIC6]
    await resolver.close()


async def test_guarded_resolver_refusals_are_oserrors_carrying_the_cause() -> None:
    cache, _, _ = make({"intranet.example": answer("192.168.1.1")})
    resolver = GuardedResolver(cache)
    with pytest.raises(ResolveRefusedError) as blocked:
        await resolver.resolve("intranet.example", 80, family=socket.AF_UNSPEC)
    assert isinstance(blocked.value, OSError)
    assert isinstance(blocked.value.error, BlockedAddressError)
    with pytest.raises(ResolveRefusedError) as missing:
        await resolver.resolve("gone.example", 80, family=socket.AF_UNSPEC)
    assert isinstance(missing.value.error, DnsError)
    cache4, _, _ = make({"v6only.example": answer(PUBLIC6)})
    with pytest.raises(ResolveRefusedError) as family:
        await GuardedResolver(cache4).resolve("v6only.example", 80, family=socket.AF_INET)
    assert isinstance(family.value.error, DnsError)
    assert family.value.error.kind == "no-address"


# -- the real backends (localhost only: answered from /etc/hosts, no network) --------------------


def test_default_backend_is_c_ares_here() -> None:
    assert isinstance(default_backend(), AresBackend)


async def test_ares_backend_reads_hosts_file_for_localhost() -> None:
    backend = AresBackend()
    try:
        result = await backend.lookup("localhost")
    finally:
        await backend.close()
    assert "127.0.0.1" in result.addresses
    assert result.ttl is not None  # c-ares reports TTLs (0 for /etc/hosts entries)


async def test_system_backend_resolves_localhost_without_ttl() -> None:
    result = await SystemBackend().lookup("localhost")
    assert "127.0.0.1" in result.addresses or "::1" in result.addresses
    assert result.ttl is None
