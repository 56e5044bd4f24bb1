"""The address guard: the fetcher never reaches a private network (SSRF protection).

The fetcher asks :class:`AddressGuard` twice per hop: :meth:`AddressGuard.check_host`
(or :meth:`AddressGuard.check_url`) before any lookup, which settles IP literals and
``localhost`` names, and :meth:`AddressGuard.check_ip` on every resolved address.
Only globally reachable unicast addresses pass. The blocked ranges are written out
below rather than taken from :attr:`ipaddress.IPv4Address.is_global`, whose answer has
changed between Python versions; addresses that embed an IPv4 address (IPv4-mapped,
IPv4-compatible, NAT64 and 6to4) are judged by the address they embed. Networks an
operator opts in to (``allow_networks``, e.g. ``127.0.0.0/8`` for tests) are allowed;
nothing else loosens the guard. The guard never raises: anything it cannot read is
blocked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Final

import can_ada

__all__ = [
    "BLOCKED_IPV4",
    "BLOCKED_IPV6",
    "AddressGuard",
    "IPAddress",
    "IPNetwork",
    "is_localhost",
    "read_host",
    "url_host",
]

IPAddress = IPv4Address | IPv6Address
IPNetwork = IPv4Network | IPv6Network

#: IPv4 ranges that are not globally reachable unicast, most specific first.
BLOCKED_IPV4: Final[tuple[tuple[IPv4Network, str], ...]] = tuple(
    (IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/32", "unspecified"),
        ("0.0.0.0/8", "this-network"),  # RFC 791
        ("10.0.0.0/8", "private"),  # RFC 1918
        ("100.64.0.0/10", "cgnat"),  # RFC 6598 shared address space
        ("127.0.0.0/8", "loopback"),  # RFC 1122
        ("169.254.0.0/16", "link-local"),  # RFC 3927, incl. 169.254.169.254 metadata
        ("172.16.0.0/12", "private"),  # RFC 1918
        ("192.0.0.0/24", "protocol-assignment"),  # RFC 6890 IETF protocol assignments
        ("192.0.2.0/24", "documentation"),  # RFC 5737 TEST-NET-1
        ("192.88.99.0/24", "reserved"),  # RFC 7526 deprecated 6to4 relay anycast
        ("192.168.0.0/16", "private"),  # RFC 1918
        ("198.18.0.0/15", "benchmarking"),  # RFC 2544
        ("198.51.100.0/24", "documentation"),  # RFC 5737 TEST-NET-2
        ("203.0.113.0/24", "documentation"),  # RFC 5737 TEST-NET-3
        ("224.0.0.0/4", "multicast"),  # RFC 5771
        ("255.255.255.255/32", "broadcast"),  # RFC 919 limited broadcast
        ("240.0.0.0/4", "reserved"),  # RFC 1112 future use
    )
)

#: IPv6 ranges that are blocked outright, most specific first. Everything outside
#: 2000::/3 is blocked too (``not-global-unicast``); the embedding ranges are handled
#: separately (see :data:`_EMBEDDING_IPV6`).
BLOCKED_IPV6: Final[tuple[tuple[IPv6Network, str], ...]] = tuple(
    (IPv6Network(net), reason)
    for net, reason in (
        ("::/128", "unspecified"),  # RFC 4291
        ("::1/128", "loopback"),  # RFC 4291
        ("fe80::/10", "link-local"),  # RFC 4291
        ("fec0::/10", "site-local"),  # RFC 3879 deprecated
        ("fc00::/7", "unique-local"),  # RFC 4193
        ("ff00::/8", "multicast"),  # RFC 4291
        ("2001:db8::/32", "documentation"),  # RFC 3849
        ("3fff::/20", "documentation"),  # RFC 9637
        ("2001::/23", "protocol-assignment"),  # RFC 2928: Teredo, benchmarking, ORCHID...
    )
)

# IPv6 ranges whose last 32 bits (or bits 16..48 for 6to4) carry an IPv4 address.
_IPV4_MAPPED = IPv6Network("::ffff:0:0/96")  # RFC 4291
_IPV4_COMPATIBLE = IPv6Network("::/96")  # RFC 4291, deprecated
_NAT64 = IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
_SIX_TO_FOUR = IPv6Network("2002::/16")  # RFC 3056
_GLOBAL_UNICAST = IPv6Network("2000::/3")  # RFC 4291
_LOCALHOST = IPv4Address("127.0.0.1")


def _embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if it embeds one."""
    value = int(address)
    if address in _IPV4_MAPPED or address in _IPV4_COMPATIBLE or address in _NAT64:
        return IPv4Address(value & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return IPv4Address((value >> 80) & 0xFFFFFFFF)
    return None


def _parse_ip(ip: str | IPAddress) -> IPAddress | None:
    if isinstance(ip, IPv4Address | IPv6Address):
        return ip
    if not isinstance(ip, str):
        return None
    text = ip.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, IPv6Address) and address.scope_id is not None:
        # A zone index (fe80::1%eth0) names an interface: never globally reachable.
        return IPv6Address(text.partition("%")[0])
    return address


class AddressGuard:
    """Decides whether the fetcher may connect to an address.

    ``allow_networks`` lists networks an operator explicitly opts in to (for example
    ``127.0.0.0/8`` for tests and the demo); an address inside one of them is allowed
    even if it would be blocked. An IPv6 address that embeds an IPv4 address is also
    allowed when the embedded address is inside an opted-in IPv4 network, since that
    is where the connection goes.
    """

    def __init__(self, allow_networks: Sequence[IPNetwork] = ()) -> None:
        self._allow: tuple[IPNetwork, ...] = tuple(allow_networks)

    @property
    def allow_networks(self) -> tuple[IPNetwork, ...]:
        """The networks opted in to."""
        return self._allow

    def check_ip(self, ip: str | IPAddress) -> str | None:
        """Return None if ``ip`` may be contacted, else a short reason it is blocked.

        Accepts an address object or its text form (IPv6 with or without brackets,
        with or without a zone index). Text that is not an IP address is blocked as
        ``"invalid-address"``.
        """
        address = _parse_ip(ip)
        if address is None:
            return "invalid-address"
        if self._allowed(address):
            return None
        if isinstance(address, IPv4Address):
            return _ipv4_reason(address)
        for network, reason in BLOCKED_IPV6:
            if address in network:
                return reason
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return None if self._allowed(embedded) else _ipv4_reason(embedded)
        if address not in _GLOBAL_UNICAST:
            return "not-global-unicast"
        return None

    def is_allowed_ip(self, ip: str | IPAddress) -> bool:
        """True if ``ip`` may be contacted (see :meth:`check_ip`)."""
        return self.check_ip(ip) is None

    def check_host(self, host: str) -> str | None:
        """Check a URL host without any DNS lookup.

        The host is read as a WHATWG URL parser reads it (see :func:`read_host`), so
        ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1`` and ``[::ffff:7f00:1]`` are
        all 127.0.0.1. IP literals are checked with :meth:`check_ip`; ``localhost`` and
        ``*.localhost`` are loopback (RFC 6761) without a lookup, allowed only if
        127.0.0.1 is opted in. Any other domain name returns None: its resolved
        addresses must be checked with :meth:`check_ip` by whoever resolves it. A host
        that cannot be parsed is blocked as ``"invalid-host"``.
        """
        value = read_host(host)
        if value is None:
            return "invalid-host"
        if not isinstance(value, str):
            return self.check_ip(value)
        if is_localhost(value):
            return None if self._allowed(_LOCALHOST) else "loopback"
        return None

    def check_url(self, url: str) -> str | None:
        """Check the host of an absolute URL without any DNS lookup (see check_host).

        A URL that cannot be parsed or has no host is blocked as ``"invalid-url"``, and
        one whose scheme is not http or https as ``"unsupported-scheme"`` (the fetcher
        speaks nothing else, and other schemes' hosts are not parsed as addresses).
        """
        hostname = url_host(url)
        if hostname is None:
            return "invalid-url"
        if not hostname:
            return "unsupported-scheme"
        return self.check_host(hostname)

    def _allowed(self, address: IPAddress) -> bool:
        return any(
            address.version == network.version and address in network for network in self._allow
        )


def read_host(host: str) -> IPAddress | str | None:
    """Read a URL host as a WHATWG URL parser does, without any lookup.

    Returns the IP address of an IP literal (``2130706433``, ``0x7f.1``, ``127.1``,
    ``[::1]``, or a bare IPv6 address without brackets), the domain name (lower case,
    A-labels, one trailing dot removed) for any other valid host, and None for text
    that is not a host (it carries a port, a path, userinfo, forbidden characters...).
    """
    if not isinstance(host, str):
        return None
    text = host.strip()
    if not text or any(char in text for char in "/\\?#@"):
        return None
    if ":" in text and not text.startswith("["):
        return _parse_ip(text)  # WHATWG hosts carry IPv6 only in brackets
    try:
        parsed = can_ada.parse(f"http://{text}/")
        hostname: str = parsed.hostname
        href: str = parsed.href
    except Exception:
        return None
    if href != f"http://{hostname}/":
        return None  # a port or something other than a host came along
    if hostname.startswith("["):
        return _parse_ip(hostname)
    name = hostname[:-1] if hostname.endswith(".") else hostname
    if name.replace(".", "").isdigit():
        # WHATWG turns a host that ends in a number into IPv4 or rejects it, so an
        # all-digit host from the parser is dotted-decimal IPv4.
        return _parse_ip(name)
    return name or None


def url_host(url: str) -> str | None:
    """The host of an http(s) URL as WHATWG serialises it, "" for another scheme.

    None if ``url`` cannot be parsed as an absolute URL.
    """
    try:
        parsed = can_ada.parse(url)
        hostname: str = parsed.hostname
        protocol: str = parsed.protocol
    except Exception:
        return None
    return hostname if protocol in ("http:", "https:") else ""


def is_localhost(name: str) -> bool:
    """True for ``localhost`` and names under it (RFC 6761), which are loopback."""
    name = name.lower().rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


def _ipv4_reason(address: IPv4Address) -> str | None:
    for network, reason in BLOCKED_IPV4:
        if address in network:
            return reason
    return None
