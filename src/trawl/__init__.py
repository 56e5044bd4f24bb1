"""trawl: a polite, crash-safe web crawler for training text and search indexes.

The public Python API is what this module exports; everything else is private.
"""

from trawl.errors import BlockedAddressError, ConfigError, StorageError, TrawlError, UrlError

__version__ = "0.1.0"

__all__ = [
    "BlockedAddressError",
    "ConfigError",
    "StorageError",
    "TrawlError",
    "UrlError",
    "__version__",
]
