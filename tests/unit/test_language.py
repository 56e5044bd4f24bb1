"""Language identification: shipped model, a confidence, robust to junk."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trawl.parse.language import identify


def test_common_languages() -> None:
    samples = {
        "en": "The river town kept its old stone bridge, and the market opened every morning.",
        "fr": "Le village gardait son vieux pont de pierre, et le marché ouvrait chaque matin.",
        "de": "Das Dorf behielt seine alte Steinbrücke, und der Markt öffnete jeden Morgen.",
        "es": "El pueblo conservó su viejo puente de piedra y el mercado abría cada mañana.",
        "ru": "Деревня сохранила свой старый каменный мост, а рынок открывался каждое утро.",
    }
    for code, text in samples.items():
        found = identify(text * 3)
        assert found is not None, code
        assert found.code == code
        assert 0.5 < found.confidence <= 1.0


def test_too_little_text() -> None:
    assert identify("") is None
    assert identify("ok") is None


@given(st.text(max_size=400))
def test_never_raises(text: str) -> None:
    result = identify(text)
    assert result is None or 0.0 <= result.confidence <= 1.0
