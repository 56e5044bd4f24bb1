"""What holds a crawl's memory in Redis: every key of the crawl, by kind, with
``MEMORY USAGE`` (exact: ``SAMPLES 0``). A kind is the key's name with its crawl id,
hash tags and numbers taken out (``trawl:C:h:{T}:u``: every host's URL records)."""

from __future__ import annotations

import re
from typing import Any

import redis

_TAG = re.compile(r"\{[^}]*\}")
_NUMBER = re.compile(r":\d+$")


def kind(key: str, crawl: str) -> str:
    name = key.replace(f"trawl:{crawl}:", "trawl:C:", 1)
    return _NUMBER.sub(":N", _TAG.sub("{T}", name))


def holders(url: str, crawl: str) -> dict[str, tuple[int, int]]:
    """kind -> (keys, bytes) for every key of ``crawl``."""
    r = redis.Redis.from_url(url)
    out: dict[str, list[int]] = {}
    try:
        cursor: Any = 0
        while True:
            cursor, keys = r.scan(cursor, match=f"trawl:{crawl}:*", count=5000)
            if keys:
                pipe = r.pipeline(transaction=False)
                for k in keys:
                    pipe.memory_usage(k, samples=0)
                for k, used in zip(keys, pipe.execute(), strict=True):
                    name = k.decode() if isinstance(k, bytes) else str(k)
                    held = out.setdefault(kind(name, crawl), [0, 0])
                    held[0] += 1
                    held[1] += int(used or 0)
            if int(cursor) == 0:
                break
        return {k: (v[0], v[1]) for k, v in out.items()}
    finally:
        r.close()


def used_memory(url: str) -> int:
    r = redis.Redis.from_url(url)
    try:
        return int(r.info("memory")["used_memory"])
    finally:
        r.close()


def report(held: dict[str, tuple[int, int]], pages: int, used_memory: int) -> list[str]:
    total = sum(b for _k, b in held.values())
    lines = [
        f"  redis-server memory of the crawl: {total / 2**20:,.1f} MiB in its keys "
        f"({total / max(1, pages):,.0f} bytes a page; used_memory {used_memory / 2**20:,.1f} MiB)"
    ]
    for name, (keys, used) in sorted(held.items(), key=lambda kv: -kv[1][1])[:12]:
        lines.append(
            f"    {name:<44} {keys:>8,} keys {used / 2**20:>9,.1f} MiB "
            f"{used / max(1, pages):>7,.0f} bytes a page"
        )
    return lines
