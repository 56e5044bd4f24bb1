"""MinHash signatures with LSH banding: the near-duplicate signature of a page's text.

Runs in the parse workers on every page, so it is built for speed and shares the
tokenising and shingle hashing of ``trawl.dedup.shingles`` (lower-cased words, each
shingle of ``shingle`` consecutive words hashed to 64 bits, duplicates dropped). Each
of the ``perms`` hash functions is ``a * x + b (mod 2^64)`` with a random odd ``a``:
a bijection of the shingle hashes, so its minimum picks a uniformly random shingle,
and two texts agree on one minimum with probability their Jaccard similarity. All
``perms`` minima come from numpy products (perms x a block of shingles, computed in
place in one scratch block that stays in the CPU's cache, each row reduced along its
contiguous axis: 2.3x less CPU than a fresh (shingles x perms) array per block); the
``a`` and ``b`` operands are whole (perms x block) arrays made once per process, not
broadcast columns: numpy's vectorised loops want contiguous operands (a broadcast
column takes its slower strided loop, 1.6x the CPU of the products). The top 32 bits
of each minimum are kept, so a signature is ``4 * perms`` bytes.

That numpy path is the fallback: ``_minhash.c``, built with the package where a C
compiler is at hand, makes the same signature in one native pass (the tokens hashed
with the same XXH3, the shingles made and the minima taken in registers, eight
permutations a step with AVX-512): 0.3 instead of 1.9 CPU-ms for a page of 42 KB of
text, the largest cost of a parse worker. Both paths are tested equal. numpy is
imported only when first needed: the default scheme's coefficients are written out
(``_coefficients.py``, what numpy derives; others are derived with numpy), the crawl
process hands them to its parse workers (``coefficients``, ``preset``), and verifies
candidates without it, so neither the crawl process nor a worker on the native path
loads it (some 16 to 20 MB of each one's memory).

LSH: the signature is cut into ``bands`` of ``rows`` values; two texts whose
similarity is ``s`` share at least one band with probability ``1 - (1 - s^rows)^bands``,
an S-curve around ``(1 / bands)^(1 / rows)``. Each band is hashed (xxh3, seeded with
the band number, so one key space serves every band) to a signed 64-bit key that fits
an SQLite INTEGER. Candidates sharing a band are then verified: the share of equal
values estimates their Jaccard similarity, which must reach ``threshold``.
Parameters were chosen with ``bench/bench_neardup.py``.
"""

from __future__ import annotations

import functools
import operator
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import xxhash

from trawl.dedup._coefficients import A as _DEFAULT_A
from trawl.dedup._coefficients import B as _DEFAULT_B
from trawl.dedup.shingles import shingle_hashes, token_bytes, tokens
from trawl.pickling import by_fields

try:
    from trawl import _native as _minhash
except ImportError:  # pragma: no cover - not built (no C compiler): the numpy path
    _minhash = None  # type: ignore[assignment]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MinHasher", "Signature", "preset"]

Signature = bytes
"""``perms`` little-endian uint32 minima."""

_xxh3 = xxhash.xxh3_64_intdigest  # the native path's hash of a token over 240 bytes
_CHUNK = 512  # shingles per product: a (perms x shingles) block of 512 KiB at 128 perms


def _signed(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


# (perms, seed) -> the native path's ``a`` and ``b``, native-endian uint64 bytes: the
# default scheme's written out, others derived (with numpy) or handed over by ``preset``.
_NATIVE: dict[tuple[int, int], tuple[bytes, bytes]] = {
    (len(_DEFAULT_A), 1): (
        struct.pack(f"={len(_DEFAULT_A)}Q", *_DEFAULT_A),
        struct.pack(f"={len(_DEFAULT_B)}Q", *_DEFAULT_B),
    )
}


def preset(coefficients: tuple[int, int, bytes, bytes]) -> None:
    """Take ``MinHasher.coefficients()`` made in another process: this one then signs
    without numpy."""
    perms, seed, a, b = coefficients
    if len(a) != 8 * perms or len(b) != 8 * perms:
        raise ValueError("coefficients of another length than their permutations")
    _NATIVE[(perms, seed)] = (a, b)


def _native_coefficients(perms: int, seed: int) -> tuple[bytes, bytes]:
    found = _NATIVE.get((perms, seed))
    if found is None:
        a, b = _coefficients(perms, seed)
        found = _NATIVE[(perms, seed)] = (a.tobytes(), b.tobytes())
    return found


@functools.cache
def _coefficients(perms: int, seed: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The ``a`` (odd) and ``b`` of each permutation; derived once per process."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, perms, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, perms, dtype=np.uint64)
    a.flags.writeable = b.flags.writeable = False  # shared by every hasher of these settings
    return a, b


@functools.cache
def _operands(perms: int, seed: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """``a`` and ``b`` repeated along a block of shingles, C-contiguous (perms x _CHUNK):
    1 MiB per process at 128 perms, made on first use."""
    import numpy as np

    a, b = _coefficients(perms, seed)
    whole = [np.ascontiguousarray(np.broadcast_to(v[:, None], (perms, _CHUNK))) for v in (a, b)]
    for v in whole:
        v.flags.writeable = False
    return whole[0], whole[1]


# It rides with every parse job to the workers: its settings only (the coefficients are
# derived again, once per worker).
@by_fields
@dataclass(frozen=True, slots=True)
class MinHasher:
    """The signature scheme: shingle size, permutations, banding, verification threshold."""

    shingle: int = 3
    perms: int = 128
    bands: int = 32
    threshold: float = 0.5
    seed: int = 1
    native: bool = field(default=True, repr=False, compare=False)  # False: numpy only

    def __post_init__(self) -> None:
        if self.perms < 1 or self.bands < 1 or self.perms % self.bands:
            raise ValueError("perms must be a positive multiple of bands")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError("threshold must be in (0, 1]")

    @property
    def rows(self) -> int:
        return self.perms // self.bands

    @property
    def signature_layout(self) -> str:
        """What signatures depend on (a change makes stored signatures incomparable)."""
        return f"shingle={self.shingle},perms={self.perms},seed={self.seed}"

    @property
    def layout(self) -> str:
        """What stored band keys depend on: the signatures and the band count."""
        return f"{self.signature_layout};bands={self.bands}"

    def signature(self, text: str) -> Signature | None:
        """The MinHash signature of ``text``; None for a text without words."""
        if self.native and _minhash is not None:
            ca, cb = _native_coefficients(self.perms, self.seed)
            return _minhash.signature(token_bytes(text), self.shingle, ca, cb, _xxh3)
        import numpy as np

        words = tokens(text)
        if not words:
            return None
        hashes = shingle_hashes(words, self.shingle)
        low = np.full(self.perms, np.iinfo(np.uint64).max, dtype=np.uint64)
        a, b = _operands(self.perms, self.seed)  # (perms x _CHUNK) each
        block = np.empty((self.perms, min(len(hashes), _CHUNK)), dtype=np.uint64)
        for start in range(0, len(hashes), _CHUNK):
            part = hashes[None, start : start + _CHUNK]
            n = part.shape[1]
            values = block[:, :n]
            np.multiply(a[:, :n], part, out=values)  # a * x + b (mod 2^64), in place
            np.add(values, b[:, :n], out=values)
            np.minimum(low, values.min(axis=1), out=low)
        return (low >> np.uint64(32)).astype("<u4").tobytes()

    def band_keys(self, signature: Signature) -> list[int]:
        """One signed 64-bit key per band (equal keys: equal values in that band)."""
        width = 4 * self.rows
        return [
            _signed(xxhash.xxh3_64_intdigest(signature[i * width : (i + 1) * width], seed=i))
            for i in range(self.bands)
        ]

    def coefficients(self) -> tuple[int, int, bytes, bytes]:
        """What ``preset`` takes: this scheme's permutations, for another process."""
        a, b = _native_coefficients(self.perms, self.seed)
        return self.perms, self.seed, a, b

    def similarity(self, a: Signature, b: Signature) -> float:
        """The estimated Jaccard similarity of the two texts' shingle sets."""
        return self.similarities(a, [b])[0]

    def similarities(self, query: Signature, stored: list[Signature]) -> list[float]:
        """``similarity(query, s)`` for every ``s`` in ``stored``: the share of equal
        minima (no numpy: a page has a few candidates, if any)."""
        width = 4 * self.perms
        if len(query) != width or any(len(s) != width for s in stored):
            raise ValueError(f"signatures of {width} bytes ({self.perms} minima) expected")
        q = memoryview(query).cast("I")  # equal or not: the byte order does not matter
        return [sum(map(operator.eq, q, memoryview(s).cast("I"))) / self.perms for s in stored]
