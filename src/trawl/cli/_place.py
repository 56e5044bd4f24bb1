"""Where a command finds its crawl: ``--data DIR``, or ``--redis URL [--crawl-id] [--blobs]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from trawl.storage.place import DEFAULT_CRAWL, CrawlPlace


def add_place_arguments(p: argparse.ArgumentParser, *, data_help: str) -> None:
    p.add_argument("--data", type=Path, metavar="DIR", help=data_help)
    p.add_argument(
        "--redis", metavar="URL", help="the crawl is in Redis: redis://HOST:PORT, redis+cluster://"
    )
    p.add_argument("--crawl-id", default=DEFAULT_CRAWL, metavar="ID", help="its id in Redis")
    p.add_argument(
        "--blobs",
        metavar="URL",
        help="with --redis: where its WARC and text live (s3://BUCKET/PREFIX or a shared "
        "directory; default: where the crawl was submitted with)",
    )


def place_of(args: argparse.Namespace) -> CrawlPlace:
    """The crawl the options name; ``StorageError`` unless exactly one of --data, --redis."""
    return CrawlPlace(data=args.data, redis=args.redis, crawl=args.crawl_id, blobs=args.blobs)


def fleet_place(args: argparse.Namespace) -> CrawlPlace | None:
    """With ``--redis``: the fleet's crawl (``--data`` then names a local directory, where
    the index is); without: None (``--data`` is the crawl)."""
    if args.redis is None:
        return None
    return CrawlPlace(redis=args.redis, crawl=args.crawl_id, blobs=args.blobs)
