"""The exception tree: every error trawl raises on purpose derives from TrawlError."""

from __future__ import annotations


class TrawlError(Exception):
    """Base class of every error trawl raises on purpose."""


class UrlError(TrawlError, ValueError):
    """A URL that cannot be put in normal form (no scheme, bad port, bad IDN, ...)."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(f"{reason}: {url[:200]!r}")
        self.reason = reason
        self.url = url


class BlockedAddressError(TrawlError):
    """The address guard refused a host or IP (SSRF protection)."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        super().__init__(f"{host} -> {address}: {reason}")
        self.host = host
        self.address = address
        self.reason = reason


class ConfigError(TrawlError, ValueError):
    """A setting that is invalid or inconsistent."""


class StorageError(TrawlError):
    """The durable store is unusable (corrupt, locked by another crawl, ...)."""


class DataDirInUseError(StorageError):
    """Another trawl process holds the data directory's lock (a crawl is running)."""
