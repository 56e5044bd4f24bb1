"""Seeds of ``POST /v1/crawls``: URLs, or ``{"url", "priority"}`` objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from trawl.service.spec import SpecError, check_spec, to_config


def test_a_seed_may_carry_a_priority() -> None:
    spec = check_spec(
        {
            "seeds": [
                "HTTP://a.test",
                {"url": "http://b.test/x", "priority": 4},
                {"url": "http://c.test"},
            ]
        }
    )
    assert spec["seeds"] == [
        "http://a.test/",
        {"url": "http://b.test/x", "priority": 4.0},
        "http://c.test/",
    ]
    config = to_config(spec, Path("/nonexistent"))
    assert config.seeds == ("http://a.test/", "http://b.test/x 4.0", "http://c.test/")


@pytest.mark.parametrize(
    ("seed", "field"),
    [
        ({"url": "http://a.test/", "priority": 0}, "seeds[0].priority"),
        ({"url": "http://a.test/", "priority": True}, "seeds[0].priority"),
        ({"url": "http://a.test/", "priority": 2e6}, "seeds[0].priority"),
        ({"url": "ftp://a.test/"}, "seeds[0].url"),
        ({"priority": 2}, "seeds[0].url"),
        ({"url": "http://a.test/", "weight": 2}, "seeds[0].weight"),
        (7, "seeds[0]"),
    ],
)
def test_a_bad_seed_is_named(seed: object, field: str) -> None:
    with pytest.raises(SpecError) as info:
        check_spec({"seeds": [seed]})
    assert set(info.value.fields) == {field}
