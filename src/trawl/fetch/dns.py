"""DNS for the fetcher: a TTL-honouring cache in front of a resolver, wired into the guard.

Every name the fetcher contacts is resolved here, and only addresses the
:class:`~trawl.fetch.address.AddressGuard` allows come out. :meth:`DnsCache.resolve`
settles a host in this order:

1. ``overrides`` (``--resolve HOST=IP``): exact, case-insensitive host match, no
   lookup; the guard still checks the IP (a test opts in to ``127.0.0.0/8``).
2. The cache (only names that went to the backend are ever stored, so looking here
   before step 3 changes no answer; it keeps the hot path to one dict lookup).
3. IP literals (every WHATWG spelling: ``2130706433``, ``0x7f.1``, ``[::1]``) and
   ``localhost`` names, read with :func:`~trawl.fetch.address.read_host`: no lookup.
4. The backend, one in-flight query per name however many tasks ask at once.

Policies:

- **Mixed answers are refused.** If ANY address of a name is blocked the whole name is
  refused with :class:`~trawl.errors.BlockedAddressError`, even if other addresses are
  public: a name that mixes public and private answers is a DNS-rebinding / SSRF smell,
  and the connector could pick any of them.
- **TTLs** come from the records (the smallest TTL of the answer and its CNAME chain),
  clamped to ``[min_ttl, max_ttl]``; a backend that knows no TTL (the system resolver)
  gets ``default_ttl`` (300 s), clamped the same way. A refusal by the guard is cached
  for the answer's TTL, like the answer itself.
- **Negative answers** (every :class:`DnsError`: NXDOMAIN, no address, timeout,
  SERVFAIL) are cached for ``negative_ttl``, so a dead name or a dead name server is
  asked once a minute, not once per URL.
- **Order of addresses**: the backend's order, IPv4 first (stable). Crawl machines often
  lack a working IPv6 route; aiohttp's happy eyeballs still interleaves the families.
- **Bounded**: at most ``max_names`` names (LRU); expired entries are dropped when met.
- **Default backend**: :class:`AresBackend` (c-ares through aiodns: asynchronous, no
  thread per lookup, TTLs from the records, and ``/etc/hosts`` read first like the
  system resolver) when aiodns imports and a c-ares channel can be created; otherwise
  :class:`SystemBackend` (``loop.getaddrinfo`` in the default executor, no TTLs).

:class:`GuardedResolver` plugs the cache into aiohttp's ``TCPConnector`` so that the
connection goes to exactly the addresses that were checked: there is no second lookup a
rebinding name server could answer differently.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address, ip_address
from types import MappingProxyType
from typing import Any, Final, Protocol

from aiohttp.abc import AbstractResolver, ResolveResult

from trawl.clock import Clock
from trawl.errors import BlockedAddressError, ConfigError, TrawlError
from trawl.fetch.address import AddressGuard, is_localhost, read_host
from trawl.lru import Lru

__all__ = [
    "AresBackend",
    "DnsAnswer",
    "DnsBackend",
    "DnsCache",
    "DnsError",
    "GuardedResolver",
    "ResolveRefusedError",
    "ResolvedAddress",
    "SystemBackend",
    "default_backend",
]

log = logging.getLogger(__name__)

_AF_INET: Final = socket.AF_INET
_AF_INET6: Final = socket.AF_INET6
_NO_OVERRIDES: Final[Mapping[str, str]] = MappingProxyType({})
_LOCALHOST: Final = "127.0.0.1"
#: DnsError kinds worth retrying soon (the others are answers, not failures).
_RETRYABLE_KINDS: Final = frozenset({"timeout", "servfail", "refused", "error"})


class DnsError(TrawlError):
    """A name could not be resolved.

    ``kind`` is one of ``"nxdomain"`` (the name does not exist), ``"no-address"`` (it
    exists but has no A/AAAA record, or the answer was empty), ``"timeout"``,
    ``"servfail"``, ``"refused"`` or ``"error"`` (anything else). ``retryable`` is
    False for the first two (an answer), True for the rest (a failure).
    """

    def __init__(self, kind: str, host: str, message: str) -> None:
        super().__init__(f"{host}: {message} ({kind})")
        self.kind = kind
        self.host = host
        self.message = message

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE_KINDS


@dataclass(frozen=True, slots=True)
class ResolvedAddress:
    """One guard-checked address to connect to."""

    ip: str
    family: int  # socket.AF_INET or socket.AF_INET6
    port: int


@dataclass(frozen=True, slots=True)
class DnsAnswer:
    """What a backend found: addresses as text, and the TTL if the backend knows it."""

    addresses: tuple[str, ...]
    ttl: float | None


class DnsBackend(Protocol):
    """Looks a name up. Raises :class:`DnsError` on failure, never anything else."""

    async def lookup(self, host: str) -> DnsAnswer: ...

    async def close(self) -> None: ...


@dataclass(slots=True)
class _Entry:
    """A cached outcome: addresses, or a refusal/failure to raise again (fresh each time)."""

    expires: float
    addresses: tuple[tuple[str, int], ...] = ()  # (ip, family)
    blocked: tuple[str, str] | None = None  # (ip, reason)
    failure: tuple[str, str] | None = None  # (kind, message)


class DnsCache:
    """Resolves hosts to guard-checked addresses, caching answers for their TTL."""

    def __init__(
        self,
        *,
        guard: AddressGuard,
        clock: Clock,
        overrides: Mapping[str, str] = _NO_OVERRIDES,
        backend: DnsBackend | None = None,
        min_ttl: float = 30.0,
        max_ttl: float = 3600.0,
        negative_ttl: float = 60.0,
        default_ttl: float = 300.0,
        max_names: int = 100_000,
    ) -> None:
        if not 0 <= min_ttl <= max_ttl or negative_ttl < 0 or max_names < 1:
            raise ConfigError("DNS cache needs 0 <= min_ttl <= max_ttl, negative_ttl >= 0")
        self._guard = guard
        self._clock = clock
        self._backend = backend if backend is not None else default_backend()
        self._min_ttl = min_ttl
        self._max_ttl = max_ttl
        self._negative_ttl = negative_ttl
        self._default_ttl = default_ttl
        self._entries: Lru[str, _Entry] = Lru(max_names)
        self._inflight: dict[str, asyncio.Task[_Entry]] = {}
        self._overrides: dict[str, tuple[str, int, str | None]] = {}
        for host, ip in overrides.items():
            try:
                address = ip_address(ip.strip().strip("[]"))
            except ValueError:
                raise ConfigError(f"resolve override {host}={ip}: not an IP address") from None
            family = _AF_INET if isinstance(address, IPv4Address) else _AF_INET6
            key = _key(host)
            self._overrides[key] = (str(address), family, guard.check_ip(address))
        #: Answers served from the cache, and lookups sent to the backend.
        self.hits = 0
        self.lookups = 0

    @property
    def backend(self) -> DnsBackend:
        return self._backend

    def __len__(self) -> int:
        return len(self._entries)

    async def resolve(self, host: str, port: int) -> list[ResolvedAddress]:
        """Guard-checked addresses of ``host`` (see the module docstring for the order).

        Raises :class:`DnsError` when the lookup fails and
        :class:`~trawl.errors.BlockedAddressError` when the guard refuses the host or
        any address it resolves to.
        """
        key = _key(host)
        override = self._overrides.get(key)
        if override is not None:
            ip, family, reason = override
            if reason is not None:
                raise BlockedAddressError(host, ip, reason)
            return [ResolvedAddress(ip, family, port)]
        entry = self._fresh(key)
        if entry is None:
            value = read_host(host)
            if value is None:
                raise BlockedAddressError(host, host, "invalid-host")
            if not isinstance(value, str):
                reason = self._guard.check_ip(value)
                if reason is not None:
                    raise BlockedAddressError(host, str(value), reason)
                family = _AF_INET if isinstance(value, IPv4Address) else _AF_INET6
                return [ResolvedAddress(str(value), family, port)]
            if is_localhost(value):
                reason = self._guard.check_host(value)
                if reason is not None:
                    raise BlockedAddressError(host, _LOCALHOST, reason)
                return [ResolvedAddress(_LOCALHOST, _AF_INET, port)]
            if value == key:
                value = key  # the caller's string, not the parser's copy, is kept
            else:
                entry = self._fresh(value)
            if entry is None:
                entry = await self._query(value)
        if entry.failure is not None:
            raise DnsError(entry.failure[0], host, entry.failure[1])
        if entry.blocked is not None:
            raise BlockedAddressError(host, entry.blocked[0], entry.blocked[1])
        return [ResolvedAddress(ip, family, port) for ip, family in entry.addresses]

    def _fresh(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires <= self._clock.now():
            self._entries.pop(key)
            return None
        self.hits += 1
        return entry

    async def _query(self, name: str) -> _Entry:
        task = self._inflight.get(name)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._lookup(name))
            self._inflight[name] = task
        # A waiter that is cancelled must not cancel the lookup the others share.
        return await asyncio.shield(task)

    async def _lookup(self, name: str) -> _Entry:
        self.lookups += 1
        try:
            try:
                answer = await self._backend.lookup(name)
            except DnsError as exc:
                entry = self._failure(exc.kind, exc.message)
            except Exception as exc:  # a backend must not break the crawl
                entry = self._failure("error", f"{type(exc).__name__}: {exc}")
            else:
                entry = self._answer(answer)
            self._store(name, entry)
            return entry
        finally:
            self._inflight.pop(name, None)

    def _failure(self, kind: str, message: str) -> _Entry:
        return _Entry(self._clock.now() + self._negative_ttl, failure=(kind, message))

    def _answer(self, answer: DnsAnswer) -> _Entry:
        ttl = self._default_ttl if answer.ttl is None else answer.ttl
        expires = self._clock.now() + min(max(ttl, self._min_ttl), self._max_ttl)
        v4: list[tuple[str, int]] = []
        v6: list[tuple[str, int]] = []
        seen: set[str] = set()
        for text in answer.addresses:
            try:
                address = ip_address(text)
            except ValueError:
                return _Entry(expires, blocked=(text, "invalid-address"))
            ip = str(address)
            if ip in seen:
                continue
            seen.add(ip)
            reason = self._guard.check_ip(address)
            if reason is not None:
                return _Entry(expires, blocked=(ip, reason))
            if isinstance(address, IPv4Address):
                v4.append((ip, _AF_INET))
            else:
                v6.append((ip, _AF_INET6))
        if not seen:
            return self._failure("no-address", "the answer holds no address")
        return _Entry(expires, addresses=(*v4, *v6))

    def _store(self, name: str, entry: _Entry) -> None:
        self._entries.put(name, entry)

    def forget(self, host: str) -> None:
        """Drop a cached answer (e.g. after the operator changed an override)."""
        self._entries.pop(_key(host), None)

    async def close(self) -> None:
        """Cancel lookups in flight and close the backend."""
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self._backend.close()

    async def __aenter__(self) -> DnsCache:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _key(host: str) -> str:
    # Hosts come in normal form, lower-case: kept as they are, not copied (60 bytes a
    # cached name).
    key = host if host.islower() else host.lower()
    return key[:-1] if key.endswith(".") else key


# -- backends ---------------------------------------------------------------------------


class AresBackend:
    """c-ares (aiodns) ``getaddrinfo``: reads /etc/hosts first, then asks the name servers
    from /etc/resolv.conf, and returns each record's TTL (0 for /etc/hosts entries).

    The channel is created on the first lookup (it needs the running loop). ``timeout``
    bounds one lookup as a whole, retries included.
    """

    def __init__(self, *, timeout: float = 5.0, tries: int = 2) -> None:
        self._timeout = timeout
        self._tries = tries
        self._resolver: Any = None

    async def lookup(self, host: str) -> DnsAnswer:
        import aiodns

        if self._resolver is None:
            self._resolver = aiodns.DNSResolver(
                timeout=self._timeout / (self._tries + 1), tries=self._tries
            )
        try:
            async with asyncio.timeout(self._timeout):
                result = await self._resolver.getaddrinfo(
                    host, family=socket.AF_UNSPEC, port=None, type=socket.SOCK_STREAM
                )
        except TimeoutError:
            raise DnsError("timeout", host, f"no answer in {self._timeout:g} s") from None
        except aiodns.error.DNSError as exc:
            code = exc.args[0] if exc.args else None
            message = str(exc.args[1]) if len(exc.args) > 1 else "lookup failed"
            raise DnsError(_ares_kind(code), host, message) from None
        addresses = tuple(node.addr[0].decode("ascii") for node in result.nodes)
        ttls = [node.ttl for node in result.nodes] + [c.ttl for c in result.cnames]
        return DnsAnswer(addresses, float(min(ttls)) if ttls else None)

    async def close(self) -> None:
        resolver, self._resolver = self._resolver, None
        if resolver is not None:
            await resolver.close()


def _ares_kind(code: object) -> str:
    import pycares

    errno = pycares.errno
    if code in (errno.ARES_ENOTFOUND, errno.ARES_ENONAME, errno.ARES_EBADNAME):
        return "nxdomain"
    if code == errno.ARES_ENODATA:
        return "no-address"
    if code in (errno.ARES_ETIMEOUT, errno.ARES_ECONNREFUSED):
        return "timeout"
    if code == errno.ARES_ESERVFAIL:
        return "servfail"
    if code == errno.ARES_EREFUSED:
        return "refused"
    return "error"


class SystemBackend:
    """The system resolver (``loop.getaddrinfo``, run in the default executor).

    It reports no TTL, so the cache uses its ``default_ttl``. ``timeout`` bounds one
    lookup (the executor thread is left to finish on its own).
    """

    def __init__(self, *, timeout: float = 5.0) -> None:
        self._timeout = timeout

    async def lookup(self, host: str) -> DnsAnswer:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._timeout):
                infos = await loop.getaddrinfo(
                    host, None, type=socket.SOCK_STREAM, flags=socket.AI_ADDRCONFIG
                )
        except TimeoutError:
            raise DnsError("timeout", host, f"no answer in {self._timeout:g} s") from None
        except socket.gaierror as exc:
            raise DnsError(_gai_kind(exc.errno), host, str(exc.strerror)) from None
        except (OSError, UnicodeError) as exc:
            raise DnsError("error", host, str(exc)) from None
        addresses = tuple(
            str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)
        )
        return DnsAnswer(addresses, None)

    async def close(self) -> None:
        return None


def _gai_kind(code: int | None) -> str:
    if code == socket.EAI_NONAME:
        return "nxdomain"
    if code == getattr(socket, "EAI_NODATA", None):
        return "no-address"
    if code == socket.EAI_AGAIN:
        return "timeout"
    if code == socket.EAI_FAIL:
        return "servfail"
    return "error"


def default_backend() -> DnsBackend:
    """:class:`AresBackend` when aiodns imports and c-ares works, else SystemBackend."""
    try:
        import aiodns
        import pycares

        if not hasattr(aiodns.DNSResolver, "getaddrinfo"):
            raise ImportError("aiodns has no getaddrinfo")
        pycares.Channel().close()  # reads resolv.conf; fails if c-ares cannot run here
    except Exception as exc:
        log.warning("c-ares unavailable (%s); using the system resolver", exc)
        return SystemBackend()
    return AresBackend()


# -- aiohttp ----------------------------------------------------------------------------


class ResolveRefusedError(OSError):
    """How :class:`GuardedResolver` tells aiohttp a host was refused or not found.

    aiohttp expects an OSError from a resolver (it wraps it in
    ``ClientConnectorDNSError``); the original :class:`DnsError` or
    :class:`~trawl.errors.BlockedAddressError` is in ``error``.
    """

    def __init__(self, error: DnsError | BlockedAddressError) -> None:
        super().__init__(None, str(error))
        self.error = error


_NUMERIC_FLAGS: Final = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV


class GuardedResolver(AbstractResolver):
    """aiohttp resolver over :class:`DnsCache`: connections go only to checked addresses.

    ``hostname`` in each result is the name asked for, which aiohttp uses for TLS (SNI
    and certificate checks); ``host`` is the checked IP with numeric flags, so no
    second lookup happens. The cache is the caller's: :meth:`close` leaves it open.
    """

    def __init__(self, dns: DnsCache) -> None:
        self._dns = dns

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            addresses = await self._dns.resolve(host, port)
        except (DnsError, BlockedAddressError) as exc:
            raise ResolveRefusedError(exc) from exc
        results: list[ResolveResult] = [
            {
                "hostname": host,
                "host": a.ip,
                "port": a.port,
                "family": a.family,
                "proto": 0,
                "flags": _NUMERIC_FLAGS,
            }
            for a in addresses
            if family == socket.AF_UNSPEC or a.family == family
        ]
        if not results:
            error = DnsError("no-address", host, f"no address of family {family!r}")
            raise ResolveRefusedError(error)
        return results

    async def close(self) -> None:
        return None
