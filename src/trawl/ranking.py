"""Priority keys: a URL's score as the integer the frontier orders by, lower first.

A score is a positive float, higher first: in OPIC order (``frontier/priority.py``)
the URL's importance (the OPIC cash it received, ``cash + history``) times factors
for its depth, its host's quality and its change history. The frontier stores
``key = -round(SCALE * ln(score))``, an integer (a SQLite index, a Redis sorted set
and a heap all order it exactly), with ``SCALE`` key units per e-fold of the score,
so a millionth of a score's size still orders. In depth order the key is the depth.

Because the factors multiply, a key moves without knowing them: a URL whose
importance grows from ``I`` to ``I + gain`` (a new in-link) gets
``key - SCALE * ln((I + gain) / I)`` (``raised_key``), which every backend computes
from what the URL's record holds. ``FLOOR`` keeps the logarithm finite for a URL
that received nothing yet.

A URL admitted as a probable spelling of another (``frontier/admission.py``) is
*deferred*: its key is moved into a band of its own, ``DEFERRED`` above every key a
score can have (``deferred_key``), so it goes after every other URL of its host, in
the same order among the deferred ones; an in-link still raises it within the band.
It is stored like that, so a resume finds it where it was. A revisit takes it back out
of the band (``undeferred``: every backend's ``Frontier.revisit``): a page fetched
once is never deferred again.
"""

from __future__ import annotations

import math

__all__ = [
    "DEFERRED",
    "FLOOR",
    "SCALE",
    "deferred_key",
    "importance_key",
    "is_deferred",
    "raised_key",
    "score_of",
    "undeferred",
]

SCALE = 1_000_000  # key units per e-fold of a score
FLOOR = 1e-30  # added to every importance: ln(0) would be -inf
# A deferred URL's key is its own plus this: 2**40, far above any score's key (a score
# of FLOOR is 69 * SCALE; the depth order's keys are depths), far below 2**53 (a Redis
# sorted set's double and the Lua scripts' numbers hold every integer key exactly).
DEFERRED = 1 << 40


def importance_key(importance: float) -> int:
    """The key part of an importance (cash received): ``-SCALE * ln(importance + FLOOR)``."""
    return -_round(math.log(max(0.0, importance) + FLOOR) * SCALE)


def score_of(key: int) -> float:
    """The score a key stands for (for people: ``trawl stats``, tests)."""
    return math.exp(-key / SCALE)


def raised_key(key: int, importance: float, gain: float) -> int:
    """The key of a URL whose importance grows by ``gain`` (other factors unchanged)."""
    if not gain > 0:
        return key
    return key - _round(math.log1p(gain / (max(0.0, importance) + FLOOR)) * SCALE)


def _round(x: float) -> int:
    """Half up, as the Redis frontier's Lua rounds (``math.floor(x + 0.5)``)."""
    return math.floor(x + 0.5)


def deferred_key(key: int) -> int:
    """``key`` moved into the deferred band (after every key outside it)."""
    return key if is_deferred(key) else key + DEFERRED


def is_deferred(key: int) -> bool:
    """Whether ``key`` is in the deferred band (half of ``DEFERRED`` is the border: an
    in-link's raise never brings a deferred key that far down)."""
    return key >= DEFERRED // 2


def undeferred(key: int) -> int:
    """``key`` out of the deferred band (itself when it is not in it)."""
    return key - DEFERRED if is_deferred(key) else key
