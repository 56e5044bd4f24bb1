"""``render`` and ``render_hosts`` in ``POST /v1/crawls``: checked, documented, configured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trawl.errors import ConfigError
from trawl.service import spec as spec_module
from trawl.service.openapi import SCHEMAS
from trawl.service.spec import SpecError, check_spec, to_config


def _body(**more: Any) -> dict[str, Any]:
    return {"seeds": ["http://app.test/"], **more}


def test_render_is_never_unless_asked_for(tmp_path: Path) -> None:
    config = to_config(check_spec(_body()), tmp_path)
    assert config.render == "never" and config.render_hosts == ()


def test_render_auto_with_other_hosts_reaches_the_config(tmp_path: Path) -> None:
    spec = check_spec(_body(render="auto", render_hosts=["CDN.example", ".static.example"]))
    config = to_config(spec, tmp_path)
    assert config.render == "auto"
    assert config.render_hosts == ("cdn.example", ".static.example")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("render", "sometimes"),
        ("render", True),
        ("render_hosts", "cdn.example"),
        ("render_hosts", ["http://cdn.example/"]),
        ("render_hosts", [""]),
    ],
)
def test_bad_render_fields_are_named(field: str, value: Any) -> None:
    with pytest.raises(SpecError) as info:
        check_spec(_body(**{field: value}))
    assert list(info.value.fields) == [field]


def test_the_openapi_document_describes_render() -> None:
    props = SCHEMAS["CrawlRequest"]["properties"]
    assert props["render"]["enum"] == ["never", "auto", "always"]
    assert props["render"]["default"] == "never"
    assert props["render_hosts"]["items"] == {"type": "string"}


def test_render_without_playwright_installed_is_refused_with_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> None:
        raise ConfigError("rendering pages needs Playwright: pip install 'trawl[render]'")

    monkeypatch.setattr(spec_module, "require_playwright", missing)
    with pytest.raises(SpecError) as info:
        check_spec(_body(render="auto"))
    assert "trawl[render]" in info.value.fields["render"]
    assert check_spec(_body(render="never"))["render"] == "never"
