"""An index split into shards: ``<index>/shards.json`` names how many, each shard is a
whole index of its own in ``<index>/shard-NN/`` (with its own lexicon).

A page goes to the shard its URL hashes to, so a refetch replaces the earlier copy in
the same shard. ``trawl index --shards N`` writes this layout; from then on every
writer of the index (a crawl, an index-role worker) follows it, and every searcher
searches the shards in parallel and merges them as one index (``search.py``,
``gather.py``). An index without ``shards.json`` is one shard: itself.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import xxhash

SHARDS_FILE = "shards.json"
MAX_SHARDS = 64


def shard_count(index_dir: Path) -> int | None:
    """The number of shards of a split index, None for a whole one (or none at all)."""
    try:
        doc = orjson.loads((index_dir / SHARDS_FILE).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ValueError(f"{index_dir / SHARDS_FILE} is unreadable: {exc}") from exc
    count = doc.get("shards") if isinstance(doc, dict) else None
    if not isinstance(count, int) or not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"{index_dir / SHARDS_FILE} names no shard count from 1 to {MAX_SHARDS}")
    return count


def shard_dir(index_dir: Path, n: int) -> Path:
    return index_dir / f"shard-{n:02d}"


def shard_dirs(index_dir: Path) -> list[Path]:
    """The indexes ``index_dir`` is made of: its shards, or itself."""
    count = shard_count(index_dir)
    if count is None:
        return [index_dir]
    return [shard_dir(index_dir, n) for n in range(count)]


def shard_of(url: str, shards: int) -> int:
    """The shard of the page at ``url`` (stable across runs and machines)."""
    return int(xxhash.xxh64_intdigest(url.encode("utf-8", "surrogatepass")) % shards)


def write_layout(index_dir: Path, shards: int) -> None:
    """Make ``index_dir`` a split index of ``shards`` (the directory must be empty)."""
    if not 2 <= shards <= MAX_SHARDS:
        raise ValueError(f"shards must be from 2 to {MAX_SHARDS}")
    index_dir.mkdir(parents=True, exist_ok=True)
    for n in range(shards):
        shard_dir(index_dir, n).mkdir(exist_ok=True)
    tmp = index_dir / (SHARDS_FILE + ".tmp")
    tmp.write_bytes(orjson.dumps({"shards": shards}))
    tmp.replace(index_dir / SHARDS_FILE)
