"""``POST /v1/crawls`` with sitemaps, include / exclude patterns and per-host overrides:
checked field by field, then a config the crawler runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trawl.config import HostOverride
from trawl.service.openapi import SCHEMAS
from trawl.service.spec import SpecError, check_spec, to_config


def _body(**more: Any) -> dict[str, Any]:
    return {"seeds": ["http://books.test/"], **more}


def test_shape_fields_reach_the_config(tmp_path: Path) -> None:
    spec = check_spec(
        _body(
            sitemaps=False,
            index=False,
            include=["^http://books\\.test/"],
            exclude=["/private/", "sessionid="],
            hosts={
                "Books.Test": {"delay": 4, "budget": 50, "priority": -2},
                "ads.test": {"block": True},
            },
            limits={"max_sitemaps_per_host": 10},
        )
    )
    config = to_config(spec, tmp_path)
    assert config.sitemaps is False
    assert config.index is False
    assert config.max_sitemaps_per_host == 10
    assert config.include == ("^http://books\\.test/",)
    assert config.exclude == ("/private/", "sessionid=")
    assert config.hosts == {
        "books.test": HostOverride(delay=4.0, budget=50, priority=-2),
        "ads.test": HostOverride(block=True),
    }
    default = to_config(check_spec(_body()), tmp_path)
    assert (default.sitemaps, default.index, default.include, default.hosts) == (True, True, (), {})


def test_bad_shape_fields_are_named() -> None:
    with pytest.raises(SpecError) as info:
        check_spec(
            _body(
                sitemaps="yes",
                index="no",
                include=["(unclosed"],
                exclude="not a list",
                hosts={
                    "a b": {},
                    "x.test": {"delay": -1, "speed": 3, "block": "no"},
                    "y.test": 5,
                },
            )
        )
    fields = info.value.fields
    assert fields["sitemaps"] == fields["index"] == "must be true or false"
    assert fields["include[0]"].startswith("not a regular expression")
    assert fields["exclude"] == "must be a list of strings"
    assert fields["hosts.a b"] == "not a host name"
    assert fields["hosts.x.test.delay"].startswith("must be between 0")
    assert fields["hosts.x.test.speed"] == "unknown setting"
    assert fields["hosts.x.test.block"] == "must be true or false"
    assert fields["hosts.y.test"].startswith("must be an object")


def test_the_openapi_document_describes_them() -> None:
    props = SCHEMAS["CrawlRequest"]["properties"]
    assert props["sitemaps"]["type"] == props["index"]["type"] == "boolean"
    assert props["include"]["items"]["type"] == "string"
    host = props["hosts"]["additionalProperties"]["properties"]
    assert set(host) == {"delay", "budget", "priority", "block"}
    assert "max_sitemaps_per_host" in props["limits"]["properties"]
