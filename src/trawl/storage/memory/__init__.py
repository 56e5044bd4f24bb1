"""In-memory backends of every storage Protocol: for tests and throwaway crawls."""

from trawl.storage.memory.blobs import MemoryBlobStore

__all__ = ["MemoryBlobStore"]
