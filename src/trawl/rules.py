"""Path patterns shared by robots.txt and TDMRep: one normal form, one matcher.

Pure functions over strings (RFC 9309 section 2.2.2/2.2.3): a rule path and a request
target are put in the same normal form (percent-escapes of unreserved characters
decoded, other escapes in upper-case hex, raw bytes that may not stand in a URI
escaped), then matched from the first octet with ``*`` and a final ``$``.
"""

from __future__ import annotations

import re

__all__ = [
    "fix_escape",
    "glob_matches",
    "normalize_rule",
    "pattern_octets",
    "request_target",
    "split_pattern",
]

# A percent-escape, or one byte outside the characters a URI may hold unescaped
# (unreserved + reserved). In rules ``*`` and ``$`` keep their special meaning.
_RULE_TOKENS = re.compile(rb"%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

_URL_TOKENS = re.compile(rb"%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~!&'()+,;=:@/?\[\]]")
# Scheme and authority (or a bare host, as Google's parser reads ``h/p``), then the run
# of target characters that are already in normal form, then what stopped the run.
_TARGET = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|//)?[^/?#]*([A-Za-z0-9\-._~!&'()+,;=:@/?\[\]]*)([^#]?)",
    re.DOTALL,
)


def fix_escape(match: re.Match[bytes]) -> bytes:
    """Normalise one token of ``_RULE_TOKENS`` (or of ``_URL_TOKENS`` in a request target).

    ``%XX`` of an unreserved character is decoded (``%7E`` -> ``~``), any other escape
    gets upper-case hex (``%2f`` -> ``%2F``, which stays distinct from ``/``), and a raw
    byte that may not stand in a URI is escaped (UTF-8 octets, space, a stray ``%``).
    """
    token = match.group()
    if len(token) == 3:
        byte = int(token[1:], 16)
        return bytes((byte,)) if byte in _UNRESERVED else token.upper()
    return b"%%%02X" % token[0]


def normalize_rule(value: bytes) -> str:
    """The normal form of a rule path: what gets matched and whose length ranks it.

    A path that starts with neither ``/`` nor ``*`` gets a ``/`` in front, as Google
    documents (``fish/`` is read as ``/fish/``; Protego does the same). Note that
    Google's open-source C++ parser does not: there such a rule never matches. Reading
    it as a path honours the site owner's evident intent and errs towards not crawling.
    """
    if not value:
        return ""
    if value[:1] not in (b"/", b"*"):
        value = b"/" + value
    return _RULE_TOKENS.sub(fix_escape, value).decode("ascii")


def request_target(url_or_path: str) -> str:
    """The normalised ``path?query`` of a URL, or of a path, always starting with ``/``.

    ``http://h/p?q#f`` -> ``/p?q``; ``/p`` -> ``/p``; ``//h/p`` (a network-path reference)
    -> ``/p``; ``h/p`` -> ``/p`` (as Google's parser reads it); ``h``, ``""`` -> ``/``;
    ``?q`` -> ``/?q``.
    """
    found = _TARGET.match(url_or_path)
    if found is None:  # cannot happen: every part of _TARGET is optional
        return "/"
    target, stop = found.group(1, 2)
    if stop:  # a character that needs normalising: take the rest up to the fragment
        begin = found.start(1)
        hash_at = url_or_path.find("#", begin)
        target = url_or_path[begin : hash_at if hash_at >= 0 else len(url_or_path)]
        target = _URL_TOKENS.sub(fix_escape, target.encode("utf-8", "surrogatepass"))
        target = target.decode("ascii")
    return target if target[:1] == "/" else "/" + target


def split_pattern(pattern: str) -> tuple[list[str], bool]:
    """A rule pattern as literal segments between wildcards, and whether ``$`` ends it."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    return body.replace("$", "%24").split("*"), anchored


def pattern_octets(pattern: str) -> int:
    """A rule's specificity: the octets of its normal form as matched (RFC 9309 2.2.2).

    A ``$`` inside the pattern is a literal, a reserved character compared percent-encoded,
    so it counts as the three octets of ``%24`` (``/$a`` and ``/%24a`` are one path, equally
    specific); ``*`` and a final ``$`` count one each, as Google counts.
    """
    return len(pattern) + 2 * pattern.count("$", 0, len(pattern) - 1)


def glob_matches(pattern: str, target: str) -> bool:
    """Whether ``pattern`` (normal form) matches ``target`` from its first octet."""
    segments, anchored = split_pattern(pattern)
    head = segments[0]
    if not target.startswith(head):
        return False
    if len(segments) == 1:
        return len(target) == len(head) if anchored else True
    pos = len(head)
    for segment in segments[1:-1]:
        found = target.find(segment, pos)
        if found < 0:
            return False
        pos = found + len(segment)
    last = segments[-1]
    if anchored:
        return len(target) - len(last) >= pos and target.endswith(last)
    return target.find(last, pos) >= 0
