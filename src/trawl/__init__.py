"""trawl: a polite, crash-safe web crawler for training text and search indexes.

The public Python API is what this module exports; everything else is private.
Heavy parts (the crawler, its HTTP stack) are imported on first use, so that
``import trawl`` and the small CLI helpers stay fast.

    import asyncio, trawl
    config = trawl.CrawlConfig(data_dir=Path("data"), seeds=("https://example.org/",))
    summary = asyncio.run(trawl.run_crawl(config))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from trawl._version import __version__
from trawl.errors import BlockedAddressError, ConfigError, StorageError, TrawlError, UrlError

# name -> module that defines it (imported lazily by __getattr__).
_LAZY = {
    "CrawlConfig": "trawl.config",
    "HostOverride": "trawl.config",
    "Timeouts": "trawl.config",
    "load_config": "trawl.config_load",
    "Crawl": "trawl.crawl",
    "CrawlSummary": "trawl.records",
    "Snapshot": "trawl.records",
    "run_crawl": "trawl.crawl",
    "normalize": "trawl.urls",
    "join": "trawl.urls",
    "fingerprint": "trawl.urls",
    "host_key": "trawl.urls",
    "RobotsRules": "trawl.fetch.robots",
    "Role": "trawl.roles",
    "rules_for_fetch": "trawl.fetch.robots",
    "AddressGuard": "trawl.fetch.address",
    "Extraction": "trawl.parse.extract",
    "extract": "trawl.parse.extract",
    "ParsedPage": "trawl.parse.page",
    "parse_page": "trawl.parse.page",
    "read_stats": "trawl.stats",
    "Searcher": "trawl.index",
    "IndexSpec": "trawl.index",
    "SearchResults": "trawl.index",
    "Hit": "trawl.index",
    "QueryError": "trawl.index",
    "url_states": "trawl.stats",
}

__all__ = [
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

if TYPE_CHECKING:
    from trawl.config import CrawlConfig, HostOverride, Timeouts
    from trawl.config_load import load_config
    from trawl.crawl import Crawl, run_crawl
    from trawl.fetch.address import AddressGuard
    from trawl.fetch.robots import RobotsRules, rules_for_fetch
    from trawl.index import Hit, IndexSpec, QueryError, Searcher, SearchResults
    from trawl.parse.extract import Extraction, extract
    from trawl.parse.page import ParsedPage, parse_page
    from trawl.records import CrawlSummary, Snapshot
    from trawl.roles import Role
    from trawl.stats import read_stats, url_states
    from trawl.urls import fingerprint, host_key, join, normalize


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trawl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
