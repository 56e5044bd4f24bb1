"""Reasons as stored: one line, bounded, whatever the web put in them.

A reason is often built from text a server sent (a bad status line, a header) or an
exception message that quotes it, so it may hold newlines, tabs, terminal escapes or
megabytes. Stores keep one printable line of at most ``MAX_REASON`` characters, so
listings (``trawl stats --urls``: one URL per line) and logs stay whole.
"""

from __future__ import annotations

import re

MAX_REASON = 300

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str | None, limit: int = MAX_REASON) -> str | None:
    """``text`` with every control character a space, spaces collapsed, cut to ``limit``."""
    if text is None:
        return None
    flat = " ".join(_UNPRINTABLE.sub(" ", text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "\u2026"
    return flat
