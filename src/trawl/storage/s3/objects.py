"""A bucket prefix on an S3-compatible service, through obstore, with trawl's errors.

obstore (Rust's object_store) was chosen by measurement (bench/bench_s3_client.py):
a fifth of boto3's CPU per ranged GET and the lowest CPU per GiB uploaded, and it is
safe to call from any thread. Endpoint and credentials come from the standard AWS
variables; they are read here and handed to the client explicitly, so a missing key is
a clear error rather than a search of the credential chain (which would ask a cloud
metadata address). Every failure of the service becomes a ``StorageError`` naming
the operation, the URL and the service's error code; a missing object is ``None``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

import obstore
from obstore.exceptions import BaseError, PermissionDeniedError, UnauthenticatedError
from obstore.store import S3Store

from trawl.errors import StorageError
from trawl.storage.retry import again_until

if TYPE_CHECKING:
    from obstore.store import RetryConfig, S3Config

__all__ = ["ObjectInfo", "S3Objects", "again_while_unsent", "parse_s3_url"]

T = TypeVar("T")

_CODE = re.compile(r"<Code>([^<]+)</Code>")
_DENIED = {"AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "ExpiredToken"}
# Retries for what the service may get over (a restart, a dropped connection); a
# refusal (403, 404) is not retried by the client. The time bounds them, not the count:
# 5 retries backing off from 0.1 s (the client's default) gave up 1.4 s into an outage
# (10: 4.6 s), so a restart of the S3 server stopped every worker whose commit was
# uploading. From 0.5 s up to 5 s apart, 20 retries outlast the 30 s.
_RETRIES = 20
_RETRY_FOR = timedelta(seconds=30)
_BACKOFF_FROM = timedelta(seconds=0.5)
_BACKOFF_UP_TO = timedelta(seconds=5)
# Parts of a file upload (obstore's 5 MiB each) in flight at once, so in memory: a
# segment rotated or closed (up to warc_max_bytes) costs one part, not obstore's 12.
# Each rotation showed as a step of the Redis worker's RSS (+24 MB with 4 parts, +15
# with 2, +10 with 1); a rotation uploads in the writer's own thread, so one part at
# a time (256 MiB in 3 to 4 s against SeaweedFS on loopback, 2.2 to 2.5 with two)
# is fast enough: far faster than a worker writes.
_UPLOAD_PARTS = 1


def _unsent(exc: Exception) -> bool:
    """The request did not reach the service (refused, reset, timed out): not an answer."""
    return isinstance(exc, BaseError) and "error sending request" in str(exc)


def again_while_unsent(
    call: Callable[[], T],
    *,
    within: float = _RETRY_FOR.total_seconds(),
    now: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``call``, made again while its request does not reach the service, until
    ``within`` seconds from the first try, backing off as the client does. The client
    retries only the requests it knows to be idempotent, not the POSTs of a
    multi-object DELETE or of a multipart upload: a delete of the parts a whole segment
    replaced failed at once when the service restarted (8 ms, no retry), and that
    failure stopped the worker. Each of those is safe to make again here (the same keys
    deleted, the same object put)."""
    pause, most = _BACKOFF_FROM.total_seconds(), _BACKOFF_UP_TO.total_seconds()
    return again_until(call, _unsent, within, pause, most, now=now, sleep=sleep)


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    key: str
    size: int


def parse_s3_url(url: str) -> tuple[str, str]:
    """``s3://BUCKET/PREFIX`` -> (bucket, prefix without slashes at either end)."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise StorageError(f"not an s3://BUCKET/PREFIX URL: {url!r}")
    return parts.netloc, parts.path.strip("/")


class S3Objects:
    """Objects under ``s3://bucket/prefix``; keys are relative to the prefix."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        *,
        endpoint: str | None,
        access_key: str,
        secret_key: str,
        session_token: str | None = None,
        region: str = "us-east-1",
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint = endpoint
        config: S3Config = {
            "access_key_id": access_key,
            "secret_access_key": secret_key,
            "region": region,
        }
        if session_token:
            config["session_token"] = session_token
        if endpoint:
            config["endpoint"] = endpoint
        retry: RetryConfig = {
            "max_retries": _RETRIES,
            "retry_timeout": _RETRY_FOR,
            "backoff": {"init_backoff": _BACKOFF_FROM, "max_backoff": _BACKOFF_UP_TO, "base": 2},
        }
        self._store = S3Store(
            bucket,
            prefix=prefix or None,
            config=config,
            client_options={"allow_http": bool(endpoint and endpoint.startswith("http://"))},
            retry_config=retry,
        )

    @classmethod
    def from_url(cls, url: str, env: Mapping[str, str] | None = None) -> S3Objects:
        """The objects at ``url``, endpoint and credentials from the AWS variables."""
        env = os.environ if env is None else env
        bucket, prefix = parse_s3_url(url)
        key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
        if not key or not secret:
            raise StorageError(
                f"no S3 credentials for {url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                " (and AWS_ENDPOINT_URL for a service other than AWS)"
            )
        return cls(
            bucket,
            prefix,
            endpoint=env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None,
            access_key=key,
            secret_key=secret,
            session_token=env.get("AWS_SESSION_TOKEN"),
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        )

    def url(self, key: str = "") -> str:
        path = "/".join(p for p in (self.prefix, key) if p)
        return f"s3://{self.bucket}/{path}"

    def _error(self, op: str, key: str, exc: Exception) -> StorageError:
        text = str(exc)
        found = _CODE.search(text)
        code = found.group(1) if found else text.split("\n", 1)[0][:300]
        where = self.url(key) + (f" at {self.endpoint}" if self.endpoint else "")
        if isinstance(exc, PermissionDeniedError | UnauthenticatedError) or code in _DENIED:
            return StorageError(
                f"S3 {op} {where}: access denied ({code}); check AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY"
            )
        return StorageError(f"S3 {op} {where}: {code}")

    def put(self, key: str, data: bytes | Path) -> None:
        """Store a whole object (a file: in parts, several at once); atomic for readers."""
        try:
            # A file goes up in parts read into memory: at most _UPLOAD_PARTS at once.
            again_while_unsent(
                lambda: obstore.put(self._store, key, data, max_concurrency=_UPLOAD_PARTS)
            )
        except (BaseError, OSError) as exc:
            raise self._error("PUT", key, exc) from exc

    def get_range(self, key: str, start: int, end: int | None) -> bytes | None:
        """Bytes ``[start, end)`` (fewer at the object's end); None if no such object."""
        if end is not None and end <= start:
            return b"" if self.exists(key) else None
        try:
            if end is None:
                result = obstore.get(self._store, key, options={"range": {"offset": start}})
                return bytes(result.bytes())
            return bytes(obstore.get_range(self._store, key, start=start, end=end))
        except FileNotFoundError:
            return None
        except BaseError as exc:
            if "InvalidRange" in str(exc):  # start at or past the end
                return b""
            raise self._error("GET", key, exc) from exc

    def stream(self, key: str, start: int, end: int) -> Iterator[bytes]:
        """Bytes ``[start, end)`` in chunks, without holding them all; missing: none."""
        if end <= start:
            return
        try:
            result = obstore.get(self._store, key, options={"range": (start, end)})
            yield from (bytes(chunk) for chunk in result.stream(min_chunk_size=1 << 20))
        except FileNotFoundError:
            return
        except BaseError as exc:
            if "InvalidRange" in str(exc):
                return
            raise self._error("GET", key, exc) from exc

    def exists(self, key: str) -> bool:
        return self.size(key) is not None

    def size(self, key: str) -> int | None:
        """The object's size; None if there is no such object."""
        try:
            return int(obstore.head(self._store, key)["size"])
        except FileNotFoundError:
            return None
        except BaseError as exc:
            raise self._error("HEAD", key, exc) from exc

    def list_all(self, prefix: str) -> list[ObjectInfo]:
        """Every object in the folder ``prefix`` (a whole path segment), all levels down."""
        try:
            return [
                ObjectInfo(o["path"], o["size"])
                for batch in obstore.list(self._store, prefix)
                for o in batch
            ]
        except BaseError as exc:
            raise self._error("LIST", prefix, exc) from exc

    def list_folder(self, folder: str) -> tuple[list[ObjectInfo], list[str]]:
        """Objects directly in ``folder`` and the names of its sub-folders."""
        try:
            found = obstore.list_with_delimiter(self._store, folder)
        except BaseError as exc:
            raise self._error("LIST", folder, exc) from exc
        objects = [ObjectInfo(o["path"], o["size"]) for o in found["objects"]]
        return objects, [p.rstrip("/") for p in found["common_prefixes"]]

    def delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        try:
            again_while_unsent(lambda: obstore.delete(self._store, list(keys)))
        except FileNotFoundError:
            return
        except BaseError as exc:
            raise self._error("DELETE", keys[0], exc) from exc
