"""The S3 backend: a crawl's logs in a bucket of any S3-compatible service."""

from trawl.storage.s3.blobs import S3BlobStore
from trawl.storage.s3.objects import S3Objects

__all__ = ["S3BlobStore", "S3Objects"]
