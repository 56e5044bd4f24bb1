"""Language identification from a model shipped inside the package (no download).

py3langid (a maintained fork of langid.py) carries its model in its wheel; it is
loaded once per worker process, on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

# The first few thousand characters decide the language; more costs time, not accuracy.
_SAMPLE_CHARS = 3000
_MIN_CHARS = 20


@dataclass(frozen=True, slots=True)
class Language:
    code: str  # ISO 639-1, e.g. "en"
    confidence: float  # 0..1


@cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(text: str) -> Language | None:
    """The language of ``text``, or None when there is too little text to tell."""
    sample = text[:_SAMPLE_CHARS]
    if len(sample.strip()) < _MIN_CHARS:
        return None
    code, confidence = _identifier().classify(sample)
    return Language(code=str(code), confidence=round(float(confidence), 4))
