"""In-memory backends of every storage Protocol: for tests and throwaway crawls."""

from trawl.storage.memory.blobs import MemoryBlobStore
from trawl.storage.memory.frontier import MemoryFrontier
from trawl.storage.memory.pages import (
    MemoryCounters,
    MemoryMeta,
    MemoryOriginFileStore,
    MemoryPageStore,
    MemoryParseQueue,
    MemoryRobotsStore,
)
from trawl.storage.memory.reader import MemoryCrawlReader
from trawl.storage.memory.state import MemoryDisk
from trawl.storage.memory.store import MemoryCrawlStore
from trawl.storage.memory.urlrules import MemoryUrlRuleStore

__all__ = [
    "MemoryBlobStore",
    "MemoryCounters",
    "MemoryCrawlReader",
    "MemoryCrawlStore",
    "MemoryDisk",
    "MemoryFrontier",
    "MemoryMeta",
    "MemoryOriginFileStore",
    "MemoryPageStore",
    "MemoryParseQueue",
    "MemoryRobotsStore",
    "MemoryUrlRuleStore",
]
