"""URL normal form, joining, fingerprints and politeness keys.

Every link the parse stage finds goes through :func:`join` (or :func:`normalize`)
before it meets the URL-seen set, so this module sits on the hottest path of the
crawl. Parsing is the WHATWG URL Standard as implemented by ada (``can_ada``): that
is what browsers do with the links people write, so for http(s) a backslash is a
path separator, tabs, CR and LF anywhere are dropped, leading and trailing C0
controls and spaces are stripped, missing or extra slashes after the scheme are
tolerated (``http:a.example`` and ``http:///a.example`` are ``http://a.example/``),
and WHATWG IPv4 spellings (``0x7f.1``, ``2130706433``, ``0177.0.0.1``, ``127.1``)
become dotted decimal. The WHATWG result is then brought to the RFC 3986 section 6
normal form:

- scheme and host lower case, one trailing dot removed from the host, default and
  empty ports removed, empty path becomes ``/``, dot segments removed (also when
  written ``%2E``), IPv6 literals compressed as RFC 5952 says (an IPv4-mapped address
  is written in hex, ``[::ffff:102:304]``, as WHATWG serialises it);
- percent-encoding hex in upper case and escapes of unreserved characters
  (ALPHA DIGIT ``-._~``) decoded, in the userinfo, path and query; escapes of
  reserved characters are kept; characters RFC 3986 forbids in a path or query
  (``[ ] \\ ^ ` { | }``, spaces, controls, non-ASCII) are percent-encoded as UTF-8.
  In a query WHATWG also encodes ``'`` as ``%27``; that is kept;
- a stray ``%`` (not followed by two hex digits) is kept as a literal ``%``, not
  encoded as ``%25``; an escape of a hex digit right after a stray ``%`` stays encoded
  so that decoding it cannot forge a new escape (``%%34%31`` becomes ``%%341``, not
  ``%41``), which keeps the normal form idempotent;
- the userinfo is kept (an empty one, ``http://@a/``, is dropped as WHATWG does);
- the query keeps its order, its empty parameters and a bare ``?``; known tracking
  parameters (:data:`TRACKING_PARAMS`, :data:`TRACKING_PARAM_PREFIXES`) are removed
  on request (``strip_tracking=True``: what the crawler asks for unless a crawl keeps
  them), splitting the query on ``&`` only;
- the fragment is dropped; runs of slashes in the path are kept.

Hosts: IDNs go through UTS 46 non-transitional processing as WHATWG specifies it
(CheckBidi and CheckJoiners on, STD3 rules off, so ``a_b.example`` is accepted);
invalid punycode, disallowed code points and bidi or joiner violations are
``bad IDN``. On top of WHATWG, what DNS cannot carry is an error: an empty label
(``a..b``, ``.a``, two trailing dots), a label over 63 octets, a name over 253 octets
(``bad host``, or ``bad IDN`` for an over-long A-label), and port 0 (``bad port``).

Policies the standards leave open are documented where they are decided:
:func:`join` (scheme-only references), :func:`host_key` (the politeness key) and
:func:`fingerprint` (the signed 64-bit key).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import can_ada
import xxhash

from trawl.errors import UrlError

__all__ = [
    "TRACKING_PARAMS",
    "TRACKING_PARAM_PREFIXES",
    "fingerprint",
    "host_key",
    "join",
    "normalize",
    "without_tracking",
]

#: Query parameter names the crawler drops from every URL before the seen check (unless
#: a crawl keeps them: ``strip_tracking=False``, ``--keep-tracking``), compared
#: case-insensitively after percent-normalisation. Click identifiers and campaign tags
#: of ad, analytics, affiliate and mail platforms, from the lists browsers and blockers
#: strip (Firefox's query stripping, Brave's, ClearURLs). A name goes on this list only
#: when no site uses it to choose what a page shows: generic names such as ``ref``,
#: ``source``, ``campaign``, ``trk`` or ``si`` are left alone (a host's own
#: session and referrer parameters are learned per host instead, see
#: ``dedup/urlrules.py``).
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        # Google Ads, Analytics, Merchant Center, Search Ads 360
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "gad_source",
        "gad_campaignid",
        "_ga",
        "_gl",
        "srsltid",
        # Meta (Facebook, Instagram)
        "fbclid",
        "fb_action_ids",
        "fb_action_types",
        "igshid",
        "igsh",
        # Microsoft, Yandex, TikTok, X/Twitter, LinkedIn, Snapchat, Pinterest, Reddit
        "msclkid",
        "yclid",
        "ysclid",
        "_openstat",
        "ttclid",
        "twclid",
        "li_fat_id",
        "sccid",
        "epik",
        "rdt_cid",
        # Mailchimp, HubSpot, Marketo, Klaviyo, ConvertKit, MailerLite, Drip, Bronto,
        # Olytics (Omeda), Vero, Iterable, Wicked Reports, beehiiv
        "mc_cid",
        "mc_eid",
        "_hsenc",
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        "hsctatracking",
        "mkt_tok",
        "_kx",
        "ck_subscriber_id",
        "ml_subscriber",
        "ml_subscriber_hash",
        "__s",
        "_bta_tid",
        "_bta_c",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        "wickedid",
        "_bhlid",
        # Adobe Analytics, Webtrends, Matomo/Piwik campaigns, Branch
        "s_cid",
        "s_kwcid",
        "ef_id",
        "wt.mc_id",
        "wt_mc_id",
        "pk_campaign",
        "pk_kwd",
        "pk_keyword",
        "pk_source",
        "pk_medium",
        "pk_content",
        "pk_cid",
        "_branch_match_id",
        "_branch_referrer",
        # Affiliate networks: Rakuten, Impact, CJ, Awin, Partnerize
        "rb_clickid",
        "ranmid",
        "raneaid",
        "ransiteid",
        "irclickid",
        "irgwc",
        "cjevent",
        "cjdata",
        "awc",
        "clickref",
    }
)
#: Name prefixes dropped with them: the ``utm_*`` family (Google Analytics and every
#: tool that copied it), Matomo's ``mtm_*`` and HubSpot ads' ``hsa_*``.
TRACKING_PARAM_PREFIXES: tuple[str, ...] = ("utm_", "mtm_", "hsa_")

_HEX = "0123456789ABCDEFabcdef"
_HEX_DIGITS = frozenset(_HEX)
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# ada leaves these in a path or query; RFC 3986 allows none of them there.
_FORBIDDEN = "[]\\^`{|}"


def _replacements() -> dict[str, str]:
    """What each valid escape and each forbidden ASCII character becomes."""
    table: dict[str, str] = {}
    for high in _HEX:
        for low in _HEX:
            char = chr(int(high + low, 16))
            table[f"%{high}{low}"] = char if char in _UNRESERVED else f"%{high}{low}".upper()
    for char in _FORBIDDEN:
        table[char] = f"%{ord(char):02X}"
    return table


_REPLACE = _replacements()
_NEEDS_WORK = re.compile(r"[%\[\]\\^`{|}]")
_TOKEN = re.compile(r"%[0-9A-Fa-f]{2}|[\[\]\\^`{|}]")
_STRAY_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_TRACKING_HINT = re.compile(
    r"(?:^|&)(?:" + "|".join(re.escape(p) for p in TRACKING_PARAM_PREFIXES) + r"|"
    r"(?:" + "|".join(sorted(map(re.escape, TRACKING_PARAMS))) + r")(?:[=&]|$))",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_WHATWG_STRIP = "".join(map(chr, range(0x21)))
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_MAX_LABEL = 63
_MAX_HOST = 253


def normalize(url: str, *, strip_tracking: bool = False) -> str:
    """Return the normal form of the absolute http(s) URL ``url``.

    Raises :class:`~trawl.errors.UrlError` (and nothing else) when ``url`` has no
    scheme, a scheme other than http or https, an empty or invalid host, a bad port,
    an invalid IDN, or cannot be parsed at all.
    """
    try:
        parsed = can_ada.parse(url)
    except Exception:  # ValueError, or TypeError for lone surrogates
        raise _diagnose(url) from None
    try:
        return _normal_form(parsed, url, strip_tracking)
    except UrlError:
        raise
    except Exception as error:  # pragma: no cover - a safety net: only UrlError escapes
        raise UrlError("unparseable URL", url) from error


def join(base: str, href: str, *, strip_tracking: bool = False) -> str:
    """Resolve ``href`` against the page URL ``base`` and return the normal form.

    Resolution is RFC 3986 section 5.2 as refined by WHATWG: a reference that repeats
    the base's scheme without an authority (``http:g`` against an http base) is
    relative (RFC 3986's non-strict mode); a reference with the other special scheme
    (``https:g`` against an http base) gets that scheme and the base's authority and
    path, as browsers do. Raises :class:`~trawl.errors.UrlError` if ``base`` cannot be
    parsed or the result is not a crawlable http(s) URL.
    """
    try:
        base_url = _parse_base(base)
    except Exception:
        raise UrlError("bad base URL", base) from None
    try:
        parsed = base_url + href
    except Exception:
        raise _diagnose_reference(base, href) from None
    try:
        return _normal_form(parsed, href, strip_tracking)
    except UrlError:
        raise
    except Exception as error:  # pragma: no cover - a safety net: only UrlError escapes
        raise UrlError("unparseable URL", href) from error


def fingerprint(normal_url: str) -> int:
    """Return the 64-bit fingerprint of a normal-form URL as a signed int64.

    The fingerprint is XXH3-64 (seed 0) of the URL's UTF-8 bytes, its 64 bits read as
    a two's-complement integer, so it fits an SQLite INTEGER and equals what
    ``int64(xxh3_64(url))`` gives in any other language. Deterministic across
    processes and runs; the caller passes the normal form (this function does not
    normalise).
    """
    try:
        data = normal_url.encode()
    except UnicodeEncodeError:  # lone surrogates: not a normal form, but never raise
        data = normal_url.encode("utf-8", "surrogatepass")
    value: int = xxhash.xxh3_64_intdigest(data)
    return value - 0x10000000000000000 if value > 0x7FFFFFFFFFFFFFFF else value


def host_key(normal_url: str) -> str:
    """Return the politeness key of a normal-form URL: its host, plus ``:port`` if any.

    The key is the host name (lower case, A-labels; IPv6 in brackets) followed by
    ``:port`` only when the URL carries a non-default port. The scheme is not part of
    it: ``http://a.example/`` and ``https://a.example/`` are the same server and share
    one politeness queue, while ``http://a.example:8080/`` is a different service and
    gets its own. The argument must already be in normal form (see :func:`normalize`);
    raises :class:`~trawl.errors.UrlError` if it is not an http(s) URL with a host.
    """
    if normal_url.startswith("https://"):
        start = 8
    elif normal_url.startswith("http://"):
        start = 7
    else:
        raise UrlError("unsupported scheme", normal_url)
    end = normal_url.find("/", start)
    authority = normal_url[start:] if end < 0 else normal_url[start:end]
    authority = authority[authority.rfind("@") + 1 :]
    if not authority or authority[0] == ":":
        raise UrlError("empty host", normal_url)
    return authority


@functools.lru_cache(maxsize=256)
def _parse_base(base: str) -> Any:
    # The links of one page share its base: parse it once. ada URL objects are never
    # mutated here, so sharing a cached one is safe.
    return can_ada.parse(base)


def _normal_form(parsed: Any, url: str, strip_tracking: bool) -> str:
    """Bring an ada URL to normal form; ``url`` is only used in error messages."""
    href: str = parsed.href
    if href[:6] not in ("https:", "http:/"):
        raise UrlError("unsupported scheme", url)
    # ada's serialisation is already the normal form unless one of these shows up (a
    # false positive only costs time). In the authority: userinfo, a port (it may be
    # 0), an IPv6 literal, a trailing dot, an empty or over-long label.
    authority: str = parsed.host
    if ":" in authority or authority[-1] == "." or "@" in href or not parsed.has_valid_domain():
        href = _fix_authority(href, parsed.hostname, url)
    if "#" in href:
        href = href[: href.index("#")]  # ada percent-encodes "#" everywhere else
    # After the authority: escapes, and characters RFC 3986 forbids that ada leaves.
    if (
        "%" in href
        or "|" in href
        or "[" in href
        or "]" in href
        or "^" in href
        or "\\" in href
        or "`" in href
        or "{" in href
        or "}" in href
    ):
        slash = href.find("/", 8)  # the path, after "https://" or "http://x"
        if _NEEDS_WORK.search(href, slash) is not None:
            href = href[:slash] + _fix_percent(href[slash:])
    if strip_tracking and "?" in href:
        return _strip_tracking(href)
    return href


def _fix_authority(href: str, host: str, url: str) -> str:
    start = 8 if href[4] == "s" else 7
    slash = href.find("/", start)  # a special URL always has a path starting with /
    return href[:start] + _check_authority(host, href[start:slash], url) + href[slash:]


def _check_authority(host: str, authority: str, url: str) -> str:
    """Validate an unusual authority; drop one trailing dot; normalise the userinfo.

    WHATWG accepts empty labels, labels over 63 octets and port 0; DNS and TCP do not,
    so they are errors here.
    """
    at = authority.rfind("@") + 1
    userinfo, hostport = authority[:at], authority[at:]
    port = hostport[len(host) :]
    if port == ":0":
        raise UrlError("bad port", url)
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise UrlError("empty host", url)
    if host[0] != "[":
        if len(host) > _MAX_HOST:
            raise UrlError("bad host", url)
        for label in host.split("."):
            if not label:
                raise UrlError("bad host", url)
            if len(label) > _MAX_LABEL:
                raise UrlError("bad IDN" if label.startswith("xn--") else "bad host", url)
    if userinfo and _NEEDS_WORK.search(userinfo) is not None:
        userinfo = _fix_percent(userinfo)
    return userinfo + host + port


def _fix_percent(text: str) -> str:
    """Upper-case escape hex, decode unreserved escapes, encode forbidden characters."""
    if _STRAY_PCT.search(text) is None:
        return _TOKEN.sub(_replace_token, text)
    return _fix_percent_with_stray(text)


def _replace_token(match: re.Match[str]) -> str:
    return _REPLACE[match.group()]


def _fix_percent_with_stray(text: str) -> str:
    # A stray % is kept as it is; then decoding a hex digit right after it would turn
    # it into an escape on the next pass, so such an escape stays encoded.
    out: list[str] = []
    i = 0
    size = len(text)
    while i < size:
        char = text[i]
        if char == "%":
            token = text[i : i + 3]
            replacement = _REPLACE.get(token) if len(token) == 3 else None
            if replacement is None:
                out.append("%")
                i += 1
                continue
            if replacement in _HEX_DIGITS and (
                (out and out[-1] == "%")
                or (len(out) >= 2 and out[-2] == "%" and out[-1] in _HEX_DIGITS)
            ):
                replacement = token.upper()
            out.append(replacement)
            i += 3
            continue
        out.append(_REPLACE.get(char, char) if char in _FORBIDDEN else char)
        i += 1
    return "".join(out)


def without_tracking(url: str) -> str:
    """``url`` (already in normal form) without its tracking parameters.

    The same as ``normalize(url, strip_tracking=True)`` for a normal-form URL, without
    parsing it again: admission applies it to URLs that were normalised keeping them
    (a redirect target, a URL queued by an older version).
    """
    return _strip_tracking(url) if "?" in url else url


def _strip_tracking(href: str) -> str:
    """Remove tracking parameters from the query of a fragment-less ``href``."""
    question = href.find("?")  # ada percent-encodes "?" in the authority and path
    if question < 0:
        return href
    query = href[question + 1 :]
    if _TRACKING_HINT.search(query) is None:
        return href
    kept = [param for param in query.split("&") if not _is_tracking(param)]
    if kept == [] or kept == [""]:
        return href[:question]  # stripping emptied the query: drop the "?"
    return href[: question + 1] + "&".join(kept)


def _is_tracking(param: str) -> bool:
    name = param.partition("=")[0].lower()
    return name in TRACKING_PARAMS or name.startswith(TRACKING_PARAM_PREFIXES)


def _diagnose_reference(base: str, href: str) -> UrlError:
    """Name what is wrong with a reference that ada could not resolve against base."""
    error = _diagnose(href)
    if error.reason == "no scheme":
        scheme = _SCHEME.match(base.strip(_WHATWG_STRIP))
        if scheme is not None:
            prefixed = _diagnose(scheme.group() + href.strip(_WHATWG_STRIP))
            if prefixed.reason != "unparseable URL":
                return UrlError(prefixed.reason, href)
        return UrlError("unparseable URL", href)
    return error


def _diagnose(url: str) -> UrlError:
    """Name what is wrong with a URL that ada rejected (slow path, errors only)."""
    if not isinstance(url, str):
        return UrlError("not a string", repr(url))
    try:
        return _diagnose_text(url)
    except Exception:  # pragma: no cover - a safety net: diagnosing must not raise
        return UrlError("unparseable URL", url)


def _diagnose_text(url: str) -> UrlError:
    text = url.strip(_WHATWG_STRIP).translate(_TAB_NEWLINE)
    scheme_match = _SCHEME.match(text)
    if scheme_match is None:
        return UrlError("no scheme", url)
    scheme = scheme_match.group()[:-1].lower()
    if scheme not in ("http", "https"):
        return UrlError("unsupported scheme", url)
    rest = text[scheme_match.end() :].lstrip("/\\")
    authority = re.split(r"[/\\?#]", rest, maxsplit=1)[0]
    hostport = authority[authority.rfind("@") + 1 :]
    if hostport.startswith("["):
        close = hostport.find("]")
        host, port = (hostport, "") if close < 0 else (hostport[: close + 1], hostport[close + 1 :])
        port = port[1:] if port.startswith(":") else port
    else:
        host, _, port = hostport.partition(":")
    digits = port.lstrip("0")
    if port and (
        not port.isascii() or not port.isdigit() or len(digits) > 5 or int(digits or 0) > 65535
    ):
        return UrlError("bad port", url)
    if not host:
        return UrlError("empty host", url)
    if not host.isascii() or "xn--" in host.lower():
        return UrlError("bad IDN", url)
    try:
        can_ada.parse(f"{scheme}://{host}/")
    except Exception:
        return UrlError("bad host", url)
    return UrlError("unparseable URL", url)
