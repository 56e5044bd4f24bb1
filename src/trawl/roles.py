"""The roles a crawl process can take: fetching, parsing, indexing, or all (the default).

Every role works through the same ``CrawlStore``; what one role hands to another goes
through the store (the frontier, the parse queue), so the roles may run in one
process or in several over a store they share (the embedded default runs both in one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from enum import StrEnum

__all__ = ["ALL_ROLES", "Role", "said_if_failed"]


class Role(StrEnum):
    FETCH = "fetch"  # leases in, responses stored (WARC) and queued for parsing
    PARSE = "parse"  # queued pages in: text, dedup decisions, links to the frontier
    INDEX = "index"  # kept pages in: the search index (under the process's data dir)


ALL_ROLES = frozenset(Role)


def said_if_failed(
    task: asyncio.Task[None], kind: str, count: Callable[[str], object], log: logging.Logger
) -> None:
    """A role's task (a ``kind``: one fetch, one parse) ended: an error no step of it
    handled (a store that failed, a bug) is counted (``count``: the role's counters'
    ``add``, given ``error:<kind>``) and said once, rather than left to asyncio ("Task
    exception was never retrieved"); the crawl goes on."""
    if task.cancelled() or (exc := task.exception()) is None:
        return
    count(f"error:{kind}")
    log.error("a %s failed: %s: %s", kind, type(exc).__name__, exc, exc_info=exc)
