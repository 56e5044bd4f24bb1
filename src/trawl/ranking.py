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
"""

from __future__ import annotations

import math

__all__ = ["FLOOR", "SCALE", "importance_key", "raised_key", "score_of"]

SCALE = 1_000_000  # key units per e-fold of a score
FLOOR = 1e-30  # added to every importance: ln(0) would be -inf


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
