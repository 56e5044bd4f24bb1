"""Language identification from a model shipped inside the package (no download).

CLD2 (Chromium's Compact Language Detector 2, via pycld2) carries its tables in the
compiled extension. Measured on the sample web's articles: 0.13 ms per page, against
1.45 ms for py3langid on the same 3,000 characters. The confidence is the share of
the text CLD2 assigns to the top language, zero when CLD2 says the answer is not
reliable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pycld2

# The first few thousand characters decide the language; more costs time, not accuracy.
_SAMPLE_CHARS = 3000
_MIN_CHARS = 20
# CLD2 refuses control characters and lone surrogates: it wants valid, printable UTF-8.
_UNWANTED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Language:
    code: str  # ISO 639-1 where there is one (CLD2's code), e.g. "en", "zh-Hant"
    confidence: float  # 0..1


def identify(text: str) -> Language | None:
    """The language of ``text``, or None when there is too little text to tell."""
    sample = _UNWANTED.sub(" ", text[:_SAMPLE_CHARS])
    if len(sample.strip()) < _MIN_CHARS:
        return None
    try:
        reliable, _bytes, details = pycld2.detect(sample)
    except (pycld2.error, ValueError):
        return None
    _name, code, percent, _score = details[0]
    if code == "un":
        return None
    confidence = percent / 100.0 if reliable else 0.0
    return Language(code=str(code), confidence=round(confidence, 4))
