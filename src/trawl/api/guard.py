"""Whom ``trawl serve`` answers: the host names it serves, and off loopback a read token.

**Host names (DNS rebinding).** A page on ``evil.example`` can point its own name at
127.0.0.1; the browser then sends the page's requests to this server with ``Host:
evil.example`` and lets the page read the answers (same origin, as far as the browser
can tell). So the app answers only a request whose Host is one of its names: the
loopback names (``localhost``, ``127.0.0.1``, ``::1``), the address it is bound to, and
what the operator adds (``--allowed-host``; a leading dot, ``.example.org``, takes the
name and every name below it). Any other Host, or none, gets 421. The port is not
compared: a rebinding page cannot make its requests carry one of our names, on any
port, and a proxy in front may change the port.

``*.localhost`` is not a default name. RFC 6761 reserves it for loopback and browsers
resolve it there themselves, but other resolvers may send such a name to DNS, where
whoever answers for the network decides; nothing in trawl uses the names, and an
operator who wants them adds ``--allowed-host .localhost``.

**Reads.** On a loopback bind only local programs reach the server and reads stay open.
Bound to any other address (or with ``--require-read-token``) every read needs a token
as well, except the package's own files (``/static/``, the dashboard's assets, the
OpenAPI document): the read token or the control token, as ``Authorization: Bearer``,
or as the password of HTTP Basic (any user name), which is what a browser's login
prompt sends, so the search page and the dashboard work in a browser. Basic carries
reads only: a browser replays it by itself, so a change of state always needs the
control token as a bearer header, which no other site can make the browser send.
"""

from __future__ import annotations

import binascii
import hmac
import ipaddress
import logging
import os
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import BasicAuth, hdrs, web
from aiohttp.typedefs import Middleware

from trawl.api._json import json_error

__all__ = [
    "HOST_ANSWER",
    "LOOPBACK_HOSTS",
    "READ_ANSWER",
    "READ_SECURITY",
    "READ_SECURITY_SCHEMES",
    "READ_TOKEN_FILE",
    "Guard",
    "HostAllowlist",
    "guard_middleware",
    "host_name",
    "is_loopback_bind",
    "is_public",
    "load_token",
    "token_matches",
]

log = logging.getLogger("trawl.api")

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
READ_TOKEN_FILE = "read-token"

_LABELS = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*")
_PORT = re.compile(r"[0-9]{1,5}")


def host_name(value: str) -> str | None:
    """The host name of a Host header (or an ``--allowed-host``), canonical; None if bad.

    Lower case, without the port, one trailing dot or IPv6 brackets; IP addresses in
    their short form (``[0:0::1]:8080`` is ``::1``).
    """
    text = value.strip().lower()
    if text.startswith("["):
        inner, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not (rest[0] == ":" and _PORT.fullmatch(rest[1:]))):
            return None
        try:
            return ipaddress.IPv6Address(inner).compressed
        except ValueError:
            return None
    if text.count(":") > 1:  # a bare IPv6 address (an --allowed-host written as ::1)
        try:
            return ipaddress.IPv6Address(text).compressed
        except ValueError:
            return None
    name, colon, port = text.partition(":")
    if colon and not _PORT.fullmatch(port):
        return None
    if name.endswith("."):
        name = name[:-1]
    try:
        return str(ipaddress.IPv4Address(name))
    except ValueError:
        pass
    return name if len(name) <= 253 and _LABELS.fullmatch(name) else None


def is_loopback_bind(bind: str) -> bool:
    """True if a server bound to ``bind`` is reachable from this machine only."""
    name = host_name(bind)
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name or "")
    except ValueError:
        return False  # another name, or a wildcard: it may be reachable from anywhere
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


class HostAllowlist:
    """The host names the app answers: exact names, and ``.suffix`` for a whole domain."""

    def __init__(self, names: Iterable[str]) -> None:
        exact: set[str] = set()
        suffixes: set[str] = set()
        for raw in names:
            domain = raw.strip().startswith(".")
            name = host_name(raw.strip().lstrip(".") if domain else raw)
            if name is None:
                raise ValueError(f"not a host name: {raw!r}")
            (suffixes if domain else exact).add(name)
        self.exact = frozenset(exact)
        self.suffixes = tuple(sorted(suffixes))

    @classmethod
    def for_bind(cls, bind: str, extra: Iterable[str] = ()) -> HostAllowlist:
        """The loopback names, ``bind`` (unless a wildcard such as 0.0.0.0) and ``extra``."""
        names = list(LOOPBACK_HOSTS)
        bound = host_name(bind)
        if bound is not None and bound not in ("0.0.0.0", "::"):
            names.append(bound)
        return cls([*names, *extra])

    def names(self) -> list[str]:
        """The names for people: exact ones, then ``.domain`` ones."""
        shown = [n for n in LOOPBACK_HOSTS if n in self.exact]
        shown += sorted(self.exact - set(LOOPBACK_HOSTS))
        return shown + [f".{s}" for s in self.suffixes]

    def allows(self, header: str | None) -> bool:
        """True if a request with this Host header is meant for us."""
        name = host_name(header) if header else None
        if name is None:
            return False
        if name in self.exact:
            return True
        return any(name == s or name.endswith("." + s) for s in self.suffixes)


def token_matches(authorization: str, tokens: Iterable[str], *, basic: bool) -> bool:
    """True if the Authorization header carries one of ``tokens`` (constant-time).

    A bearer token always counts; with ``basic`` the password of HTTP Basic does too.
    Empty tokens never match.
    """
    scheme, _, rest = authorization.strip().partition(" ")
    given: str | None = None
    if scheme.lower() == "bearer":
        given = rest.strip()
    elif basic and scheme.lower() == "basic":
        try:
            given = BasicAuth.decode(authorization.strip()).password
        except (ValueError, binascii.Error):
            return False
    if not given:
        return False
    found = False
    for token in tokens:  # every token is compared, so the time says nothing
        if token and hmac.compare_digest(given.encode(), token.encode()):
            found = True
    return found


@dataclass(frozen=True, slots=True)
class Guard:
    """What the app checks before any route: the Host, and (if set) the read token."""

    hosts: HostAllowlist = field(default_factory=lambda: HostAllowlist(LOOPBACK_HOSTS))
    read_token: str | None = None  # None: reads are open (a loopback bind)

    @property
    def reads_need_token(self) -> bool:
        return self.read_token is not None


def load_token(path: Path, given: str | None) -> tuple[str, bool]:
    """``given`` if set, else the token kept in ``path``, else a new one written there
    (mode 0600); and whether it is new."""
    if given:
        return given, False
    if path.exists():
        token = path.read_text().strip()
        if not token:
            raise ValueError(f"{path} is empty: delete it and a new token is made")
        return token, False
    token = secrets.token_urlsafe(32)
    # Written aside, then linked in place: a second server starting at the same moment
    # finds either no file or the whole token, never half of it, and takes the first.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        return path.read_text().strip(), False
    finally:
        tmp.unlink()
    return token, True


# -- the middleware and what the OpenAPI document says of it --------------------------

HOST_ANSWER = (
    "the request names no Host, or one this server does not answer for "
    "(a guard against DNS rebinding; trawl serve --allowed-host adds names)"
)
READ_ANSWER = (
    "this server needs a token for reads: Authorization: Bearer TOKEN (the read token or "
    "the control token), or in a browser the token as the password of the login prompt"
)
READ_SECURITY_SCHEMES: dict[str, Any] = {
    "readBearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "For reads: the read token (TRAWL_READ_TOKEN, else DATA/read-token, "
        "printed once) or the control token.",
    },
    "readBasic": {
        "type": "http",
        "scheme": "basic",
        "description": "For reads, from a browser: any user name, the read token (or the "
        "control token) as the password.",
    },
}
READ_SECURITY: list[dict[str, list[str]]] = [{"readBearer": []}, {"readBasic": []}]
_CHALLENGES = ('Basic realm="trawl", charset="UTF-8"', 'Bearer realm="trawl"')

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_public(path: str, public: Sequence[str]) -> bool:
    """True if ``path`` is one of ``public`` (an entry ending in ``/``: or below it)."""
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in public)


def guard_middleware(
    guard: Guard, *, public: Sequence[str], tokens: Callable[[], Iterable[str]]
) -> Middleware:
    """The app's first middleware: the Host check, then (if set) the read token.

    ``public`` paths need no token; ``tokens`` gives the other tokens that grant reads
    (the control token, once the service has loaded it).
    """

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get(hdrs.HOST)
        if not guard.hosts.allows(host):
            log.warning(
                "refused %s %s: Host %r is not a name this server answers for",
                request.method,
                request.path[:200],
                (host or "")[:100],
            )
            return json_error(421, HOST_ANSWER)
        if guard.read_token is not None and not is_public(request.path, public):
            given = request.headers.get(hdrs.AUTHORIZATION, "")
            if not token_matches(given, (guard.read_token, *tokens()), basic=True):
                response = json_error(401, READ_ANSWER)
                for challenge in _CHALLENGES:  # Basic: a browser asks for the token
                    response.headers.add(hdrs.WWW_AUTHENTICATE, challenge)
                return response
        return await handler(request)

    return check
