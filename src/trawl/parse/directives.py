"""Page-level robots directives: ``<meta name=robots>`` and ``X-Robots-Tag``.

Both carry comma-separated directives (``noindex``, ``nofollow``, ``none``, ``noai``,
...), either for every crawler or for a named one (``<meta name="GPTBot">``,
``X-Robots-Tag: GPTBot: noindex``). A crawl honours the generic ones and those
addressed to any of its product tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Directives a value may carry; anything else in a value is ignored.
_KNOWN = frozenset(
    {
        "all",
        "none",
        "noindex",
        "nofollow",
        "noarchive",
        "nosnippet",
        "noimageindex",
        "noai",
        "noimageai",
        "notranslate",
        "index",
        "follow",
    }
)

# Directives that take a value after a colon: a leading one is not an agent name.
_VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})


def _directives(value: str) -> set[str]:
    out: set[str] = set()
    for part in value.replace(";", ",").split(","):
        token = part.strip().lower()
        if not token:
            continue
        # Values such as "max-snippet:20" or "unavailable_after: date" keep only the name.
        name = token.split(":", 1)[0].strip()
        if name in _KNOWN:
            out.add(name)
    if "none" in out:
        out |= {"noindex", "nofollow"}
    return out


def from_meta(metas: Iterable[tuple[str, str]], agents: Sequence[str]) -> set[str]:
    """Directives from ``(name, content)`` pairs of ``<meta>`` tags that apply to us."""
    wanted = {"robots", *(a.lower() for a in agents)}
    out: set[str] = set()
    for name, content in metas:
        if name.strip().lower() in wanted:
            out |= _directives(content)
    return out


def from_header(values: Iterable[str], agents: Sequence[str]) -> set[str]:
    """Directives from ``X-Robots-Tag`` header values that apply to us.

    A value either starts with ``agent:`` (it then applies to that agent only) or is
    generic. A leading word followed by a colon that is itself a directive (such as
    ``unavailable_after:``) is not an agent name.
    """
    wanted = {a.lower() for a in agents}
    out: set[str] = set()
    for value in values:
        head, sep, rest = value.partition(":")
        name = head.strip().lower()
        if sep and name and name not in _KNOWN and name not in _VALUED and " " not in name:
            if name in wanted:
                out |= _directives(rest)
            continue
        out |= _directives(value)
    return out
