"""``POST /v1/crawls`` bodies: the URL hygiene settings (``strip_tracking``,
``equivalences``), their defaults, and specs stored before they were the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from trawl.service.spec import SpecError, check_spec, to_config

SEEDS = {"seeds": ["http://books.test/"]}


def test_url_hygiene_is_on_unless_turned_off(tmp_path: Path) -> None:
    spec = check_spec(SEEDS)
    assert (spec["strip_tracking"], spec["equivalences"]) == (True, True)
    config = to_config(spec, tmp_path)
    assert (config.strip_tracking, config.equivalences) == (True, True)
    off = check_spec({**SEEDS, "strip_tracking": False, "equivalences": False})
    config = to_config(off, tmp_path)
    assert (config.strip_tracking, config.equivalences) == (False, False)


@pytest.mark.parametrize("field", ["strip_tracking", "equivalences"])
def test_a_setting_that_is_no_boolean_is_refused(field: str) -> None:
    with pytest.raises(SpecError) as info:
        check_spec({**SEEDS, field: "yes"})
    assert info.value.fields == {field: "must be true or false"}


def test_a_spec_stored_before_the_defaults_changed(tmp_path: Path) -> None:
    """Such a spec holds ``strip_tracking: false`` only as the default of then."""
    stored = {k: v for k, v in check_spec(SEEDS).items() if k != "equivalences"}
    stored["strip_tracking"] = False
    config = to_config(stored, tmp_path)
    assert (config.strip_tracking, config.equivalences) == (True, True)
