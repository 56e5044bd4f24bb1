"""Where a crawl lives, as its commands name it: a data directory, or a crawl in Redis.

``trawl stats``, ``export`` and the fleet commands take ``--data DIR`` or
``--redis URL [--crawl ID] [--blobs URL]``; a ``CrawlPlace`` is that choice, and
opens the crawl's read-only view and its logs from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trawl.errors import StorageError
from trawl.storage.base import CrawlReader
from trawl.storage.blobs import BlobStore
from trawl.storage.open import open_blobs, open_reader, open_redis_reader

__all__ = ["BLOBS_META", "DEFAULT_CRAWL", "CrawlPlace"]

DEFAULT_CRAWL = "main"
BLOBS_META = "blobs"  # meta key: where a Redis crawl's logs live (s3:// URL or directory)


@dataclass(frozen=True, slots=True)
class CrawlPlace:
    data: Path | None = None
    redis: str | None = None
    crawl: str = DEFAULT_CRAWL
    blobs: str | None = None  # a Redis crawl's logs; None: as the crawl was submitted

    def __post_init__(self) -> None:
        if (self.data is None) == (self.redis is None):
            raise StorageError("a crawl lives in a data directory or in Redis: give one")

    def __str__(self) -> str:
        if self.data is not None:
            return str(self.data)
        return f"{self.redis} (crawl {self.crawl})"

    def reader(self) -> CrawlReader:
        if self.data is not None:
            return open_reader(self.data)
        assert self.redis is not None
        return open_redis_reader(self.redis, self.crawl)

    def blob_store(self, *, where: str | None = None, spool: Path | None = None) -> BlobStore:
        """The crawl's logs: ``where``, else (a Redis crawl) ``blobs`` or where the crawl
        was submitted with; ``spool`` is where an S3 writer keeps growing segments."""
        if self.data is not None and where is None:
            return open_blobs(self.data)
        where = where or self.blobs
        if where is None:
            reader = self.reader()
            try:
                where = reader.meta(BLOBS_META)
            finally:
                reader.close()
        if where is None:
            raise StorageError(f"the crawl {self} names no blob store: give --blobs URL")
        return open_blobs(where if where.startswith("s3://") else Path(where), spool=spool)
