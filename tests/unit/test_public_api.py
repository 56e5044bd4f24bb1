"""The public API is pinned: adding or removing a name is a deliberate change."""

import trawl

PUBLIC = [
    "AddressGuard",
    "BlockedAddressError",
    "ConfigError",
    "Crawl",
    "CrawlConfig",
    "CrawlSummary",
    "Extraction",
    "Hit",
    "HostOverride",
    "IndexSpec",
    "ParsedPage",
    "QueryError",
    "RobotsRules",
    "Role",
    "SearchResults",
    "Searcher",
    "Snapshot",
    "StorageError",
    "Timeouts",
    "TrawlError",
    "UrlError",
    "__version__",
    "extract",
    "fingerprint",
    "host_key",
    "join",
    "load_config",
    "normalize",
    "parse_page",
    "read_stats",
    "rules_for_fetch",
    "run_crawl",
    "url_states",
]


def test_public_names_are_pinned() -> None:
    assert sorted(trawl.__all__) == sorted(PUBLIC)
    for name in trawl.__all__:
        assert getattr(trawl, name) is not None


def test_lazy_names_are_the_real_objects() -> None:
    from trawl.crawl import Crawl
    from trawl.urls import normalize

    assert trawl.Crawl is Crawl
    assert trawl.normalize is normalize
    assert trawl.normalize("HTTP://A.example") == "http://a.example/"
