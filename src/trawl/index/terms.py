"""Which URLs and content hashes a volume may hold: a filter that spares closed volumes
their query.

A batch written to the open volume must replace the earlier copies of its pages in
the closed volumes (``volumes.py``). Asking each closed volume with a tantivy query of
the batch's every URL and content hash cost some 5 us a page per closed volume, a
cost that grew with the crawl (80 us a page at a million pages, 0.8 ms at ten). A
crawl mostly writes new pages, which no closed volume holds.

So each volume keeps, next to its segments, the 64-bit hashes of every URL and
content hash ever added to it (``TERMS_FILE``, appended before each commit, so a
crash leaves the file a superset of the volume, never less). A closed volume loads
them into a Bloom filter (24 bits and 16 probes a term: about 1 false "maybe" in
100,000; 3 bytes a term, some 380 KB a volume of 64,000 pages), and is queried for
only the terms the filter may hold: usually none. A volume without the file (written
by an older trawl) has no filter and is asked for every term, as before. Measured
(``bench/bench_index_retire.py``): 0.4 us a page per closed volume, from 4.6.

The open volume has a filter too (``OpenTerms``: the file's terms, and each batch's
added as it is appended), so that the writer deletes a document's earlier copy from it
only when it may hold one: a delete tantivy applies at the commit, to every segment of
the volume, and nearly always for nothing (a new page). Without them, the index
alone peaked at 82-84 MB rather than 94-98, flat as the volume grows; CPU the same
within the noise (``bench_index_writer.py``).
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path

import xxhash

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): the Python path
    _native = None  # type: ignore[assignment]

__all__ = [
    "TERMS_FILE",
    "OpenTerms",
    "TermFilter",
    "append_terms",
    "bloom_add",
    "bloom_test",
    "clear_terms",
    "hash_count",
    "repair_terms",
    "term_hashes",
]

TERMS_FILE = "trawl-terms.u64"
# A batch asks for some 470 terms (235 pages): at 24 bits and 16 probes a term, about
# 1 in 100,000 is a false "maybe", so some 1 batch in 200 queries a volume for naught.
_BITS_PER_TERM = 24
_PROBES = 16
_URL, _KEY = b"u\0", b"k\0"
_LEAST_OPEN = 16_384  # terms the open volume's filter is first made for, at least

Hashes = bytes
"""64-bit term hashes, little-endian, 8 bytes each: as the terms file holds them (no
numpy: the crawl process holds none, some 20 MB of RSS)."""


def hash_count(hashes: Hashes) -> int:
    """How many hashes ``hashes`` holds."""
    return len(hashes) // 8


def term_hashes(urls: Iterable[str], keys: Iterable[str]) -> Hashes:
    """The hashes of the ``url`` and ``key`` terms of some documents (urls first)."""
    h = xxhash.xxh64_intdigest
    out = [h(_URL + u.encode("utf-8", "surrogatepass")) for u in urls]
    out += [h(_KEY + k.encode("utf-8", "surrogatepass")) for k in keys]
    return struct.pack(f"<{len(out)}Q", *out)


def repair_terms(volume: Path) -> None:
    """Cut a write a crash left half done (before appending to the file again)."""
    path = volume / TERMS_FILE
    with contextlib.suppress(FileNotFoundError):
        size = path.stat().st_size
        if size % 8:
            os.truncate(path, size - size % 8)


def append_terms(volume: Path, hashes: Hashes) -> None:
    """Note ``hashes`` as held by ``volume`` (before its commit: the file may then hold
    more than the volume, never less; ``repair_terms`` first after a crash)."""
    with (volume / TERMS_FILE).open("ab") as f:
        f.write(hashes)
        f.flush()
        os.fsync(f.fileno())


def clear_terms(volume: Path) -> None:
    """The volume was emptied."""
    with contextlib.suppress(FileNotFoundError):
        (volume / TERMS_FILE).unlink()


def _probes(hashes: Hashes, size: int) -> Iterable[list[int]]:
    """The ``_PROBES`` bits of each hash (double hashing) in a filter of ``size`` bits:
    csrc/bloom.c's, for the Python path."""
    for h in struct.unpack(f"<{hash_count(hashes)}Q", hashes):
        low, step = h & 0xFFFFFFFF, (h >> 32) | 1
        yield [(low + p * step) % size for p in range(_PROBES)]


def bloom_add(bits: bytearray, hashes: Hashes, *, native: bool = True) -> None:
    """Set the bits of ``hashes`` in ``bits`` (bit k: bit k & 7 of byte k >> 3)."""
    if native and _native is not None:
        _native.bloom_add(bits, hashes, _PROBES)
        return
    for at in _probes(hashes, 8 * len(bits)):
        for k in at:
            bits[k >> 3] |= 1 << (k & 7)


def bloom_test(bits: bytearray, hashes: Hashes, *, native: bool = True) -> bytes:
    """One byte a hash: 1 if every bit of it is set in ``bits``, else 0."""
    if native and _native is not None:
        return _native.bloom_test(bits, hashes, _PROBES)
    return bytes(
        all(bits[k >> 3] >> (k & 7) & 1 for k in at) for at in _probes(hashes, 8 * len(bits))
    )


class TermFilter:
    """A Bloom filter of a volume's terms (``load``: None without the file), made for
    ``capacity`` terms (at least those given): more may be added, at a higher rate of
    false "maybe"s."""

    def __init__(self, hashes: Hashes, *, capacity: int = 0) -> None:
        self.capacity = max(1, hash_count(hashes), capacity)
        words = (self.capacity * _BITS_PER_TERM + 63) // 64
        self._bits = bytearray(8 * words)
        self.count = 0
        self.add(hashes)

    def add(self, hashes: Hashes) -> None:
        bloom_add(self._bits, hashes)
        self.count += hash_count(hashes)

    @classmethod
    def load(cls, volume: Path) -> TermFilter | None:
        hashes = _held(volume)
        return None if hashes is None else cls(hashes)

    @property
    def nbytes(self) -> int:
        return len(self._bits)

    def may_hold(self, hashes: Hashes) -> Sequence[int]:
        """For each hash, whether the volume may hold its term (0: it does not)."""
        return bloom_test(self._bits, hashes)


class OpenTerms:
    """The terms of the volume being written (its terms file, and each batch's as it is
    appended): which documents may replace a copy the volume holds. The filter is made
    for twice the terms held (``expected`` at least: the volume's size) and made again
    from the file, twice as large, once they outgrow it."""

    def __init__(self, volume: Path, *, expected: int = 0) -> None:
        self._volume = volume
        self._expected = max(_LEAST_OPEN, expected)
        self._unfiled: list[Hashes] = []  # added, not in the file (a batch that failed)
        self._filter = self._made()

    def _made(self) -> TermFilter:
        held = _held(self._volume)
        hashes = b"".join([held or b"", *self._unfiled])
        return TermFilter(hashes, capacity=max(self._expected, 2 * hash_count(hashes)))

    def may_hold(self, url: str, key: str) -> bool:
        """Whether the volume may hold a document of this URL or content hash."""
        return any(self._filter.may_hold(term_hashes((url,), (key,))))

    def add(self, hashes: Hashes, *, filed: bool = True) -> None:
        """``hashes`` were appended to the volume's terms file (``append_terms``), or
        (``filed=False``) are held by documents added but not committed: a batch that
        failed, whose documents a later commit makes live."""
        if not filed:
            self._unfiled.append(hashes)
        if self._filter.count + hash_count(hashes) > self._filter.capacity:
            self._filter = self._made()  # the file holds them now (or _unfiled)
        else:
            self._filter.add(hashes)

    @property
    def nbytes(self) -> int:
        return self._filter.nbytes


def _held(volume: Path) -> Hashes | None:
    """The hashes of a volume's terms file (None: it has none)."""
    try:
        data = (volume / TERMS_FILE).read_bytes()
    except FileNotFoundError:
        return None
    return data[: len(data) - len(data) % 8]  # a write cut by a crash: its whole hashes
