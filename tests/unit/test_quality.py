from __future__ import annotations

import json
import pickle

from hypothesis import given
from hypothesis import strategies as st

from trawl.config import QualityThresholds
from trawl.parse.quality import QualitySignals, quality_signals

_GOOD = (
    "The committee met on Tuesday to discuss the budget of the new library.\n"
    "Members agreed that the plan should be finished with care and that funds have to last.\n"
    "A final vote will take place next month, and the result will be published online.\n"
) * 3 + "One more line ends here."


def test_signals_of_a_plain_text() -> None:
    s = quality_signals(_GOOD)
    assert s.lines == 10 and s.words == len(_GOOD.split())
    assert s.terminal_punct_line_share == 1.0
    assert s.dup_line_share == 0.6  # 6 of 10 lines repeat an earlier one
    assert 0.5 < s.dup_line_char_share < 0.7
    assert s.stop_words >= 10
    assert s.alpha_word_share == 1.0
    assert 3 < s.mean_word_length < 6


def test_symbols_bullets_and_ellipses() -> None:
    s = quality_signals("- one # two\n- three ...\n\u2022 four \u2026\n#### ---")
    assert s.bullet_line_share == 0.75
    assert s.ellipsis_line_share == 0.5
    assert s.hash_word_ratio == round(5 / 12, 4)
    assert s.ellipsis_word_ratio == round(2 / 12, 4)
    assert s.alpha_word_share == round(4 / 12, 4)


def test_empty_text() -> None:
    s = quality_signals("")
    assert s.words == 0 and s.lines == 0 and s.mean_word_length == 0.0


def test_picklable_and_json() -> None:
    s = quality_signals(_GOOD)
    assert pickle.loads(pickle.dumps(s)) == s
    assert QualitySignals(**json.loads(json.dumps(s.as_dict()))) == s


def test_thresholds_off_by_default() -> None:
    assert not QualityThresholds().active
    assert QualityThresholds().failures(quality_signals("")) == ()


def test_gopher_thresholds_name_failures() -> None:
    g = QualityThresholds.gopher()
    assert g.active
    assert "words<50" in g.failures(quality_signals("too short."))
    assert "dup_line_share>0.3" in g.failures(quality_signals(_GOOD))
    assert QualityThresholds(max_words=3).failures(quality_signals("a b c d")) == ("words>3",)


@given(st.text(max_size=3000))
def test_never_raises(text: str) -> None:
    s = quality_signals(text)
    for name in ("alpha_word_share", "dup_line_share", "bullet_line_share"):
        assert 0.0 <= getattr(s, name) <= 1.0
