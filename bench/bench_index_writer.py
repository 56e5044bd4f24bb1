"""The index writer alone: CPU and peak memory per page as batches and the index grow.

    .venv/bin/python bench/bench_index_writer.py --data DATA_DIR [--pages 100000]
        [--batches 180,500] [--batch-bytes 4M] [--heap 64M] [--volume 64000]

``DATA_DIR`` is a kept crawl (``bench/bench_memory.py --keep``, ``bench_crawl.py
--keep``): its stored pages' text records are read as the crawl's index role reads
them, and fed to the real ``Indexer`` in batches, in a process set up as a crawl
process is (``limit_arenas``: 2 malloc arenas, the fixed mmap threshold; the heap
trimmed after every batch; the index's mapped pages bounded by ``MappedPages``).
Past the crawl's pages, they come again under new URLs and content hashes, so that
the index grows to ``--pages`` (the same words again: postings grow as they would,
the term dictionary does not). ``--volume`` is ``MemoryLimits.index_volume``: the
documents an index volume holds (0: one volume, so merges grow with the index).

For each batch size (``--batch-bytes`` also bounds a batch by its text records, as
``MemoryLimits.index_batch`` does in a crawl: 0 for no bound): CPU-ms per page of the
whole process (tantivy's threads included), at each fifth of the run and overall, and
the peak anonymous RSS (sampled every 0.1 s): what the index's batches and merges
hold as the index grows. Figures are printed, never asserted. Not in ``make bench``:
it needs a kept crawl.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from trawl.config_load import parse_size
from trawl.index.layout import volume_dirs
from trawl.index.mapped import MappedPages
from trawl.index.writer import CommittedTexts, IndexDoc, Indexer, doc_from, within_bytes
from trawl.memory import MemoryLimits, limit_arenas, trim
from trawl.storage.base import PageRecord
from trawl.storage.open import open_blobs, open_store


def _anon_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) // 1024
    return 0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Peak:
    """The largest anonymous RSS seen since the last ``take``, sampled in a thread."""

    def __init__(self) -> None:
        self.mb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.mb = max(self.mb, _anon_mb())

    def take(self) -> int:
        mb, self.mb = max(self.mb, _anon_mb()), 0
        return mb

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _run(
    pages: list[PageRecord],
    texts: CommittedTexts,
    out: Path,
    total: int,
    batch: int,
    batch_bytes: int,
    heap: int,
    volume: int,
) -> str:
    shutil.rmtree(out, ignore_errors=True)
    indexer = Indexer(out, heap_bytes=heap, volume_docs=volume)
    mapped = MappedPages(out, limit=MemoryLimits().index_mapped)
    mapped.start()
    peak = _Peak()

    def page(k: int) -> PageRecord:
        p = pages[k % len(pages)]
        if k < len(pages):
            return p
        return dataclasses.replace(p, content_hash=f"{p.content_hash}-{k}", url=f"{p.url}?n={k}")

    def docs(taken: list[PageRecord]) -> Iterator[IndexDoc]:
        for p in taken:
            yield doc_from(p, texts.read(p.text))

    fifths: list[str] = []
    started, cpu0, done, at_mark, cpu_mark, batches = time.monotonic(), _cpu(), 0, 0, _cpu(), 0
    try:
        while done < total:
            taken = [page(k) for k in range(done, min(total, done + batch))]
            if batch_bytes:
                taken = within_bytes(taken, batch_bytes)
            indexer.write(docs(taken))
            done += len(taken)
            batches += 1
            trim()
            if done - at_mark >= total / 5 or done >= total:
                now = _cpu()
                fifths.append(
                    f"{done:,}: {(now - cpu_mark) / (done - at_mark) * 1000:.2f} ms, "
                    f"peak {peak.take()} MB"
                )
                at_mark, cpu_mark = done, now
        closing = _cpu()
        indexer.close()
        closed = _cpu()
    finally:
        peak.stop()
        mapped.stop()
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return (
        f"batch {batch} pages"
        + (f" / {batch_bytes / 2**20:g} MiB" if batch_bytes else "")
        + f" ({batches:,} batches): {(closed - cpu0) / total * 1000:.2f} CPU-ms a page "
        f"(closing {closed - closing:.1f} s), {time.monotonic() - started:.0f} s, "
        f"index {size / 1e6:,.0f} MB in {len(volume_dirs(out))} volumes\n"
        "    per fifth (CPU-ms a page, peak anonymous RSS): " + "; ".join(fifths)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, required=True, help="a kept crawl's data directory")
    ap.add_argument("--pages", type=int, default=0, help="pages to index (0: the crawl's)")
    ap.add_argument("--batches", default="180,500", help="pages a batch, each a run")
    ap.add_argument("--batch-bytes", default="4M", help="text records a batch (0: no bound)")
    ap.add_argument("--heap", default="64M", help="tantivy's indexing heap")
    ap.add_argument(
        "--volume", type=int, default=MemoryLimits().index_volume, help="documents a volume"
    )
    ap.add_argument("--out", type=Path, help="write the index here (default: a temp dir)")
    args = ap.parse_args(argv)
    limit_arenas()  # before tantivy starts a thread, as the crawl does
    store = open_store(args.data)
    try:
        pages = list(store.pages.pages())
    finally:
        store.close()
    if not pages:
        print(f"{args.data} holds no pages", file=sys.stderr)
        return 2
    texts = CommittedTexts(open_blobs(args.data))
    total = args.pages or len(pages)
    work = Path(tempfile.mkdtemp(prefix="trawl-bench-index-", dir=args.out))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{len(pages):,} pages of {args.data}, {total:,} indexed a run; load {load}")
    try:
        for batch in (int(b) for b in args.batches.split(",")):
            line = _run(
                pages,
                texts,
                work / "index",
                total,
                batch,
                parse_size(args.batch_bytes),
                parse_size(args.heap),
                args.volume,
            )
            print(line, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
