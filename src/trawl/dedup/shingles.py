"""Word tokens and shingle hashes of a page's main text (near duplicates, quality).

Runs in the parse workers on every page, so it is built for speed. The text is lower
cased, encoded once to UTF-8, and split into word tokens on whitespace and
punctuation (ASCII punctuation through one ``bytes.translate``; the common Unicode
quotes, dashes and spaces through one byte regex). Each token is hashed with xxh3_64;
a shingle of ``size`` consecutive tokens gets the hash of its words rotated by their
position, XORed and passed through the murmur3 finaliser (``fmix64``), all in numpy
(imported when first needed: a parse worker with ``trawl._native`` built makes its
shingles in C and never loads numpy, some 16 MB of its memory).
"""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING

import xxhash

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["shingle_hashes", "token_bytes", "tokens", "unicode_token_bytes"]

_xxh3 = xxhash.xxh3_64_intdigest

# ASCII punctuation and control characters become spaces; bytes >= 0x80 stay (UTF-8).
_ASCII_TABLE = bytes(
    0x20 if (chr(i) in string.punctuation or i < 0x20 or i == 0x7F) else i for i in range(128)
) + bytes(range(128, 256))
# The same, ASCII letters lower-cased as well: what ``str.lower`` does to ASCII text.
_ASCII_LOWER_TABLE = _ASCII_TABLE.translate(
    bytes.maketrans(string.ascii_uppercase.encode(), string.ascii_lowercase.encode())
)
# Unicode punctuation and spaces common in web text, as UTF-8 byte sequences.
_UNICODE_SEPARATORS = re.compile(
    b"|".join(
        re.escape(c.encode())
        for c in "\u2018\u2019\u201a\u201c\u201d\u201e\u2013\u2014\u2015\u2026\u00ab\u00bb"
        "\u2039\u203a\u00a0\u2002\u2003\u2009\u200a\u200b\u202f\u3000\u3001\u3002\uff0c"
        "\u00b7\u2022\u00a1\u00bf"
    )
)

_M1 = 0xFF51AFD7ED558CCD
_M2 = 0xC4CEB9FE1A85EC53
_ROTATE = 23  # distinct rotations for up to 8 positions: 0, 23, 46, 5, 28, ...


def token_bytes(text: str) -> bytes:
    """``text`` lower-cased, as UTF-8, every separator a space: its tokens are what
    ``bytes.split()`` makes of it."""
    if text.isascii():  # most pages: lower-cased and separated in one translate
        return text.encode("ascii").translate(_ASCII_LOWER_TABLE)
    return unicode_token_bytes(text)


def unicode_token_bytes(text: str) -> bytes:
    """``token_bytes`` of any text, without its ASCII shortcut (the tests compare them)."""
    low = text.lower()
    data = low.encode("utf-8", "replace")  # lone surrogates become "?"
    if len(data) != len(low):  # some non-ASCII character: look for Unicode separators
        data = _UNICODE_SEPARATORS.sub(b" ", data)
    return data.translate(_ASCII_TABLE)


def tokens(text: str) -> list[bytes]:
    """The lower-cased word tokens of ``text`` as UTF-8 bytes (what shingles are made of)."""
    return token_bytes(text).split()


def shingle_hashes(words: list[bytes], size: int) -> npt.NDArray[np.uint64]:
    """The distinct 64-bit hashes of the ``size``-word shingles of ``words``, sorted."""
    import numpy as np

    m1, m2, s33 = np.uint64(_M1), np.uint64(_M2), np.uint64(33)
    h = np.fromiter(map(_xxh3, words), dtype=np.uint64, count=len(words))
    size = max(1, min(size, len(h)))
    count = len(h) - size + 1
    x = h[:count].copy()
    for j in range(1, size):
        r = (j * _ROTATE) % 64
        part = h[j : j + count]
        x ^= (part << np.uint64(r)) | (part >> np.uint64(64 - r)) if r else part
    # fmix64: every input bit flips about half of the output bits.
    x ^= x >> s33
    x *= m1
    x ^= x >> s33
    x *= m2
    x ^= x >> s33
    x.sort()
    distinct = np.empty(len(x), dtype=bool)
    distinct[:1] = True
    np.not_equal(x[1:], x[:-1], out=distinct[1:])
    return x[distinct]
