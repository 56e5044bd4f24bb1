"""The local-files backend: a crawl's logs as files under its data directory."""

from trawl.storage.local.blobs import LocalBlobStore

__all__ = ["LocalBlobStore"]
