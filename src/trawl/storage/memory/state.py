"""The memory backend's durable state: what a commit keeps, and the disk that holds it."""

from __future__ import annotations

from dataclasses import dataclass, field

from trawl.dedup.urlrules import Rewrite, UrlRule
from trawl.storage.base import FetchRecord, PageRecord, RobotsRow
from trawl.storage.memory.frontier_state import FrontierState
from trawl.storage.memory.near import NearRow
from trawl.storage.memory.pages import QueueState

LOG_META_PREFIX = "log."  # the logs' committed ends, in meta as the SQLite store keeps them


@dataclass(slots=True)
class MemoryState:
    """Everything a crawl keeps: what one commit makes durable."""

    frontier: FrontierState = field(default_factory=FrontierState)
    pages: dict[str, PageRecord] = field(default_factory=dict)
    fetches: dict[tuple[str, int], FetchRecord] = field(default_factory=dict)
    parse_queue: QueueState = field(default_factory=QueueState)
    counters: dict[str, int] = field(default_factory=dict)
    robots: dict[str, RobotsRow] = field(default_factory=dict)
    origin_files: dict[tuple[str, str], tuple[int | None, bytes | None, float]] = field(
        default_factory=dict
    )
    meta: dict[str, str] = field(default_factory=dict)
    near: list[NearRow] = field(default_factory=list)
    url_rules: dict[tuple[str, str], UrlRule] = field(default_factory=dict)
    rule_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    rewrites: dict[tuple[str, str, str], Rewrite] = field(default_factory=dict)

    def copy(self) -> MemoryState:
        """A copy sharing nothing mutable with this state.

        Only the frontier's rows are mutable; every other value (frozen records,
        tuples, strings, JSON text) is immutable, so copying the containers suffices.
        """
        return MemoryState(
            self.frontier.copy(),
            dict(self.pages),
            dict(self.fetches),
            QueueState(dict(self.parse_queue.jobs), self.parse_queue.last_seq),
            dict(self.counters),
            dict(self.robots),
            dict(self.origin_files),
            dict(self.meta),
            list(self.near),
            dict(self.url_rules),
            dict(self.rule_counts),
            dict(self.rewrites),
        )


class MemoryDisk:
    """What survives a crash: the last committed state; one store open on it at a time."""

    def __init__(self) -> None:
        self.committed = MemoryState()
        self.commits = 0
        self.in_use = False
