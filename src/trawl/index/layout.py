"""An index split into shards: ``<index>/shards.json`` names how many, each shard is a
whole index of its own in ``<index>/shard-NN/`` (with its own lexicon).

A page goes to the shard its URL hashes to, so a refetch replaces the earlier copy in
the same shard. ``trawl index --shards N`` writes this layout; from then on every
writer of the index (a crawl, an index-role worker) follows it, and every searcher
searches the shards in parallel and merges them as one index (``search.py``,
``gather.py``). An index without ``shards.json`` is one shard: itself. Each shard
is in turn a series of volumes (below): ``index_parts`` lists what a searcher reads.
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


# -- volumes ----------------------------------------------------------------------------
# A whole index, and each shard, is a series of volumes: the directory itself is the
# first, and ``vol-0001``, ``vol-0002``... inside it the next. Only the last is
# written to; once it holds ``MemoryLimits.index_volume`` documents it is closed and
# the next begun (``writer.py``). tantivy merges segments only within an index, so a
# volume bounds the largest merge, and what a merge holds, whatever the crawl's size.
# A searcher searches every volume, as it searches shards, as one index.

VOLUME_PREFIX = "vol-"


def volume_dir(index_dir: Path, n: int) -> Path:
    """Volume ``n`` of ``index_dir`` (0: the directory itself)."""
    return index_dir if n == 0 else index_dir / f"{VOLUME_PREFIX}{n:04d}"


def volume_number(index_dir: Path, volume: Path) -> int:
    """The number of ``volume``, a volume of ``index_dir``."""
    return 0 if volume == index_dir else int(volume.name[len(VOLUME_PREFIX) :])


def volume_dirs(index_dir: Path) -> list[Path]:
    """The volumes of the index (or shard) in ``index_dir``, in order: itself first."""
    numbers: list[int] = []
    try:
        for entry in index_dir.iterdir():
            name = entry.name
            if name.startswith(VOLUME_PREFIX) and name[len(VOLUME_PREFIX) :].isdigit():
                n = int(name[len(VOLUME_PREFIX) :])
                if n > 0 and entry.is_dir():
                    numbers.append(n)
    except (FileNotFoundError, NotADirectoryError):
        pass
    return [index_dir, *(volume_dir(index_dir, n) for n in sorted(numbers))]


def index_parts(index_dir: Path) -> list[Path]:
    """Every index a searcher of ``index_dir`` reads: each shard's volumes."""
    return [v for shard in shard_dirs(index_dir) for v in volume_dirs(shard)]
