"""The address guard: only globally reachable unicast passes, every range tested at its edges."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.fetch.address import AddressGuard, is_localhost, read_host, url_host

GUARD = AddressGuard()

# The expected table, written out here independently of the implementation's.
_IPV4_TABLE = [
    ("0.0.0.0/8", "this-network"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "cgnat"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "protocol-assignment"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "reserved"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
]
_IPV6_TABLE = [
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("fc00::/7", "unique-local"),
    ("ff00::/8", "multicast"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("2001::/23", "protocol-assignment"),
]
_SPECIAL = {
    "0.0.0.0": "unspecified",
    "255.255.255.255": "broadcast",
    "::": "unspecified",
    "::1": "loopback",
}


def _expected(address: IPv4Address | IPv6Address) -> str | None:
    """What the guard must answer for an address outside the embedding ranges."""
    if str(address) in _SPECIAL:
        return _SPECIAL[str(address)]
    table = _IPV4_TABLE if isinstance(address, IPv4Address) else _IPV6_TABLE
    for net, reason in table:
        if address in ip_network(net):
            return reason
    if isinstance(address, IPv6Address) and address not in IPv6Network("2000::/3"):
        return "not-global-unicast"
    return None


def _edges(net: str) -> list[IPv4Address | IPv6Address]:
    network = ip_network(net)
    first, last = network.network_address, network.broadcast_address
    edges: list[IPv4Address | IPv6Address] = [first, last, first + 1, last - 1]
    if int(first) > 0:
        edges.append(first - 1)
    if int(last) < (2**network.max_prefixlen) - 1:
        edges.append(last + 1)
    return edges


@pytest.mark.parametrize(("net", "reason"), _IPV4_TABLE + _IPV6_TABLE)
def test_every_range_is_blocked_at_its_edges_and_not_beyond(net: str, reason: str) -> None:
    network = ip_network(net)
    assert GUARD.check_ip(network.network_address) in (reason, _SPECIAL.get(str(network[0])))
    assert GUARD.check_ip(str(network.broadcast_address)) in (
        reason,
        _SPECIAL.get(str(network[-1])),
    )
    for address in _edges(net):
        if isinstance(address, IPv6Address) and (
            address in IPv6Network("::/96")
            or address in IPv6Network("::ffff:0:0/96")
            or address in IPv6Network("2002::/16")
        ):
            continue  # judged by the embedded IPv4 address, tested below
        assert GUARD.check_ip(address) == _expected(address), address
        assert GUARD.check_ip(str(address)) == _expected(address), address


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        # the edges spelled out, so a mistake in the helpers above cannot hide one
        ("0.0.0.0", "unspecified"),
        ("0.0.0.1", "this-network"),
        ("0.255.255.255", "this-network"),
        ("1.0.0.0", None),
        ("9.255.255.255", None),
        ("10.0.0.0", "private"),
        ("10.255.255.255", "private"),
        ("11.0.0.0", None),
        ("100.63.255.255", None),
        ("100.64.0.0", "cgnat"),
        ("100.127.255.255", "cgnat"),
        ("100.128.0.0", None),
        ("126.255.255.255", None),
        ("127.0.0.0", "loopback"),
        ("127.0.0.1", "loopback"),
        ("127.255.255.255", "loopback"),
        ("128.0.0.0", None),
        ("169.253.255.255", None),
        ("169.254.0.0", "link-local"),
        ("169.254.169.254", "link-local"),
        ("169.254.255.255", "link-local"),
        ("169.255.0.0", None),
        ("172.15.255.255", None),
        ("172.16.0.0", "private"),
        ("172.31.255.255", "private"),
        ("172.32.0.0", None),
        ("191.255.255.255", None),
        ("192.0.0.0", "protocol-assignment"),
        ("192.0.0.255", "protocol-assignment"),
        ("192.0.1.0", None),
        ("192.0.2.0", "documentation"),
        ("192.0.2.255", "documentation"),
        ("192.0.3.0", None),
        ("192.88.98.255", None),
        ("192.88.99.1", "reserved"),
        ("192.88.100.0", None),
        ("192.167.255.255", None),
        ("192.168.0.0", "private"),
        ("192.168.255.255", "private"),
        ("192.169.0.0", None),
        ("198.17.255.255", None),
        ("198.18.0.0", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("198.20.0.0", None),
        ("198.51.99.255", None),
        ("198.51.100.0", "documentation"),
        ("198.51.100.255", "documentation"),
        ("198.51.101.0", None),
        ("203.0.112.255", None),
        ("203.0.113.0", "documentation"),
        ("203.0.113.255", "documentation"),
        ("203.0.114.0", None),
        ("223.255.255.255", None),
        ("224.0.0.0", "multicast"),
        ("239.255.255.255", "multicast"),
        ("240.0.0.0", "reserved"),
        ("255.255.255.254", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("93.184.216.34", None),
        # IPv6
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::2", "this-network"),  # IPv4-compatible 0.0.0.2
        ("1::", "not-global-unicast"),
        ("100::", "not-global-unicast"),  # discard-only
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "not-global-unicast"),
        ("2000::", None),
        ("2001::", "protocol-assignment"),  # Teredo
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "protocol-assignment"),
        ("2001:2::1", "protocol-assignment"),  # benchmarking
        ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "protocol-assignment"),
        ("2001:200::", None),
        ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", None),
        ("2001:db8::", "documentation"),
        ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"),
        ("2001:db9::", None),
        ("2606:4700:4700::1111", None),
        ("2a00:1450:4001:82a::200e", None),
        ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
        ("3fff::", "documentation"),
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"),
        ("3fff:1000::", None),
        ("3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
        ("4000::", "not-global-unicast"),
        ("5f00::1", "not-global-unicast"),
        ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "not-global-unicast"),
        ("fc00::", "unique-local"),
        ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local"),
        ("fe00::", "not-global-unicast"),
        ("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "not-global-unicast"),
        ("fe80::", "link-local"),
        ("fe80::1", "link-local"),
        ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"),
        ("fec0::", "site-local"),
        ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local"),
        ("ff00::", "multicast"),
        ("ff02::1", "multicast"),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"),
    ],
)
def test_edges_spelled_out(address: str, reason: str | None) -> None:
    assert GUARD.check_ip(address) == reason
    assert GUARD.check_ip(ip_address(address)) == reason
    assert GUARD.is_allowed_ip(address) is (reason is None)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        # IPv4-mapped ::ffff:0:0/96
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:7f00:1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:0.0.0.0", "unspecified"),
        ("::ffff:8.8.8.8", None),
        ("::fffe:ffff:ffff", "not-global-unicast"),  # just below the mapped range
        ("::1:0:0", "not-global-unicast"),  # just above the IPv4-compatible range
        ("::1:0:0:0", "not-global-unicast"),  # just above the mapped range
        # IPv4-compatible ::/96 (deprecated)
        ("::127.0.0.1", "loopback"),
        ("::10.0.0.1", "private"),
        ("::8.8.8.8", None),
        ("::ffff", "this-network"),
        # NAT64 64:ff9b::/96
        ("64:ff9b::808:808", None),
        ("64:ff9b::8.8.8.8", None),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("64:ff9b::c0a8:1", "private"),
        ("64:ff9b::", "unspecified"),
        ("64:ff9b::1:0:0", "not-global-unicast"),  # outside the /96
        ("64:ff9b:1::1", "not-global-unicast"),  # local-use NAT64 prefix
        # 6to4 2002::/16: bits 16..48 carry the IPv4 address
        ("2002:7f00:1::", "loopback"),
        ("2002:7f00:1::1", "loopback"),
        ("2002:a00:1::", "private"),
        ("2002:c0a8:101::1", "private"),
        ("2002:a9fe:a9fe::", "link-local"),
        ("2002:808:808::1", None),
        ("2002::", "unspecified"),
        ("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
        ("2003::", None),
    ],
)
def test_embedded_ipv4_is_judged_by_what_it_embeds(address: str, reason: str | None) -> None:
    assert GUARD.check_ip(address) == reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[::1]", "loopback"),
        (" 127.0.0.1 ", "loopback"),
        ("fe80::1%eth0", "link-local"),
        ("[fe80::1%25eth0]", "link-local"),
        ("", "invalid-address"),
        ("localhost", "invalid-address"),
        ("127.1", "invalid-address"),  # check_ip takes resolved addresses only
        ("0177.0.0.1", "invalid-address"),
        ("1.2.3.4.5", "invalid-address"),
        ("::g", "invalid-address"),
        ("\x00", "invalid-address"),
    ],
)
def test_check_ip_text_forms(text: str, reason: str) -> None:
    assert GUARD.check_ip(text) == reason


def test_allow_networks_open_exactly_what_they_name() -> None:
    guard = AddressGuard(allow_networks=[IPv4Network("127.0.0.0/8"), IPv6Network("fd00::/8")])
    assert guard.check_ip("127.0.0.1") is None
    assert guard.check_ip("127.255.255.255") is None
    assert guard.check_ip("::ffff:127.0.0.1") is None  # the connection goes to 127.0.0.1
    assert guard.check_ip("fd12::1") is None
    assert guard.check_ip("128.0.0.0") is None
    assert guard.check_ip("10.0.0.1") == "private"
    assert guard.check_ip("::1") == "loopback"
    assert guard.check_ip("fc00::1") == "unique-local"
    assert guard.check_ip("169.254.169.254") == "link-local"
    assert guard.check_host("localhost") is None
    assert guard.check_url("http://0x7f.1/") is None
    assert guard.allow_networks == (IPv4Network("127.0.0.0/8"), IPv6Network("fd00::/8"))


def test_allow_network_can_open_a_single_address() -> None:
    guard = AddressGuard(allow_networks=[IPv4Network("192.168.1.10/32")])
    assert guard.check_ip("192.168.1.10") is None
    assert guard.check_ip("192.168.1.11") == "private"


def test_default_guard_blocks_localhost_names() -> None:
    assert GUARD.check_host("localhost") == "loopback"


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("2130706433", "loopback"),
        ("0x7f.1", "loopback"),
        ("0x7F000001", "loopback"),
        ("0177.0.0.1", "loopback"),
        ("127.1", "loopback"),
        ("127.0.0.1.", "loopback"),
        ("%31%32%37.0.0.1", "loopback"),
        ("0", "unspecified"),
        ("0x0a.0.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("[::1]", "loopback"),
        ("[::ffff:7f00:1]", "loopback"),
        ("[::ffff:127.0.0.1]", "loopback"),
        ("::1", "loopback"),
        ("[2002:7f00:1::]", "loopback"),
        ("[64:ff9b::808:808]", None),
        ("8.8.8.8", None),
        ("134744072", None),  # 8.8.8.8
        ("localhost", "loopback"),
        ("LOCALHOST", "loopback"),
        ("localhost.", "loopback"),
        ("api.localhost", "loopback"),
        ("ｌｏｃａｌｈｏｓｔ", "loopback"),
        ("a.example", None),
        ("localhost.example", None),
        ("127.0.0.1.nip.io", None),
        ("xn--fa-hia.de", None),
        ("", "invalid-host"),
        ("a b", "invalid-host"),
        ("a.example:80", "invalid-host"),
        ("a.example/x", "invalid-host"),
        ("user@127.0.0.1", "invalid-host"),
        ("[::1", "invalid-host"),
        ("256.0.0.1", "invalid-host"),
        ("xn--zz", "invalid-host"),
    ],
)
def test_check_host(host: str, reason: str | None) -> None:
    assert GUARD.check_host(host) == reason


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://2130706433/", "loopback"),
        ("http://0x7f.1/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://[::ffff:7f00:1]/", "loopback"),
        ("https://[::1]:8443/x", "loopback"),
        ("http://user:pw@127.0.0.1:8080/", "loopback"),
        ("http://a.example@127.0.0.1/", "loopback"),
        ("http://127.0.0.1\\@a.example/", "loopback"),
        ("HTTP://LOCALHOST:8000/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fd00::1]/", "unique-local"),
        ("http://10.0.0.1./", "private"),
        ("https://a.example/", None),
        ("https://8.8.8.8/", None),
        ("ftp://127.0.0.1/", "unsupported-scheme"),
        ("file:///etc/passwd", "unsupported-scheme"),
        ("http://", "invalid-url"),
        ("not a url", "invalid-url"),
    ],
)
def test_check_url_reads_hosts_as_whatwg_does(url: str, reason: str | None) -> None:
    assert GUARD.check_url(url) == reason


def test_read_host_and_helpers() -> None:
    assert read_host("0x7f.1") == IPv4Address("127.0.0.1")
    assert read_host("[::1]") == IPv6Address("::1")
    assert read_host("Faß.DE.") == "xn--fa-hia.de"
    assert read_host("a.example:8080") is None
    assert url_host("https://A.example:8443/x") == "a.example"
    assert url_host("mailto:x@y") == ""
    assert url_host("nope") is None
    assert is_localhost("Foo.LocalHost.")
    assert not is_localhost("localhost.example")


@given(st.text())
def test_guard_never_raises(text: str) -> None:
    for result in (
        GUARD.check_ip(text),
        GUARD.check_host(text),
        GUARD.check_url(text),
        GUARD.check_url("http://" + text),
        GUARD.check_host("[" + text + "]"),
    ):
        assert result is None or isinstance(result, str)
    read_host(text)


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_ipv4_address_reads_the_same_in_every_spelling(value: int) -> None:
    address = IPv4Address(value)
    expected = GUARD.check_ip(address)
    assert GUARD.check_host(str(value)) == expected
    assert GUARD.check_host(hex(value)) == expected
    assert GUARD.check_ip(f"::ffff:{address}") == expected
    assert GUARD.check_host(f"[64:ff9b::{address}]") == expected


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_any_ipv6_address_gets_an_answer(value: int) -> None:
    address = IPv6Address(value)
    reason = GUARD.check_ip(address)
    assert GUARD.check_host(f"[{address}]") == reason
    if reason is None:
        assert (
            address in IPv6Network("2000::/3")
            or address.ipv4_mapped is not None
            or (address in IPv6Network("64:ff9b::/96") or address in IPv6Network("::/96"))
        )
