"""What closed index volumes cost a batch of new pages: their filters against a query each.

    .venv/bin/python bench/bench_index_retire.py [--volumes 6] [--volume 10000]
        [--batch 235] [--batches 40]

Writes ``--volumes`` + 1 volumes of ``--volume`` small documents with the real
``Indexer`` (a batch is ``--batch`` pages, a crawl's 4 MiB of text records), then
times ``ClosedVolumes.retire`` for ``--batches`` batches of new pages (URLs and content
hashes no volume holds, what a crawl mostly writes): first with each volume's terms
file (``index/terms.py``: a Bloom filter, then a query of the terms it may hold), then
with the files removed (a query of every term, as for a volume an older trawl wrote).
Prints CPU-us a page per closed volume, and what the filters hold. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from trawl.index.layout import volume_dirs
from trawl.index.terms import TERMS_FILE
from trawl.index.volumes import ClosedVolumes
from trawl.index.writer import IndexDoc, Indexer
from trawl.models import Location


def _doc(url: str, key: str) -> IndexDoc:
    return IndexDoc(
        key=key,
        url=url,
        host=url.split("/")[2],
        title="a title",
        text=f"some words of {url}",
        language="en",
        fetched_at=1.7e9,
        cluster=key,
        where=Location("", 0, 0),
    )


def _batch(tag: str, n: int) -> tuple[list[str], list[str]]:
    urls = [f"https://h{i % 500}.example/{tag}/{i}" for i in range(n)]
    return urls, [f"{tag}-{i:058x}" for i in range(n)]


def _retire_us(directories: list[Path], args: argparse.Namespace) -> tuple[float, int]:
    closed = ClosedVolumes(directories)
    held = sum(v.filter.nbytes for v in closed.volumes if v.filter is not None)
    started = time.process_time()
    for b in range(args.batches):
        closed.retire(*_batch(f"new{b}", args.batch))
    spent = time.process_time() - started
    closed.close()
    return 1e6 * spent / (args.batches * args.batch * len(directories)), held


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--volumes", type=int, default=6, help="closed volumes")
    ap.add_argument("--volume", type=int, default=10_000, help="documents a volume")
    ap.add_argument("--batch", type=int, default=235, help="pages a batch")
    ap.add_argument("--batches", type=int, default=40, help="batches of new pages timed")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="trawl-bench-retire-"))
    try:
        index_dir = work / "index"
        indexer = Indexer(index_dir, volume_docs=args.volume)
        try:
            b = 0
            while len(volume_dirs(index_dir)) <= args.volumes:
                urls, keys = _batch(f"b{b}", args.batch)
                indexer.write(_doc(u, k) for u, k in zip(urls, keys, strict=True))
                b += 1
        finally:
            indexer.close()
        closed = volume_dirs(index_dir)[:-1]
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{len(closed)} closed volumes of {args.volume:,} documents; load {load}")
        with_filter, held = _retire_us(closed, args)
        for directory in closed:
            (directory / TERMS_FILE).unlink()
        without, _ = _retire_us(closed, args)
        print(f"  with terms filters: {with_filter:.2f} CPU-us a page per closed volume")
        print(f"  a query of every term: {without:.2f} CPU-us a page per closed volume")
        each = held / len(closed) / 1e3
        print(f"  the filters hold {held / 1e6:.2f} MB ({each:.0f} KB a volume)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
