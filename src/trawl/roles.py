"""The roles a crawl process can take: fetching, parsing, indexing, or all (the default).

Every role works through the same ``CrawlStore``; what one role hands to another goes
through the store (the frontier, the parse queue), so the roles may run in one
process or in several over a store they share (the embedded default runs both in one).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ALL_ROLES", "Role"]


class Role(StrEnum):
    FETCH = "fetch"  # leases in, responses stored (WARC) and queued for parsing
    PARSE = "parse"  # queued pages in: text, dedup decisions, links to the frontier
    INDEX = "index"  # kept pages in: the search index (under the process's data dir)


ALL_ROLES = frozenset(Role)
