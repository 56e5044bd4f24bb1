"""`trawl url ...`: the URL normal form and the address guard from the command line.

Each command prints one answer on stdout and exits 0; bad input prints one line on
stderr and exits 2.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
import textwrap
from typing import Any

from trawl.errors import UrlError
from trawl.fetch.address import AddressGuard, IPNetwork, is_localhost, read_host, url_host
from trawl.urls import (
    TRACKING_PARAM_PREFIXES,
    TRACKING_PARAMS,
    fingerprint,
    join,
    normalize,
)

_USAGE_ERROR = 2
_LOOKUP_FAILED = 1


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``url`` command group and its subcommands."""
    parser = sub.add_parser(
        "url",
        help="URL normal form, joining, fingerprints and the address guard",
        description="URL helpers: normal form (RFC 3986 section 6), joining, "
        "fingerprints, and the SSRF address guard.",
    )
    commands = parser.add_subparsers(dest="url_command", metavar="SUBCOMMAND", required=True)

    normalize_parser = commands.add_parser(
        "normalize",
        help="print the normal form of a URL",
        description=textwrap.fill(
            "Print the normal form of an absolute http(s) URL, as the crawler admits it: "
            "RFC 3986 section 6 (lower-case scheme and host, no default port, dot segments "
            "removed, percent-encoding normalised, no fragment) with known tracking "
            "parameters dropped (--keep-tracking keeps them). A crawl then applies the "
            "host's learned equivalences (trawl stats --data DIR --host HOST shows them).",
            width=78,
        ),
        epilog=_tracking_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_strip_tracking(normalize_parser)
    normalize_parser.add_argument("url", metavar="URL")
    normalize_parser.set_defaults(handler=_normalize)

    join_parser = commands.add_parser(
        "join",
        help="resolve a link against its page URL and print the normal form",
        description="Resolve HREF against BASE (RFC 3986 section 5.2, as browsers do) "
        "and print the normal form.",
    )
    _add_strip_tracking(join_parser)
    join_parser.add_argument("base", metavar="BASE")
    join_parser.add_argument("href", metavar="HREF")
    join_parser.set_defaults(handler=_join)

    fingerprint_parser = commands.add_parser(
        "fingerprint",
        help="print the signed 64-bit fingerprint of a URL's normal form",
        description="Normalise URL and print its signed 64-bit fingerprint (decimal).",
    )
    _add_strip_tracking(fingerprint_parser)
    fingerprint_parser.add_argument("url", metavar="URL")
    fingerprint_parser.set_defaults(handler=_fingerprint)

    check_parser = commands.add_parser(
        "check-address",
        help="print whether the fetcher may contact a URL's host or an IP",
        description="Print 'allowed' or 'blocked' (the reason goes to stderr). A URL's "
        "host is read as browsers read it; a host name that is neither an IP literal "
        "nor localhost is resolved with the system resolver and blocked if any of its "
        "addresses is blocked. A bare IP (IPv6 with or without brackets) or host name "
        "is accepted too. Exits 1 if the name does not resolve.",
    )
    check_parser.add_argument(
        "--allow-network",
        metavar="CIDR",
        action="append",
        default=[],
        help="a network to allow even though it is private (repeatable), e.g. 127.0.0.0/8",
    )
    check_parser.add_argument(
        "target", metavar="URL_OR_IP", help="an http(s) URL, an IP address or a host name"
    )
    check_parser.set_defaults(handler=_check_address)


def _add_strip_tracking(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--keep-tracking",
        dest="strip_tracking",
        action="store_false",
        default=True,
        help="keep known tracking parameters (utm_*, gclid, fbclid, ...) in the query; "
        "by default they are dropped, as a crawl drops them",
    )
    group.add_argument(
        "--strip-tracking",
        dest="strip_tracking",
        action="store_true",
        help="drop them (the default)",
    )


def _tracking_epilog() -> str:
    """The tracking parameters, wrapped, for ``--help``."""
    names = sorted(TRACKING_PARAMS)
    prefixes = ", ".join(f"{p}*" for p in TRACKING_PARAM_PREFIXES)
    lines = textwrap.wrap(", ".join(names), width=78, break_on_hyphens=False)
    return (
        "Tracking parameters dropped (names compared case-insensitively):\n"
        f"  {prefixes}, and\n" + "\n".join("  " + line for line in lines)
    )


def _network(text: str) -> IPNetwork:
    """A CIDR network; host bits must be zero, so a typo cannot open more than meant."""
    return ipaddress.ip_network(text.strip().strip("[]"), strict=True)


def _fail(command: str, message: str, code: int = _USAGE_ERROR) -> int:
    print(f"trawl url {command}: {message}", file=sys.stderr)
    return code


def _normalize(args: argparse.Namespace) -> int:
    try:
        print(normalize(args.url, strip_tracking=args.strip_tracking))
    except UrlError as error:
        return _fail("normalize", str(error))
    return 0


def _join(args: argparse.Namespace) -> int:
    try:
        print(join(args.base, args.href, strip_tracking=args.strip_tracking))
    except UrlError as error:
        return _fail("join", str(error))
    return 0


def _fingerprint(args: argparse.Namespace) -> int:
    try:
        print(fingerprint(normalize(args.url, strip_tracking=args.strip_tracking)))
    except UrlError as error:
        return _fail("fingerprint", str(error))
    return 0


def _check_address(args: argparse.Namespace) -> int:
    try:
        networks = [_network(text) for text in args.allow_network]
    except ValueError as error:
        return _fail("check-address", f"--allow-network: not a network: {error}")
    guard = AddressGuard(allow_networks=networks)
    target: str = args.target.strip()
    host = target
    if "://" in target:
        url_hostname = url_host(target)
        if not url_hostname:
            problem = "not a valid URL" if url_hostname is None else "unsupported scheme"
            return _fail("check-address", f"{problem}: {target!r}")
        host = url_hostname
    value = read_host(host)
    if value is None:
        return _fail("check-address", f"not an IP address, host name or URL: {target!r}")
    reason = guard.check_host(host)
    if reason is None and isinstance(value, str) and not is_localhost(value):
        # A domain name: the fetcher checks every address it resolves to, so do the same.
        try:
            infos = socket.getaddrinfo(value, None, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as error:
            return _fail("check-address", f"cannot resolve {value}: {error}", _LOOKUP_FAILED)
        addresses = sorted({str(info[4][0]) for info in infos})
        if not addresses:
            return _fail("check-address", f"cannot resolve {value}: no address", _LOOKUP_FAILED)
        for address in addresses:
            blocked = guard.check_ip(address)
            if blocked is not None:
                reason = f"{value} resolves to {address}: {blocked}"
                break
    if reason is None:
        print("allowed")
    else:
        print("blocked")
        print(f"trawl url check-address: {reason}", file=sys.stderr)
    return 0
