"""Decode an HTML body to text, choosing the encoding the way a careful browser would.

Order (first that applies wins):

1. A byte-order mark (UTF-8, UTF-32LE/BE, UTF-16LE/BE).
2. Valid UTF-8: most of the web is UTF-8 and a wrong declaration ("latin1" on a
   UTF-8 page) is more common than non-UTF-8 bytes that happen to be valid UTF-8.
   Then UTF-8 but for a few bad bytes (far more valid multi-byte sequences than bad).
   Exception: a declared encoding that is not ASCII-compatible (UTF-16, ISO-2022-JP)
   produces bytes that can look like valid UTF-8, so its declaration is believed
   (UTF-16 only if the bytes have its shape, see below).
3. The charset parameter of the Content-Type header.
4. A ``<meta charset>`` or ``<meta http-equiv=Content-Type>`` in the first 4 KiB.
5. Detection with uchardet (faust-cchardet, C++: about 0.4 to 2.5 ms on 60 KB, against
   4 to 9 ms for charset-normalizer, and better on Cyrillic; measured in this repo),
   only reached for non-UTF-8 bytes without a usable declaration.
6. windows-1252, with replacement characters for undecodable bytes.

Labels are resolved with the WHATWG Encoding Standard's table (``_charset_labels``),
so "latin1", "iso-8859-1" and "ascii" mean windows-1252, "gb2312" means GBK (decoded
as GB18030), "shift_jis" means windows-31j, as in every browser. The returned name is
the WHATWG name in lower case. Never raises.

Two departures from a browser, both for text that would otherwise be mojibake:
a UTF-16 BOM or declaration is believed only when the bytes have UTF-16's shape
(markup is ASCII, so a zero byte in every other position for much of the body;
a lying ``charset=utf-16`` on an ASCII page turned every two letters into one CJK
character), and a body that is UTF-8 but for a few bad bytes is read as UTF-8 (with
replacement characters) rather than as windows-1252 or what its label says.

:func:`decode_page` then judges the text. A sample of it (a few windows, about 10
us on a 50 KB page) is searched for characters real text does not have: NULs and
other C0 and C1 controls (tab, LF, FF and CR aside), U+FFFD, private-use
characters. Past 1 % of the text, a closer count decides; an implausible decode
falls back to the UTF-16/32 form the zero bytes show, detection, UTF-8 and
windows-1252, and the first plausible one wins. Text still past 5 % is not a
document: ``problem`` says ``"binary content"`` (more than 1 % control characters:
the bytes are not text in any encoding, e.g. a PNG or a zip sent as text/html) or
``"undecodable text"`` (replacement or private-use characters).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from trawl.parse._charset_labels import NOT_ASCII_COMPATIBLE, lookup

__all__ = ["Decoded", "decode_html", "decode_page"]

_FALLBACK = "windows-1252"
_PRESCAN_BYTES = 4096
# Detection reads at most this much: enough signal, bounded cost on huge bodies.
_DETECT_BYTES = 256 * 1024
_MIN_CONFIDENCE = 0.5

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    # Before UTF-16's: FF FE 00 00 also starts with the UTF-16LE mark.
    (codecs.BOM_UTF32_LE, "utf-32le"),
    (codecs.BOM_UTF32_BE, "utf-32be"),
    (codecs.BOM_UTF16_LE, "utf-16le"),
    (codecs.BOM_UTF16_BE, "utf-16be"),
)
# Not in the WHATWG table (browsers know no UTF-32), found by the shape of the bytes.
_WIDE = {
    "utf-16le": "utf-16-le",
    "utf-16be": "utf-16-be",
    "utf-32le": "utf-32-le",
    "utf-32be": "utf-32-be",
}
_UTF16 = ("utf-16le", "utf-16be")
_SHAPE_BYTES = 4096
_HIGH = bytes(range(0x80, 0x100))

# Characters that real text does not contain (HTML whitespace aside).
_CONTROLS = r"\x00-\x08\x0b\x0e-\x1f\x7f-\x9f"
# (The private-use planes 15 and 16 are left out: they are rare, and a class that
# reaches past the BMP makes every search twice as slow.)
_SUSPECT = re.compile(rf"[{_CONTROLS}\ufffd\ue000-\uf8ff]")
_CONTROL = re.compile(rf"[{_CONTROLS}]")
_PLAUSIBLE = 0.01  # suspect share up to which a decode is believed
_BINARY = 0.05  # past this, after every fallback, the text is not a document
_QUICK_WINDOWS, _QUICK_WINDOW = 8, 256
_CLOSE_WINDOWS, _CLOSE_WINDOW = 64, 4096
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.IGNORECASE)
# Both meta forms: <meta charset=x> and <meta http-equiv=... content="...; charset=x">.
_META_CHARSET = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded body: its text, the encoding used, and why it is not text, if so."""

    text: str
    encoding: str
    problem: str | None = None  # "binary content" or "undecodable text"


def _decode(body: bytes, name: str) -> str:
    wide = _WIDE.get(name)
    if wide is not None:
        return body.decode(wide, errors="replace")
    codec = lookup(name)
    return body.decode(codec.python if codec else "cp1252", errors="replace")


def _wide_shape(body: bytes) -> str | None:
    """The UTF-16 or UTF-32 form the zero bytes of ``body`` show, or None.

    Markup is ASCII, so in UTF-16 much of a page has a zero byte in every other
    position (odd ones little-endian), and in UTF-32 three bytes of four are zero.
    ASCII-compatible bytes have almost no zero bytes; binary has them anywhere alike.
    """
    n = min(len(body), _SHAPE_BYTES) & ~3
    if n < 8:
        return None
    sample = body[:n]
    c0, c1, c2, c3 = (sample[i::4].count(0) for i in range(4))
    units = n // 4
    high, low = 0.9 * units, 0.1 * units
    if c2 >= high and c3 >= high and c0 <= low:
        return "utf-32le"
    if c0 >= high and c1 >= high and c3 <= low:
        return "utf-32be"
    odd, even = c1 + c3, c0 + c2
    if odd >= n / 64 and odd >= 4 * even:
        return "utf-16le"
    if even >= n / 64 and even >= 4 * odd:
        return "utf-16be"
    return None


def _mostly_utf8(body: bytes) -> str | None:
    """The body as UTF-8 if it is that but for a few bad bytes, else None.

    Text in a legacy encoding has almost no valid UTF-8 sequences among its high
    bytes; a UTF-8 page with a few bad bytes has far more valid ones than bad.
    """
    text = body.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - body.count(b"\xef\xbf\xbd")
    high = len(body) - len(body.translate(None, _HIGH))
    good = high - bad  # about: each bad sequence is one byte or more
    return text if good >= 6 and good >= 6 * bad else None


def _from_header(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = _HEADER_CHARSET.search(content_type)
    if match is None:
        return None
    codec = lookup(match.group(1))
    return codec.name if codec else None


def _from_meta(body: bytes) -> str | None:
    for match in _META_CHARSET.finditer(body[:_PRESCAN_BYTES]):
        codec = lookup(match.group(1).decode("ascii", errors="replace"))
        if codec is None:
            continue
        # WHATWG: a meta tag cannot switch to a non-ASCII-compatible encoding (the
        # tag itself was just read as ASCII), and UTF-16 labels there mean UTF-8.
        if codec.name in ("utf-16le", "utf-16be"):
            return "utf-8"
        return codec.name
    return None


def _detect(body: bytes) -> str | None:
    try:
        import cchardet
    except ImportError:  # optional at run time: without it, the fallback applies
        return None
    try:
        guess = cchardet.detect(body[:_DETECT_BYTES])
    except Exception:  # a detector bug must not lose the page
        return None
    label = guess.get("encoding")
    confidence = guess.get("confidence") or 0.0
    if not isinstance(label, str) or confidence < _MIN_CONFIDENCE:
        return None
    codec = lookup(label)
    # UTF-8 was already ruled out: the bytes are not valid UTF-8.
    if codec is None or codec.name == "utf-8":
        return None
    return codec.name


def _first_choice(body: bytes, content_type: str | None) -> tuple[str, str]:
    """The decoding order of the module doc, UTF-16 checked against the bytes."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            rest = body[len(bom) :]
            if name not in _UTF16 or len(rest) < 8:
                return rest.decode(_WIDE.get(name, name), errors="replace"), name
            shape = _wide_shape(rest)
            if shape is not None and shape in _UTF16:
                return _decode(rest, shape), shape
            body = rest  # a UTF-16 mark on bytes that are not UTF-16: not believed
            break
    declared = _from_header(content_type)
    if declared in _UTF16:
        shape = _wide_shape(body)
        if shape is not None and shape in _UTF16:
            return _decode(body, shape), shape
        declared = None  # a lie: ASCII-compatible bytes
    elif declared in NOT_ASCII_COMPATIBLE:
        return _decode(body, declared), declared
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    text = _mostly_utf8(body)
    if text is not None:
        return text, "utf-8"
    name = declared or _from_meta(body) or _detect(body) or _FALLBACK
    return _decode(body, name), name


def _windows(text: str, count: int, width: int) -> list[tuple[int, int]]:
    """All of ``text`` if short, else ``count`` windows of it spread from end to end."""
    if len(text) <= count * width:
        return [(0, len(text))]
    step = (len(text) - width) // (count - 1)
    return [(i * step, i * step + width) for i in range(count)]


def _share(text: str, windows: list[tuple[int, int]], pattern: re.Pattern[str]) -> float:
    size = sum(end - start for start, end in windows)
    if not size or not any(pattern.search(text, start, end) for start, end in windows):
        return 0.0
    return sum(len(pattern.findall(text, start, end)) for start, end in windows) / size


def _suspect_share(text: str) -> float:
    """The share of suspect characters: a quick sample, then a closer look if needed."""
    quick = _share(text, _windows(text, _QUICK_WINDOWS, _QUICK_WINDOW), _SUSPECT)
    if quick <= _PLAUSIBLE:
        return quick
    return _share(text, _windows(text, _CLOSE_WINDOWS, _CLOSE_WINDOW), _SUSPECT)


def _fallbacks(body: bytes, first: str) -> list[str]:
    """Other decodings to try for an implausible ``first``: the UTF-16/32 form the
    bytes show, then (unless the body is valid UTF-8, whose suspect characters are
    really there) detection and the defaults."""
    out = [_wide_shape(body)]
    if first != "utf-8":
        out += [_detect(body), "utf-8", _FALLBACK]
    return [name for name in dict.fromkeys(out) if name is not None and name != first]


def decode_page(body: bytes, *, content_type: str | None) -> Decoded:
    """The body decoded, and whether the text is text at all (see the module doc)."""
    text, name = _first_choice(body, content_type)
    share = _suspect_share(text)
    if share <= _PLAUSIBLE:
        return Decoded(text, name)
    for other in _fallbacks(body, name):
        candidate = _decode(body, other)
        if _suspect_share(candidate) <= _PLAUSIBLE:
            return Decoded(candidate, other)
    if share <= _BINARY:
        return Decoded(text, name)  # damaged, but mostly text
    # Control characters are the same bytes in every ASCII-compatible encoding: past
    # the plausible share, the bytes are not text (otherwise it is the decoding).
    binary = _share(text, _windows(text, _CLOSE_WINDOWS, _CLOSE_WINDOW), _CONTROL) > _PLAUSIBLE
    return Decoded(text, name, "binary content" if binary else "undecodable text")


def decode_html(body: bytes, *, content_type: str | None) -> tuple[str, str]:
    """``(text, encoding name)`` for an HTML body; see the module doc for the order."""
    decoded = decode_page(body, content_type=content_type)
    return decoded.text, decoded.encoding
