"""The crawl's shape: include / exclude patterns and per-host overrides, from the config
file, the environment and the CLI to admission, the frontier and politeness."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from trawl.config import HostOverride
from trawl.config_load import config_json, load_config
from trawl.errors import ConfigError
from trawl.fetch.politeness import Politeness
from trawl.frontier.admission import Admission, Candidate
from trawl.frontier.shape import EXCLUDED, NOT_INCLUDED, HostRules, UrlPatterns
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.storage.memory import MemoryCrawlStore

TOML = """
[crawl]
data_dir = "/tmp/x"
exclude = ['/private/', '\\?sessionid=']
include = ['^https://(www\\.)?a\\.example/']

[hosts."a.example"]
delay = 5
budget = 100

[hosts."slow.a.example"]
delay = 30
priority = 4

[hosts."ads.example"]
block = true
"""


def test_the_config_file_reads_patterns_and_host_tables(tmp_path: Path) -> None:
    path = tmp_path / "trawl.toml"
    path.write_text(TOML)
    c = load_config(file=path, env={})
    assert c.exclude == ("/private/", r"\?sessionid=")
    assert c.include == (r"^https://(www\.)?a\.example/",)
    assert c.hosts == {
        "a.example": HostOverride(delay=5.0, budget=100),
        "slow.a.example": HostOverride(delay=30.0, priority=4),
        "ads.example": HostOverride(block=True),
    }
    assert c.sitemaps is True
    # As saved for --resume, and read back.
    again = load_config(env={}, overrides=orjson.loads(config_json(c)))
    assert (again.hosts, again.include, again.exclude) == (c.hosts, c.include, c.exclude)


def test_the_environment_gives_json_for_hosts_and_patterns() -> None:
    env = {
        "TRAWL_DATA_DIR": "/tmp/x",
        "TRAWL_HOSTS": '{"B.Example.": {"delay": 2, "block": "true"}}',
        "TRAWL_EXCLUDE": '["a{1,3}", "b"]',
        "TRAWL_INCLUDE": "^https://",
        "TRAWL_SITEMAPS": "false",
        "TRAWL_MAX_SITEMAPS_PER_HOST": "7",
    }
    c = load_config(env=env)
    assert c.hosts == {"b.example": HostOverride(delay=2.0, block=True)}
    assert c.exclude == ("a{1,3}", "b")
    assert c.include == ("^https://",)
    assert (c.sitemaps, c.max_sitemaps_per_host) == (False, 7)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"exclude": ["("]}, "exclude pattern '(' is not a regular expression"),
        ({"hosts": {"a b": {}}}, "is not a host name"),
        ({"hosts": {"a.example": {"speed": 1}}}, "unknown settings speed"),
        ({"hosts": {"a.example": {"delay": -1}}}, "hosts.a.example.delay must be between"),
        ({"hosts": {"a.example": {"block": "maybe"}}}, "block must be true or false"),
        ({"max_sitemaps_per_host": 0}, "max_sitemaps_per_host must be positive"),
    ],
)
def test_bad_settings_are_refused_by_name(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(env={}, overrides={"data_dir": "/tmp/x", **changes})


def test_patterns_exclude_wins_and_includes_narrow() -> None:
    p = UrlPatterns(include=["^https://a.example/"], exclude=["/private/"])
    assert p.refusal("https://a.example/public") is None
    assert p.refusal("https://a.example/private/1") == EXCLUDED
    assert p.refusal("https://b.example/") == NOT_INCLUDED
    assert not UrlPatterns()
    assert UrlPatterns().refusal("https://anything/") is None


def test_host_rules_cover_subdomains_and_the_longest_name_wins() -> None:
    rules = HostRules(
        {
            "example.org": HostOverride(delay=5),
            "www.example.org": HostOverride(delay=1),
            "example.org:8080": HostOverride(block=True),
        }
    )
    assert rules.delay("example.org") == 5
    assert rules.delay("news.example.org") == 5
    assert rules.delay("www.example.org") == 1
    assert rules.delay("a.www.example.org:81") == 1
    assert rules.blocked("example.org:8080")
    assert not rules.blocked("example.org")
    assert rules.get("otherexample.org") is None


def test_an_override_delay_never_goes_below_the_crawl_delay() -> None:
    rules = HostRules(
        {"fast.example": HostOverride(delay=0.1), "slow.example": HostOverride(delay=60)}
    )
    p = Politeness(delay=1.0, max_crawl_delay=30.0, max_backoff=600.0, overrides=rules.delay)
    assert p.delay("fast.example") == 0.1  # the operator's own site: faster than default
    assert p.delay("slow.example") == 60  # more polite than max_crawl_delay allows robots
    assert p.delay("other.example") == 1.0
    p.set_crawl_delay("fast.example", 4.0)
    assert p.delay("fast.example") == 4.0  # robots.txt asks more: it wins
    p.set_crawl_delay("slow.example", 10.0)
    assert p.delay("slow.example") == 60
    assert p.after_success("fast.example", 100.0) == 104.0


def _admission(store: MemoryCrawlStore, **more: object) -> Admission:
    return Admission(
        frontier=store.frontier,
        scope=ScopeFilter("any"),
        limits=TrapLimits(),
        counters=store.counters,
        **more,  # type: ignore[arg-type]
    )


def test_admission_refuses_seeds_and_links_outside_the_shape() -> None:
    store = MemoryCrawlStore()
    admission = _admission(
        store,
        patterns=UrlPatterns(include=["example"], exclude=["/private/"]),
        hosts=HostRules({"ads.example": HostOverride(block=True)}),
    )
    added, errors = admission.seed(
        [
            "https://a.example/",
            "https://a.example/private/x",
            "https://ads.example/",
            "https://b.test/",
        ],
        now=0.0,
    )
    assert [u.url for u in added.added] == ["https://a.example/"]
    assert errors == [
        "https://a.example/private/x: excluded by pattern",
        "https://ads.example/: host blocked",
        "https://b.test/: not included by pattern",
    ]
    result = admission.offer(
        [
            Candidate("https://a.example/ok", depth=1),
            Candidate("https://a.example/private/1", depth=1),
            Candidate("https://x.ads.example/1", depth=1),
            Candidate("https://c.test/1", depth=1),
        ],
        now=0.0,
    )
    assert [u.url for u in result.added] == ["https://a.example/ok"]
    assert result.dropped == {EXCLUDED: 1, "host blocked": 1, NOT_INCLUDED: 1}
    assert store.counters.get("dropped:host blocked") == 1


def test_host_budget_and_priority_overrides_reach_the_frontier() -> None:
    store = MemoryCrawlStore(max_per_host=2)
    admission = _admission(
        store,
        hosts=HostRules(
            {
                "big.example": HostOverride(budget=0),  # no limit
                "tiny.example": HostOverride(budget=1),
                "first.example": HostOverride(priority=-3),
            }
        ),
    )
    result = admission.offer(
        [
            Candidate(f"https://{h}.example/{n}", depth=1)
            for h in ("big", "tiny", "plain", "first")
            for n in range(4)
        ],
        now=0.0,
    )
    counts: dict[str, int] = {}
    for u in result.added:
        counts[u.host] = counts.get(u.host, 0) + 1
    assert counts == {"big.example": 4, "tiny.example": 1, "plain.example": 2, "first.example": 2}
    lease = store.frontier.take(0.0)
    assert lease is not None and lease.host == "first.example"


def test_crawl_flags_for_sitemaps_and_patterns(tmp_path: Path) -> None:
    from trawl.cli import build_parser
    from trawl.cli._crawl import _overrides

    parser = build_parser()
    argv = ["crawl", "--data", str(tmp_path), "--no-sitemaps", "--max-sitemaps-per-host", "9"]
    argv += ["--include", "^https://a", "--exclude", "/x/", "--exclude", "/y/"]
    args = parser.parse_args(argv)
    config = load_config(env={}, overrides=_overrides(args, tmp_path))
    assert (config.sitemaps, config.max_sitemaps_per_host) == (False, 9)
    assert (config.include, config.exclude) == (("^https://a",), ("/x/", "/y/"))
    default = load_config(
        env={},
        overrides=_overrides(parser.parse_args(["crawl", "--data", str(tmp_path)]), tmp_path),
    )
    assert (default.sitemaps, default.include, default.exclude) == (True, (), ())
