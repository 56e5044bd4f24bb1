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
from trawl.storage.memory.store import MemoryCrawlStore, MemoryDisk

__all__ = [
    "MemoryBlobStore",
    "MemoryCounters",
    "MemoryCrawlStore",
    "MemoryDisk",
    "MemoryFrontier",
    "MemoryMeta",
    "MemoryOriginFileStore",
    "MemoryPageStore",
    "MemoryParseQueue",
    "MemoryRobotsStore",
]
