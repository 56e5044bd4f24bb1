"""Key names of a Redis crawl, and the encodings of what they hold.

Every key starts ``trawl:<crawl>:``. A host's keys carry the host as their hash tag
(``{<host>}``), so one host lives on one shard and its scripts are single-shard. The
crawl-wide indexes are split into ``buckets`` tagged ``{<crawl>/b<i>}``; the other
crawl-wide keys have their own tags (``/g`` meta, counters, counts and sessions,
``/p`` pages, ``/q`` the parse queue, ``/n`` the near index). The package docstring
lists them all.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass

NONE = "\x00"  # None in a script argument (no stored text holds a NUL)


def arg(value: str | float | int | None) -> str:
    """A value as a script argument (numbers exact: ``repr`` of a float round-trips)."""
    if value is None:
        return NONE
    if isinstance(value, float):
        return repr(value)
    return str(value)


def num(value: object) -> float | None:
    """A number a script stored (strings, as every number is kept), None for null."""
    if value is None or value == "" or value == NONE:
        return None
    if isinstance(value, bytes):
        value = value.decode()
    return float(str(value))


def text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def unb64(data: str | None) -> bytes | None:
    return None if data is None else base64.b64decode(data)


def _tag(name: str) -> str:
    # Hosts and origins hold no braces once normalized; a hostile one must not move a
    # key to another slot than its siblings, so braces are escaped.
    return name.replace("{", "%7B").replace("}", "%7D")


def shared_host(host: str) -> str:
    """The host's lease shared by every crawl of the deployment (not under a crawl's
    prefix): ``trawl:hosts:{<host>}``, on the same shard as each crawl's host keys."""
    return f"trawl:hosts:{{{_tag(host)}}}"


@dataclass(frozen=True, slots=True)
class HostKeys:
    """The keys of one host (one hash tag: one shard)."""

    host: str  # the host hash: next_at, admitted, budget, priority, lease, counts
    urls: str  # hash fp -> URL record
    queue: str  # zset fp -> key (priority, lower first): the queued URLs
    waiting: str  # zset fp -> due: URLs backing off or waiting for a revisit
    fetches: str  # hash fp -> latest fetch record

    def undo(self, session: str) -> str:
        """hash fp -> record before ``session``'s first uncommitted change (and ``v:fp``)."""
        return f"{self.host}:undo:{session}"


class Keys:
    """The key names of one crawl."""

    def __init__(self, crawl: str, buckets: int = 16) -> None:
        if not crawl or any(c in crawl for c in "{}: \n"):
            raise ValueError(f"a crawl id is a non-empty word without braces or colons: {crawl!r}")
        if buckets < 1:
            raise ValueError("at least one schedule bucket")
        self.crawl = crawl
        self.buckets = buckets
        p = self.prefix = f"trawl:{crawl}:"
        g = f"{{{crawl}/g}}"
        self.meta = f"{p}{g}:meta"
        self.counters = f"{p}{g}:counters"
        self.counts = f"{p}{g}:counts"  # URLs per status, crawl-wide
        self.sessions = f"{p}{g}:sessions"  # zset session -> heartbeat deadline
        self.wake = f"{p}{g}:wake"  # list: tokens that wake idle workers (work is waiting)
        self.rule_hosts = f"{p}{g}:rulehosts"  # set of hosts with learned URL rules
        pg = f"{{{crawl}/p}}"
        self.pages = f"{p}{pg}:pages"  # hash content hash -> page record
        self.page_order = f"{p}{pg}:order"  # zset content hash -> storage order
        self.page_seq = f"{p}{pg}:seq"
        self.unindexed = f"{p}{pg}:unindexed"  # zset content hash -> storage order
        self.duplicates = f"{p}{pg}:dups"  # hash content hash -> duplicates seen
        self.page_claims = f"{p}{pg}:claims"  # hash content hash -> URL about to store it
        q = f"{{{crawl}/q}}"
        self.stream = f"{p}{q}:stream"
        self.stream_ids = f"{p}{q}:ids"  # hash seq -> stream entry id
        self.stream_seq = f"{p}{q}:seq"
        self.near = f"{p}{{{crawl}/n}}:near"  # list of founders

    def page_claims_of(self, session: str) -> str:
        """set of the content hashes ``session`` claimed since its last commit."""
        return f"{self.page_claims}:{session}"

    def host(self, host: str) -> HostKeys:
        base = f"{self.prefix}h:{{{_tag(host)}}}"
        return HostKeys(base, f"{base}:u", f"{base}:q", f"{base}:w", f"{base}:f")

    def bucket_of(self, host: str) -> int:
        return zlib.crc32(host.encode()) % self.buckets

    def _bucket(self, index: int, kind: str) -> str:
        return f"{self.prefix}b:{{{self.crawl}/b{index}}}:{kind}"

    def schedule(self, index: int) -> str:
        """zset host -> time it may be contacted (early, never late), hosts with work."""
        return self._bucket(index, "sched")

    def priorities(self, index: int) -> str:
        """hash host -> host order (its best queued key + its priority), for the hosts of
        ``schedule(index)``: which of the due hosts goes first."""
        return self._bucket(index, "prio")

    def waiting(self, index: int) -> str:
        """zset host -> earliest due of its waiting URLs (early, never late)."""
        return self._bucket(index, "wait")

    def leases(self, index: int) -> str:
        """zset host -> expiry of its lease."""
        return self._bucket(index, "lease")

    def hosts(self, index: int) -> str:
        """set of every host known."""
        return self._bucket(index, "hosts")

    def session(self, session: str) -> str:
        """set of hosts ``session`` holds a lease on or changed since its last commit."""
        return f"{self.prefix}s:{{{self.crawl}/s/{session}}}"

    def owner(self, session: str) -> str:
        """Who has ``session`` open now (SET NX, expiring; beside ``sessions``)."""
        return f"{self.sessions}:owner:{session}"

    def robots(self, host: str) -> str:
        return f"{self.prefix}r:{{{_tag(host)}}}"

    def origin_files(self, origin: str) -> str:
        return f"{self.prefix}o:{{{_tag(origin)}}}"

    def rules(self, host: str) -> str:
        """hash rule key -> ``<state>|<body>`` (and ``:n`` counts, ``:log`` rewrites)."""
        return f"{self.prefix}x:{{{_tag(host)}}}"
