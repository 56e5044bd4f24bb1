"""Settings: defaults, validation, and the merge of file < environment < overrides."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import orjson
import pytest

from trawl.config import AI_OPT_OUT_AGENTS, CrawlConfig, Timeouts
from trawl.config_load import (
    config_json,
    load_config,
    parse_resolve,
    read_resolve_file,
    saved_settings,
)
from trawl.errors import ConfigError


def test_defaults_are_polite_and_safe(tmp_path: Path) -> None:
    c = CrawlConfig(data_dir=tmp_path)
    assert c.delay == 1.0
    assert c.max_crawl_delay == 30.0
    assert c.max_body_bytes == 10 * 1024 * 1024
    assert c.max_redirects == 5
    assert c.max_depth == 20
    assert c.max_url_length == 2048
    assert c.allow_networks == ()
    assert c.robots_agents == ("trawl",)
    assert "trawl/" in c.user_agent
    assert c.contact in c.user_agent


def test_training_purpose_adds_ai_opt_out_tokens(tmp_path: Path) -> None:
    c = CrawlConfig(data_dir=tmp_path, purpose="training")
    assert c.robots_agents == ("trawl", *AI_OPT_OUT_AGENTS)
    assert "GPTBot" in c.robots_agents
    off = CrawlConfig(data_dir=tmp_path, purpose="training", ai_opt_outs=False)
    assert off.robots_agents == ("trawl",)


@pytest.mark.parametrize(
    "changes",
    [
        {"agent": "bad agent"},
        {"agent": "a/1.0"},
        {"delay": -1},
        {"max_pages": 0},
        {"scope": "galaxy"},
        {"scope": "allowlist"},
        {"purpose": "fun"},
        {"timeouts": Timeouts(connect=0)},
        {"parse_workers": -1},
        {"max_per_host": -1},
        {"max_links_per_page": -5},
        {"render": "sometimes"},
        {"render_pages": 0},
        {"render_deadline": 0},
        {"render_scrolls": -1},
        {"render_memory": 1024},
    ],
)
def test_invalid_settings(tmp_path: Path, changes: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        CrawlConfig(data_dir=tmp_path, **changes)  # type: ignore[arg-type]


def test_file_env_and_overrides_merge_in_order(tmp_path: Path) -> None:
    toml = tmp_path / "trawl.toml"
    toml.write_text(
        "[crawl]\n"
        'agent = "filebot"\n'
        "delay = 3.0\n"
        "max_depth = 4\n"
        'allow_networks = ["127.0.0.0/8"]\n'
        'resolve = { "books.test" = "127.0.0.1" }\n'
        "timeouts = { connect = 2, first_byte = 5, total = 9 }\n"
    )
    env = {"TRAWL_DELAY": "2.0", "TRAWL_MAX_PAGES": "50", "TRAWL_STRIP_TRACKING": "no"}
    c = load_config(file=toml, env=env, overrides={"data_dir": tmp_path, "max_depth": 7})
    assert c.agent == "filebot"
    assert c.delay == 2.0  # env over file
    assert c.max_pages == 50
    assert c.strip_tracking is False  # tracking parameters are dropped unless asked
    assert c.max_depth == 7  # overrides over everything
    assert c.allow_networks == (ipaddress.ip_network("127.0.0.0/8"),)
    assert c.resolve == {"books.test": "127.0.0.1"}
    assert c.timeouts == Timeouts(connect=2.0, first_byte=5.0, total=9.0)


def test_url_hygiene_defaults_and_settings(tmp_path: Path) -> None:
    c = CrawlConfig(data_dir=tmp_path)
    assert (c.strip_tracking, c.equivalences) == (True, True)
    toml = tmp_path / "trawl.toml"
    toml.write_text("[crawl]\nstrip_tracking = false\nequivalence_pages = 6\n")
    c = load_config(file=toml, env={"TRAWL_EQUIVALENCES": "off"}, overrides={"data_dir": tmp_path})
    assert (c.strip_tracking, c.equivalences, c.equivalence_pages) == (False, False, 6)
    with pytest.raises(ConfigError, match="at least 2"):
        CrawlConfig(data_dir=tmp_path, equivalence_pages=1)


def test_saved_settings_of_a_crawl_from_before_tracking_was_dropped(tmp_path: Path) -> None:
    now = config_json(CrawlConfig(data_dir=tmp_path, seeds=("http://a.example/",)))
    assert "seeds" not in saved_settings(now)
    kept = config_json(CrawlConfig(data_dir=tmp_path, strip_tracking=False))
    assert saved_settings(kept)["strip_tracking"] is False  # asked for: kept
    # A config saved before: strip_tracking false was the default of then.
    old = orjson.loads(kept)
    for name in ("equivalences", "equivalence_pages", "equivalence_values"):
        del old[name]
    settings = saved_settings(orjson.dumps(old).decode())
    assert "strip_tracking" not in settings
    assert load_config(env={}, overrides=settings).strip_tracking is True


def test_bad_sources(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("unknown_setting = 1\n")
    with pytest.raises(ConfigError, match="unknown settings"):
        load_config(file=bad, env={}, overrides={"data_dir": tmp_path})
    with pytest.raises(ConfigError, match="not a number"):
        load_config(env={"TRAWL_DELAY": "soon"}, overrides={"data_dir": tmp_path})
    with pytest.raises(ConfigError, match="data directory"):
        load_config(env={})


def test_resolve_entries(tmp_path: Path) -> None:
    assert parse_resolve(["Books.Test.=127.0.0.1", "# comment", "", "v6.test=[::1]"]) == {
        "books.test": "127.0.0.1",
        "v6.test": "::1",
    }
    with pytest.raises(ConfigError):
        parse_resolve(["books.test=not-an-ip"])
    f = tmp_path / "hosts.txt"
    f.write_text("a.test=127.0.0.2\nb.test 127.0.0.3\n")
    assert read_resolve_file(f) == {"a.test": "127.0.0.2", "b.test": "127.0.0.3"}
    with pytest.raises(ConfigError):
        read_resolve_file(tmp_path / "missing.txt")


def test_per_host_and_per_page_limits_have_defaults_and_can_be_lifted(tmp_path: Path) -> None:
    c = CrawlConfig(data_dir=tmp_path)
    assert c.max_per_host == 100_000
    assert c.max_links_per_page == 5000
    toml = tmp_path / "c.toml"
    toml.write_text('[crawl]\nmax_per_host = "none"\nmax_links_per_page = 200\n')
    env = {"TRAWL_MAX_LINKS_PER_PAGE": "none"}
    from_file = load_config(file=toml, env={}, overrides={"data_dir": tmp_path})
    assert (from_file.max_per_host, from_file.max_links_per_page) == (0, 200)
    both = load_config(file=toml, env=env, overrides={"data_dir": tmp_path})
    assert both.max_links_per_page == 0
    with pytest.raises(ConfigError):
        load_config(env={"TRAWL_MAX_PER_HOST": "lots"}, overrides={"data_dir": tmp_path})


def test_limit_flags(tmp_path: Path) -> None:
    from trawl.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["crawl", "--data", str(tmp_path), "--max-per-host", "none"])
    assert args.max_per_host == 0
    args = parser.parse_args(["crawl", "--data", str(tmp_path), "--max-links-per-page", "50"])
    assert args.max_links_per_page == 50
    with pytest.raises(SystemExit):
        parser.parse_args(["crawl", "--data", str(tmp_path), "--max-per-host", "-3"])


def test_render_settings_from_file_env_and_overrides(tmp_path: Path) -> None:
    assert CrawlConfig(data_dir=tmp_path).render == "never"  # until auto is cheap enough
    toml = tmp_path / "trawl.toml"
    toml.write_text('[crawl]\nrender = "always"\nrender_hosts = ["cdn.example"]\n')
    env = {"TRAWL_RENDER": "auto", "TRAWL_RENDER_MEMORY": "512M", "TRAWL_RENDER_PAGES": "3"}
    c = load_config(file=toml, env=env, overrides={"data_dir": tmp_path})
    assert c.render == "auto"  # env over file
    assert c.render_hosts == ("cdn.example",)
    assert c.render_memory == 512 * 1024 * 1024
    assert c.render_pages == 3
    hosts = load_config(
        env={"TRAWL_RENDER_HOSTS": "a.example, .b.example"}, overrides={"data_dir": tmp_path}
    )
    assert hosts.render_hosts == ("a.example", ".b.example")


def test_a_rendering_crawl_leases_urls_for_its_renders_too(tmp_path: Path) -> None:
    plain = CrawlConfig(data_dir=tmp_path)
    assert plain.lease_seconds == 60.0 * 2 + 60
    rendering = plain.with_changes(render="auto", render_deadline=20.0)
    assert rendering.lease_seconds == plain.lease_seconds + 3 * 20.0
